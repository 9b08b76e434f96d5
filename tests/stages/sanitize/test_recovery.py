"""Canonical BigCodeBench programs dressed up as chat answers come back out intact.

See recovery.py for what "intact" means; run it as a script for the rate per answer style.
"""

from __future__ import annotations

import pytest

from passbench.core.errors import UnknownNameError
from passbench.stages.sanitize import sanitize
from passbench.stages.sanitize.wrappers import WRAPPERS, wrap_answer

from .recovery import canonical_tasks, data_dir, humaneval_tasks, measure, recovered


@pytest.fixture(autouse=True)
def _benchmark_data() -> None:
    """Missing data fails the run (as tests/conftest.py's data_dir does), never skips it."""
    if not (data_dir() / "bigcodebench").is_dir():
        pytest.fail(f"benchmark data not found in {data_dir()}; set PASSBENCH_DATA_DIR")


def test_every_style_on_a_sample_of_tasks() -> None:
    failures = {}
    for task in list(canonical_tasks())[::25]:
        for style in WRAPPERS:
            answer = wrap_answer(
                task.program, style, entry_point=task.entry_point, prompt=task.complete_prompt
            )
            result = sanitize(answer, task.entry_point, prompt=task.complete_prompt)
            problem = recovered(result.code, task.program, task.entry_point)
            if problem or not result.ok:
                failures[(task.task_id, style)] = problem or result.reason
    assert failures == {}


@pytest.mark.slow
def test_every_style_on_all_1140_tasks() -> None:
    # With the prompt given, as `passbench sanitize` calls it.
    failures = measure()
    assert {style: failed for style, failed in failures.items() if failed} == {}


@pytest.mark.slow
def test_every_style_without_the_prompt() -> None:
    failures = measure(with_prompt=False, tasks=list(canonical_tasks())[1::4])
    assert {style: failed for style, failed in failures.items() if failed} == {}


def test_every_style_on_humaneval_plus() -> None:
    failures = measure(tasks=list(humaneval_tasks())[::3])
    assert {style: failed for style, failed in failures.items() if failed} == {}


def test_the_check_notices_a_wrong_recovery() -> None:
    task = next(canonical_tasks())
    assert recovered(task.program, task.program, task.entry_point) == ""
    wrong = task.program.replace("return", "return None or", 1)
    assert recovered(wrong, task.program, task.entry_point) == "entry point differs or missing"
    no_imports = "\n".join(
        line for line in task.program.split("\n") if not line.startswith(("import", "from"))
    )
    assert recovered(no_imports, task.program, task.entry_point).startswith("imports differ")


def test_unknown_style_is_refused() -> None:
    with pytest.raises(UnknownNameError):
        wrap_answer("x = 1", "nope", entry_point="f")
