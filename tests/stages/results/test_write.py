"""Writing result files: official layout, passbench's block first with the schema version,
entries as data (new fields pass through), atomic writes, and read back by `load_results`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from passbench.core.records import (
    RESULT_SCHEMA_VERSION,
    ErrorCategory,
    ExecResult,
    Isolation,
    Sample,
)
from passbench.core.version import __version__
from passbench.stages.results import (
    ground_truth_entry,
    load_results,
    model_name,
    result_paths,
    sample_entry,
    write_eval_results,
    write_ground_truth,
    write_pass_at_k,
)


def verdict(task_id: str, status: str = "pass") -> ExecResult:
    failed = status != "pass"
    return ExecResult(
        key=f"{task_id}#x",
        task_id=task_id,
        status=status,  # type: ignore[arg-type]
        category=ErrorCategory.ASSERTION_FAILED if failed else None,
        details={"test_a": "Traceback ..."} if failed else {},
        duration_s=0.123456,
        wall_s=0.2,
        isolation=Isolation.BUBBLEWRAP,
        reason="AssertionError" if failed else "",
        tests_run=3,
    )


def entries() -> list[dict[str, object]]:
    samples = [
        (Sample("BigCodeBench/10", solution="b", sample_index=1), "fail"),
        (Sample("BigCodeBench/2", solution="c", sample_index=0), "pass"),
        (Sample("BigCodeBench/10", solution="a", sample_index=0, raw_solution="raw"), "pass"),
    ]
    return [
        sample_entry(sample, str(sample.solution), verdict(sample.task_id, status))
        for sample, status in samples
    ]


def test_eval_results_round_trip_in_task_and_sample_order(tmp_path: Path) -> None:
    eval_path, pass_path = result_paths(tmp_path, "m--bigcodebench-complete--x")
    write_eval_results(eval_path, entries(), {"benchmark": "bigcodebench"}, date="2026-01-01")
    document = json.loads(eval_path.read_text())
    assert list(document) == ["date", "eval", "passbench"]
    assert list(document["eval"]) == ["BigCodeBench/2", "BigCodeBench/10"]
    first = document["eval"]["BigCodeBench/10"][0]
    assert list(first)[:4] == ["task_id", "solution", "status", "details"]  # official first
    assert [e["solution"] for e in document["eval"]["BigCodeBench/10"]] == ["a", "b"]
    assert first["raw_solution"] == "raw" and first["duration_s"] == 0.1235
    block = document["passbench"]
    assert list(block)[:3] == ["schema_version", "passbench_version", "benchmark"]
    assert (block["schema_version"], block["passbench_version"]) == (
        RESULT_SCHEMA_VERSION,
        __version__,
    )

    write_pass_at_k(
        pass_path,
        {"pass@1": 0.75},
        {"benchmark": "bigcodebench"},
        model=model_name("m--bigcodebench-complete--x"),
        split="complete",
        subset="full",
        calibrated=True,
        gt_pass_rate=1.0,
        failed_tasks=[],
        n_tasks=2,
        n_samples=3,
    )
    run = load_results(eval_path)
    assert run.name == "m" and run.gt_pass_rate == 1.0 and run.origin == "passbench"
    assert run.counts() == {"BigCodeBench/2": (1, 1), "BigCodeBench/10": (2, 1)}
    failing = run.tasks["BigCodeBench/10"][1]
    assert failing.sample_index == 1 and failing.category is ErrorCategory.ASSERTION_FAILED
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([eval_path.name, pass_path.name])


def test_new_fields_need_no_change_to_the_writer(tmp_path: Path) -> None:
    """HumanEval+ adds per-sample statuses and failing inputs, and a top-level hash."""
    extended = [
        {**entry, "base_status": "pass", "plus_status": "fail", "plus_fail_tests": [[1, 2]]}
        for entry in entries()
    ]
    path = tmp_path / "x_eval_results.json"
    write_eval_results(path, extended, {}, extra={"hash": "abc123"})
    document = json.loads(path.read_text())
    assert document["hash"] == "abc123"
    entry = document["eval"]["BigCodeBench/2"][0]
    assert entry["plus_status"] == "fail" and entry["plus_fail_tests"] == [[1, 2]]
    assert load_results(path).counts()["BigCodeBench/10"] == (2, 1)


def test_an_entry_without_the_official_fields_is_a_bug(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="lacks solution, details"):
        write_eval_results(tmp_path / "x.json", [{"task_id": "T/1", "status": "pass"}], {})
    assert not list(tmp_path.iterdir())


def test_ground_truth_file(tmp_path: Path) -> None:
    tasks = {
        "HumanEval/10": ground_truth_entry(verdict("HumanEval/10", "fail")),
        "HumanEval/9": ground_truth_entry(verdict("HumanEval/9")),
    }
    path = write_ground_truth(tmp_path / "ground_truth.json", tasks, {"benchmark": "humaneval"})
    document = json.loads(path.read_text())
    assert document["gt_pass_rate"] == 0.5 and document["failed_tasks"] == ["HumanEval/10"]
    assert list(document["tasks"]) == ["HumanEval/9", "HumanEval/10"]
    assert document["passbench"]["schema_version"] == RESULT_SCHEMA_VERSION
    run = load_results(path)
    assert run.gt_failed_tasks == ("HumanEval/10",) and run.tasks["HumanEval/10"][0].reason
