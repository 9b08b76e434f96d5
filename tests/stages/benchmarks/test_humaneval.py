"""HumanEval, HumanEval+ and HumanEval with its original tests: data, phases and programs.

Verdicts through the sandbox and the judge are in tests/stages/differential/test_evaluation.py."""

from __future__ import annotations

import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from passbench.core.records import Program
from passbench.stages.benchmarks import DataSettings, DifferentialBenchmark, get_benchmark
from passbench.stages.benchmarks.humaneval import HumanEval, HumanEvalOpenAI, HumanEvalPlus
from passbench.stages.sandbox.inside import _values


def run_script(program: Program, timeout_s: float = 120) -> subprocess.CompletedProcess[str]:
    """Run a "script"-style program with plain Python: it passes when it exits with 0."""
    return subprocess.run(
        [sys.executable, "-"],
        input=program.source,
        capture_output=True,
        text=True,
        timeout=timeout_s,
    )


@pytest.fixture(scope="module")
def shared_data(data_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> DataSettings:
    return DataSettings(data_dir=data_dir, cache_dir=tmp_path_factory.mktemp("c"), download=False)


def test_load(shared_data: DataSettings) -> None:
    base = HumanEval().load(data=shared_data)
    plus = HumanEvalPlus().load(data=shared_data)
    original = HumanEvalOpenAI().load(data=shared_data)
    assert (base.version, len(base)) == ("v0.1.10", 164)
    assert (plus.version, len(plus)) == ("v0.1.10", 164)
    assert (original.version, len(original)) == ("v1", 164)
    # EvalPlus's `humaneval` is HumanEval+'s data judged on its base inputs
    assert base.sha256 == plus.sha256 and base.source.path.name == "HumanEvalPlus.jsonl.gz"
    assert original.source.path.name == "HumanEval.jsonl.gz"
    assert [t.task_id for t in base] == [t.task_id for t in original]
    assert {t.benchmark for t in base} == {"humaneval"}
    task = plus.get("HumanEval/32")
    assert task.metadata["atol"] == 1e-4
    assert task.libs == () and task.prompts.keys() == {"complete"}


def test_evalplus_hash_is_the_md5_of_the_uncompressed_data(shared_data: DataSettings) -> None:
    loaded = HumanEvalPlus().load(data=shared_data)
    assert loaded.source.md5_of_text() == "fe585eb4df8c88d844eeb463ea4d0302"


def test_phases(shared_data: DataSettings) -> None:
    base, plus = HumanEval(), HumanEvalPlus()
    assert isinstance(plus, DifferentialBenchmark) and isinstance(base, DifferentialBenchmark)
    assert not isinstance(get_benchmark("humaneval-openai"), DifferentialBenchmark)
    task = plus.load(data=shared_data).get("HumanEval/32")
    phases = plus.phases(task)
    assert [p.name for p in phases] == ["base", "plus"]
    assert [p.name for p in base.phases(task)] == ["base"]
    assert (len(phases[0].inputs), len(phases[1].inputs)) == (100, 788)
    assert all(p.atol == 1e-4 and p.oracle is not None for p in phases)
    decoded = _values.from_tagged(json.loads(phases[1].inputs_json))
    assert decoded == list(phases[1].inputs) == task.metadata["plus_input"]
    assert plus.phases(task) is phases  # encoded once


def test_dict_inputs_travel_as_dicts(shared_data: DataSettings) -> None:
    plus = HumanEvalPlus()
    task = plus.load(data=shared_data).get("HumanEval/95")  # check_dict_case(dict)
    decoded = _values.from_tagged(json.loads(plus.phases(task)[0].inputs_json))
    assert isinstance(decoded[0][0], dict)


def test_code_is_built_as_evalplus_builds_it(shared_data: DataSettings) -> None:
    bench = HumanEvalPlus()
    task = bench.load(data=shared_data).get("HumanEval/0")
    solution = bench.solution_from_completion(task, "    return True\n")
    assert solution == task.prompts["complete"] + "    return True\n"
    assert bench.calibrated_code(task, solution) == solution
    assert bench.canonical_code(task) == task.prompts["complete"] + task.canonical_solution


def test_openai_program_is_the_official_check_program(shared_data: DataSettings) -> None:
    bench = HumanEvalOpenAI()
    task = bench.load(data=shared_data).get("HumanEval/0")
    solution = bench.solution_from_completion(task, "    return True\n")
    program = bench.program(task, solution, key="HumanEval/0#0", timeout_s=3)
    assert program.source == solution + "\n" + task.test + "\ncheck(has_close_elements)"
    assert program.style == "script" and program.preload == ()


def test_every_openai_canonical_solution_passes(shared_data: DataSettings) -> None:
    bench = HumanEvalOpenAI()
    loaded = bench.load(data=shared_data)
    programs = [
        bench.program(task, bench.canonical_code(task), key=task.task_id, timeout_s=3)
        for task in loaded
    ]
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(run_script, programs))
    failed = [p.task_id for p, r in zip(programs, results, strict=True) if r.returncode != 0]
    assert failed == []


def test_differential_program_feeds_every_input(shared_data: DataSettings) -> None:
    bench = HumanEvalPlus()
    task = bench.load(data=shared_data).get("HumanEval/0")
    program = bench.program(task, "CODE", key="k", timeout_s=2)
    assert program.style == "io" and program.source == "CODE" and program.io is not None
    count = sum(len(p.inputs) for p in bench.phases(task))
    assert len(program.io.time_limits) == count and set(program.io.time_limits) == {2}
