"""perf/polyglot_speed.py's naive baseline (perf/_naive_polyglot.py): its commands are the ones
passbench's test scripts run, and it gives the reference's verdict on one small exercise per
language, step by step, in a fresh bubblewrap sandbox per step. C++ runs its stub (which fails
at the test file's compile, seconds in): its reference would compile Catch2's main, ~20 s of
CPU, which the speed script measures instead."""

from __future__ import annotations

import json
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from tests.datasets import DATA_DIR

from passbench.core.records import Task
from passbench.stages.benchmarks import DataSettings, get_benchmark
from passbench.stages.benchmarks.aider_polyglot.toolchains import TRACKS

sys.path.insert(0, str(Path(__file__).parents[2] / "perf"))

from _naive_polyglot import run_exercise, steps

#: a quick exercise per language, and whether its reference (else its stub) runs
SMALL = {
    "python": ("proverb", True),
    "go": ("hexadecimal", True),
    "rust": ("luhn-from", True),
    "javascript": ("binary", True),
    "java": ("series", True),
    "cpp": ("all-your-base", False),
}


@pytest.fixture(scope="module")
def tasks() -> dict[str, Task]:
    if not (DATA_DIR / "aider-polyglot").is_dir():
        pytest.fail(f"aider-polyglot data not found in {DATA_DIR}; set PASSBENCH_DATA_DIR")
    loaded = get_benchmark("aider-polyglot").load(data=DataSettings(data_dir=DATA_DIR))
    wanted = {(language, name) for language, (name, _) in SMALL.items()}
    return {
        str(t.metadata["language"]): t
        for t in loaded.tasks
        if (t.metadata["language"], t.metadata["exercise"]) in wanted
    }


def test_the_naive_commands_are_passbenchs(tasks: dict[str, Task]) -> None:
    for language, task in tasks.items():
        exercise = str(task.metadata["exercise"])
        script = " ".join(TRACKS[language].test_script(exercise).split())
        for step in steps(language, exercise):
            if step.command == f"make {exercise}":  # C++'s build alone, before `make`
                continue
            assert " ".join(step.command.split()) in script, (language, step.command)


@pytest.mark.slow
@pytest.mark.bwrap
def test_one_small_exercise_per_language_the_naive_way(tasks: dict[str, Task]) -> None:
    from tests.stages.sandbox.helpers import bwrap_usable

    if not bwrap_usable():
        pytest.skip("bubblewrap cannot run here")
    bench = get_benchmark("aider-polyglot")

    def run(language: str) -> tuple[str, bool, object]:
        task = tasks[language]
        reference = SMALL[language][1]
        code = (
            bench.canonical_code(task)
            if reference
            else json.dumps({"files": task.metadata["stubs"]})
        )
        return language, reference, run_exercise(task, code, sandbox="bwrap")

    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(run, SMALL))
    for language, reference, result in results:
        assert result.passed is reference, (language, result.steps[-1].output_tail)
        assert all(step.seconds > 0 for step in result.steps)
        if language == "java":
            assert [s.kind for s in result.steps] == ["build", "test"]
        if language == "cpp":  # configured, then the build stops at the stub's compile
            assert [s.exit_code == 0 for s in result.steps] == [True, False]
            assert "error" in result.steps[-1].output_tail
