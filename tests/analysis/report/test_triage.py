"""Failure triage (model / extraction / environment / harness) and the extraction loss, read
from a result file in the documented format, as `passbench inspect` reports them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from passbench.analysis.report.analysis import Options, inspect_run
from passbench.analysis.report.triage import lost_code
from passbench.apps.cli import cli
from passbench.stages.benchmarks import get_benchmark
from passbench.stages.results import load_results
from passbench.stages.results.taskinfo import TaskCatalog
from passbench.stages.results.write import write_eval_results, write_pass_at_k
from passbench.stages.sanitize import sanitize
from passbench.stages.sanitize.wrappers import WRAPPERS, wrap_answer

FAST = Options(ks=(1,), resamples=50)
STEM = "m--bigcodebench-complete--openai-0-1-sanitized_calibrated"


def _entry(task_id: str, status: str = "fail", **fields: Any) -> dict[str, Any]:
    return {"task_id": task_id, "solution": "", "status": status, "details": {}, **fields}


def _sklearn_task(catalog: TaskCatalog) -> str:
    return next(t for t, task in catalog.tasks.items() if "sklearn" in task.libs)


def _write_run(folder: Path, catalog: TaskCatalog) -> Path:
    good = "def task_func(x):\n    return x * 2\n"
    entries = [
        # tests failed on the code the model gave: the model's
        _entry(
            "BigCodeBench/1",
            solution=good,
            raw_solution=f"Here:\n```python\n{good}```",
            category="assertion_failed",
            reason="test_a: AssertionError: 1 != 2",
        ),
        # cut by the token limit: no answer, whatever the tests said of the stump
        _entry(
            "BigCodeBench/2",
            solution="def task_func(",
            raw_solution="```python\ndef task_func(",
            category="syntax_error",
            reason="does not compile: SyntaxError",
            truncated="token limit (finish reason 'length')",
            verdict="no answer (truncated)",
        ),
        # the answer held a whole definition; the program run holds a stub: extraction
        _entry(
            "BigCodeBench/3",
            solution="def task_func(x):\n    pass\n",
            raw_solution=f"Sure.\n\n```python\n{good}```\n",
            category="assertion_failed",
            reason="test_a: AssertionError: None != 2",
        ),
        # the task's ground truth fails here for want of NLTK data: environment
        _entry("BigCodeBench/4", category="exception", reason="test_a: LookupError: punkt"),
        # passbench's sandbox worker died: harness
        _entry(
            "BigCodeBench/5",
            status="timeout",
            category="killed",
            reason="the sandbox worker died while running this sample",
        ),
        # a task's own library is missing here: environment
        _entry(
            _sklearn_task(catalog),
            category="import_error",
            reason="failed while loading: ModuleNotFoundError: No module named 'sklearn'",
        ),
        # cut short but the program was whole: it passes, as officially
        _entry("BigCodeBench/6", status="pass", truncated="token limit (finish reason 'length')"),
        # code only in the thinking, no answer after it: no code, not an extraction loss
        _entry(
            "BigCodeBench/7",
            solution="",
            raw_solution=f"<think>\n```python\n{good}```\n</think>\nI cannot do this.",
            sanitize_error="no definition of 'task_func' found",
            category="syntax_error",
            reason="no code",
        ),
    ]
    meta = {"benchmark": "bigcodebench", "dataset_version": "v0.1.4", "split": "complete"}
    path = folder / f"{STEM}_eval_results.json"
    write_eval_results(path, entries, meta)
    write_pass_at_k(
        folder / f"{STEM}_pass_at_k.json",
        {"pass@1": 1 / 8},
        meta,
        model="m",
        split="complete",
        subset="full",
        calibrated=True,
        gt_pass_rate=0.99,
        failed_tasks=["BigCodeBench/4"],
        n_tasks=8,
        n_samples=8,
        extra={
            "gt_failures": {
                "BigCodeBench/4": {
                    "category": "exception",
                    "reason": "LookupError: Resource punkt not found.",
                }
            }
        },
    )
    return path


def test_every_failure_gets_its_cause(tmp_path: Path, catalog: TaskCatalog) -> None:
    inspection = inspect_run(load_results(_write_run(tmp_path, catalog)), catalog, FAST)
    result = inspection.triage
    assert result is not None
    causes = {(g.cls, g.kind): list(g.tasks) for g in result.groups}
    assert causes == {
        ("model", "wrong answer"): ["BigCodeBench/1"],
        ("model", "no answer (truncated)"): ["BigCodeBench/2"],
        ("model", "no code in the answer"): ["BigCodeBench/7"],
        ("extraction", "code not recovered"): ["BigCodeBench/3"],
        ("environment", "NLTK data 'punkt'"): ["BigCodeBench/4"],
        ("environment", "library missing: sklearn"): [_sklearn_task(catalog)],
        ("harness", "sandbox worker died"): ["BigCodeBench/5"],
    }
    assert dict(result.by_class) == {"model": 3, "extraction": 1, "environment": 2, "harness": 1}
    assert result.extraction_loss == 1 and result.extraction_loss_tasks == ("BigCodeBench/3",)
    assert result.raw_checked == 4  # the failing samples that carry their raw answer
    # the truncated sample is its own group, never under the category its stump failed with
    groups = {g.label: g for g in inspection.failures}
    assert groups["no answer (truncated)"].examples == ("BigCodeBench/2",)
    assert groups["no answer (truncated)"].category == "truncated"
    assert groups["syntax_error"].examples == ("BigCodeBench/7",)
    # and it still counts against pass@1: 1 of 8 tasks passes
    assert inspection.summary.pass_at_k["pass@1"] == pytest.approx(1 / 8)


def test_inspect_shows_the_causes_in_every_format(
    tmp_path: Path, catalog: TaskCatalog, data_dir: Path
) -> None:
    path = _write_run(tmp_path, catalog)
    env = {"PASSBENCH_DATA_DIR": str(data_dir), "PASSBENCH_CACHE_DIR": str(tmp_path / "c")}

    def inspect(*args: str) -> str:
        result = CliRunner().invoke(
            cli, ["inspect", str(path), "--bootstrap", "50", *args], env=env
        )
        assert result.exit_code == 0, result.output
        return result.output

    table = " ".join(inspect().split())
    assert "Failures by cause" in table
    assert "7 failing samples: model 3, extraction 1, environment 2, harness 1" in table
    assert "extraction loss: 1 of 4 failing samples (25.0%)" in table
    data = json.loads(inspect("--format", "json"))
    assert data["triage"]["by_class"]["extraction"] == 1
    assert data["triage"]["extraction_loss"]["tasks"] == ["BigCodeBench/3"]
    assert "## Failures by cause" in inspect("--format", "markdown")
    inspect("--format", "html", "--output", str(tmp_path / "r.html"))
    html = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert '<section id="triage">' in html and "code not recovered" in html
    truncated = inspect("--category", "truncated", "--format", "csv")
    assert [line.split(",")[0] for line in truncated.splitlines()[1:]] == ["BigCodeBench/2"]


def test_the_sanitizer_loses_no_code_in_any_answer_style(catalog: TaskCatalog) -> None:
    # no false alarms: every answer style the sanitizer handles, on real tasks
    benchmark = get_benchmark("bigcodebench")
    tasks = [catalog.tasks[f"BigCodeBench/{i}"] for i in range(1, 9)]
    checked = 0
    for task in tasks:
        for style in WRAPPERS:
            raw = wrap_answer(
                benchmark.canonical_code(task),
                style,
                entry_point=task.entry_point,
                prompt=task.prompts["complete"],
            )
            result = sanitize(raw, task.entry_point, prompt=task.code_prompt)
            if result.ok:
                checked += 1
                assert not lost_code(raw, result.code, task.entry_point), (task.task_id, style)
    assert checked >= len(tasks) * (len(WRAPPERS) - 1)


def test_lost_code_is_the_answers_definition_missing_from_the_program_run() -> None:
    answer = (
        "Try:\n```python\ndef f(x):\n    return x\n```\nand\n```python\ndef g():\n    pass\n```"
    )
    assert lost_code(answer, "def g():\n    pass\n", "f")
    assert not lost_code(answer, "import os\n\ndef f(x):\n        return x\n", "f")
    assert not lost_code("no code here", "", "f")
    assert not lost_code("<think>\ndef f(x):\n    return x\n</think>\nSorry.", "", "f")
    # unknown entry point: any definition of the answer counts
    assert lost_code("def h():\n    return 1\n", "", None)
