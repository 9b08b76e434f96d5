from __future__ import annotations

from passbench.stages.sanitize import syncheck


def test_valid_code() -> None:
    assert syncheck("def f():\n    return 1\n") == (True, "")


def test_invalid_code_names_line_and_column() -> None:
    ok, message = syncheck("x = 1\ndef f(:\n    pass\n")
    assert not ok
    assert message.startswith("line 2, column ")
    assert "invalid syntax" in message


def test_empty_code() -> None:
    assert syncheck("   \n") == (False, "empty solution")


def test_null_bytes_and_deep_nesting_are_reported_not_raised() -> None:
    assert not syncheck("x = 1\x00")[0]
    assert not syncheck("(" * 100_000 + ")" * 100_000)[0]


def test_parse_only_like_the_official_check() -> None:
    # `return` outside a function is a compile error, not a parse error: the official
    # syncheck (ast.parse) accepts it, and so does this one.
    assert syncheck("return 1\n") == (True, "")
