from __future__ import annotations

import ast

from passbench.stages.sanitize.units import split_units


def kinds(text: str) -> list[str]:
    return [type(unit.node).__name__ for unit in split_units(text, 0, 0)]


def sources(text: str) -> list[str]:
    return [unit.source for unit in split_units(text, 0, 0)]


def test_code_that_parses_is_cut_into_its_statements() -> None:
    text = "import os\n\n@deco\ndef f():\n    return 1\nx = 2; y = 3\n"
    assert sources(text) == ["import os", "@deco\ndef f():\n    return 1", "x = 2", "y = 3"]


def test_prose_lines_between_statements_are_dropped() -> None:
    text = "Here's the code:\nimport os\nThis helper does it.\ndef f():\n    return os.sep\nDone!"
    assert kinds(text) == ["Import", "FunctionDef"]


def test_truncated_last_function_is_dropped_and_the_rest_kept() -> None:
    text = "import os\n\ndef f():\n    return 1\n\ndef g():\n    x = (1,\n"
    assert sources(text) == ["import os", "def f():\n    return 1"]


def test_docstring_lines_at_column_zero_stay_in_their_function() -> None:
    text = (
        'Intro text.\ndef f():\n    """\nDoc at column 0.\n\nMore doc.\n"""\n    return 1\nOutro.'
    )
    (unit,) = split_units(text, 0, 0)
    assert isinstance(unit.node, ast.FunctionDef)
    assert unit.source.endswith("return 1")


def test_comment_at_column_zero_does_not_split_a_function() -> None:
    text = "Intro.\ndef f():\n    x = 1\n# a comment\n    return x\n"
    assert sources(text) == ["def f():\n    x = 1\n# a comment\n    return x"]


def test_else_and_except_continue_the_statement_before() -> None:
    text = (
        "Intro.\ntry:\n    import numpy\nexcept ImportError:\n    numpy = None\n"
        "if x:\n    a = 1\nelse:\n    a = 2\n"
    )
    assert kinds(text) == ["Try", "If"]


def test_bracket_spanning_lines_at_column_zero() -> None:
    text = "Intro.\nVALUES = [\n1,\n2,\n]\nOutro."
    assert sources(text) == ["VALUES = [\n1,\n2,\n]"]


def test_code_indented_under_prose() -> None:
    text = "Here it is:\n    def f():\n        return 1\n"
    (unit,) = split_units(text, 0, 0)
    assert unit.source == "def f():\n    return 1"


def test_starter_code_without_a_body_is_dropped() -> None:
    text = "Start with:\nimport os\ndef task_func(path):\nThen fill it in."
    assert kinds(text) == ["Import"]


def test_non_ascii_text_is_cut_at_the_right_characters() -> None:
    text = "s = 'héllo'; t = 'wörld'\nprose ✓\n"
    assert sources(text) == ["s = 'héllo'", "t = 'wörld'"]


def test_null_bytes_and_deep_nesting_do_not_raise() -> None:
    assert sources("x = 1\n\x00\n") == ["x = 1"]
    assert split_units("(" * 10_000, 0, 0) == []


def test_positions_and_regions() -> None:
    units = split_units("a = 1\nb = 2\n", 3, 10)
    assert [(u.region, u.position) for u in units] == [(3, 10), (3, 11)]
