from __future__ import annotations

from passbench.stages.sanitize.fences import find_blocks


def test_blocks_with_and_without_language() -> None:
    text = "a\n```python\nx = 1\n```\nb\n```\ny = 2\n```\n```bash\nls\n```\n"
    blocks = find_blocks(text)
    assert [(b.language, b.code, b.closed) for b in blocks] == [
        ("python", "x = 1", True),
        ("", "y = 2", True),
        ("bash", "ls", True),
    ]
    assert [b.is_python for b in blocks] == [True, True, False]


def test_language_spellings() -> None:
    text = "```Python3\na\n```\n``` py\nb\n```\n```{python}\nc\n```\n~~~python title=x\nd\n~~~\n"
    assert [b.language for b in find_blocks(text)] == ["python3", "py", "python", "python"]
    assert all(b.is_python for b in find_blocks(text))


def test_an_unclosed_block_runs_to_the_end() -> None:
    blocks = find_blocks("Here:\n```python\ndef f():\n    return 1")
    assert len(blocks) == 1
    assert blocks[0].code == "def f():\n    return 1"
    assert not blocks[0].closed


def test_indented_fence_loses_its_indentation() -> None:
    blocks = find_blocks("1. Code:\n\n   ```python\n   def f():\n       return 1\n   ```\n")
    assert blocks[0].code == "def f():\n    return 1"


def test_longer_fence_holds_shorter_fences() -> None:
    blocks = find_blocks("````markdown\n```python\nx\n```\n````\n")
    assert blocks[0].code == "```python\nx\n```"


def test_fence_inside_a_docstring_does_not_close_a_python_block() -> None:
    code = 'def f():\n    """Input looks like:\n    ```\n    a - b\n    ```\n    """\n    return 1'
    blocks = find_blocks(f"```python\n{code}\n```\nafter\n")
    assert len(blocks) == 1
    assert blocks[0].code == code


def test_fooled_quote_tracking_falls_back_to_the_first_fence() -> None:
    # An unbalanced triple quote would swallow the rest of the answer; the block closes at the
    # first fence line after all, and later blocks are still found.
    text = '```python\nx = """\n```\nprose\n```python\ny = 2\n```\n'
    blocks = find_blocks(text)
    assert [b.code for b in blocks] == ['x = """', "y = 2"]


def test_inline_triple_backticks_are_not_blocks() -> None:
    assert find_blocks("use ```x``` inline") == []


def test_a_block_opened_before_the_last_was_closed() -> None:
    text = "```python\nx = 1\n```python\ny = 2\n```\n"
    assert [b.code for b in find_blocks(text)] == ["x = 1", "y = 2"]
