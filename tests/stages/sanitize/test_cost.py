"""The sanitizer's cost grows linearly with the answer: counted in bytes handed to the parser
(the dominant cost), never timed. Each pathological 1 MB answer would make a sanitizer that
retries growing spans of lines (the official `code_extract`) parse terabytes."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from passbench.stages.sanitize import sanitize
from passbench.stages.sanitize import units as units_module

MB = 1_000_000
# Most shapes at a quarter of the size: the bound is per byte, and the suite stays quick.
QUARTER = MB // 4
# Each reading (fenced, unfenced, thinking) parses each chunk a bounded number of times.
BOUND = 12

SOLUTION = "def task_func(x):\n    return x\n"

ANSWERS = {
    "prose lines": "This is a line of prose, it's long enough to matter.\n" * (MB // 53),
    "one huge block": "```python\n" + SOLUTION + "y = 1\n" * (MB // 6) + "```\n",
    "fence openers": "```python\n" * (MB // 10),
    "think openers": "<think>" * (QUARTER // 7),
    "think closers": "</think>" * (QUARTER // 8),
    "one long line": "x" * QUARTER,
    "open brackets": "(" * QUARTER,
    "triple quotes": '"""\n' * (QUARTER // 4),
    "lone quotes": "'\n" * (QUARTER // 2),
    "decorators": "@d\n" * (QUARTER // 3),
    "many small blocks": ("Text:\n```python\n" + SOLUTION + "```\n") * (QUARTER // 50),
    "headers without bodies": "def f(:\n" * (QUARTER // 8),
    "string openers then lines": 'x = """\n' + "line\n" * (QUARTER // 5),
    "indented under prose": "prose\n    x = (\n" * (QUARTER // 16),
    "else lines": "else:\n" * (QUARTER // 6),
}


@pytest.fixture
def parsed_bytes(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    counter = [0]
    real = units_module.parse

    def counting(text: str):  # type: ignore[no-untyped-def]
        counter[0] += len(text)
        return real(text)

    monkeypatch.setattr(units_module, "parse", counting)
    yield counter


@pytest.mark.slow
@pytest.mark.parametrize("name", list(ANSWERS))
def test_parsing_work_is_linear_in_the_answer(name: str, parsed_bytes: list[int]) -> None:
    answer = ANSWERS[name]
    sanitize(answer, "task_func", prompt="def task_func(x):\n")
    assert parsed_bytes[0] <= BOUND * len(answer), f"{parsed_bytes[0] / len(answer):.1f}x"


def test_counter_sees_the_parsing(parsed_bytes: list[int]) -> None:
    answer = "prose\n" + SOLUTION
    assert sanitize(answer, "task_func").ok
    assert parsed_bytes[0] >= len(SOLUTION)
