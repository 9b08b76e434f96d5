"""A run imported into the leaderboard keeps why its samples failed (model, extraction,
environment, harness), and the model's page shows it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from passbench.apps.leaderboard.store.database import Store
from passbench.apps.leaderboard.store.importing import import_results
from passbench.apps.leaderboard.store.models import Run
from passbench.apps.leaderboard.web import board as boards
from passbench.apps.leaderboard.web.app import _model_markdown
from passbench.stages.results.write import write_eval_results, write_pass_at_k

STEM = "triaged-model--bigcodebench-complete--openai-0-1-sanitized_calibrated"
GOOD = "def task_func(x):\n    return x * 2\n"


def _entry(task_id: str, status: str = "fail", **fields: Any) -> dict[str, Any]:
    return {"task_id": task_id, "solution": "", "status": status, "details": {}, **fields}


def _write(folder: Path) -> Path:
    entries = [
        _entry("BigCodeBench/0", status="pass", solution=GOOD),
        _entry("BigCodeBench/1", solution=GOOD, raw_solution=GOOD, category="assertion_failed"),
        _entry(
            "BigCodeBench/2",
            raw_solution="```python\ndef task_func(",
            category="syntax_error",
            truncated="token limit (finish reason 'length')",
        ),
        _entry(
            "BigCodeBench/3",
            solution="def task_func(x):\n    pass\n",
            raw_solution=f"```python\n{GOOD}```",
            category="assertion_failed",
        ),
        _entry("BigCodeBench/4", category="exception", reason="URLError: <urlopen error>"),
    ]
    meta = {"benchmark": "bigcodebench", "dataset_version": "v0.1.4", "split": "complete"}
    path = folder / f"{STEM}_eval_results.json"
    write_eval_results(path, entries, meta)
    write_pass_at_k(
        folder / f"{STEM}_pass_at_k.json",
        {"pass@1": 0.2},
        meta,
        model="triaged-model",
        split="complete",
        subset="full",
        calibrated=True,
        gt_pass_rate=0.8,
        failed_tasks=["BigCodeBench/4"],
        n_tasks=5,
        n_samples=5,
        extra={"gt_failures": {"BigCodeBench/4": {"reason": "urlopen error [Errno -3]"}}},
    )
    return path


def test_the_model_page_shows_the_failures_by_cause(store: Store, tmp_path: Path) -> None:
    done = import_results(store, _write(tmp_path))
    with store.transaction() as session:
        run = session.get(Run, done.run_id)
        assert run is not None and run.triage is not None
        assert run.triage["by_class"] == {
            "model": 2,
            "extraction": 1,
            "environment": 1,
            "harness": 0,
        }
        assert run.triage["extraction_loss"] == {
            "samples": 1,
            "checked": 3,
            "tasks": ["BigCodeBench/3"],
        }
        page = boards.model_page(session, run.model_id)
        assert page is not None
        text = _model_markdown(page)
        document = boards.model_document(page)
    assert "### Failures by cause" in text
    assert f"| {done.run_id} | 4 | 2 | 1 | 1 | 0 | 1 | 1 of 3 checked |" in text
    assert document["runs"][0]["triage"]["failing"] == 4
