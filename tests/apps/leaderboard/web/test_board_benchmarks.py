"""Every benchmark with results gets its own board, the repository-level and polyglot ones
included: a SWE-bench run (predictions graded on a small real repository) and an Aider polyglot
run (reference and stub answers tested in the sandbox), each imported and shown by `leaderboard
build` as its own view, with its scores and nothing of the other's; the polyglot run's languages
each get a view too, scored on that language's exercises."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq  # type: ignore[import-untyped]
import pytest
from tests.stages.benchmarks.swebench.fixture import make_small_bench
from tests.stages.sandbox.conftest import BWRAP

from passbench.apps.leaderboard.store.database import open_store
from passbench.apps.leaderboard.store.importing import import_results
from passbench.apps.leaderboard.web.static import build
from passbench.core.settings import Paths
from passbench.stages.benchmarks import DataSettings, get_benchmark
from passbench.stages.evaluate import EvaluateSettings, Evaluator

pytestmark = [pytest.mark.bwrap, pytest.mark.skipif(not BWRAP, reason="bubblewrap cannot run")]

INSTANCE = "octo__calc-1"
EXERCISES = ("bowling/python", "zipper/python", "bowling/go")


def _swebench_run(folder: Path) -> Path:
    """One model's predictions: the gold patch (resolves)."""
    small = make_small_bench(folder / "bench")
    predictions = folder / "preds.json"
    prediction = {"model_name_or_path": "org/patcher", "model_patch": small.gold_patch}
    predictions.write_text(json.dumps({INSTANCE: prediction}))
    settings = EvaluateSettings(benchmark="swebench-verified", workers=2, check_ground_truth=False)
    paths = Paths(cache_dir=folder / "cache", data_dir=small.data_dir, repos_dir=small.repos_dir)
    outcome = Evaluator(settings, paths).evaluate_samples(predictions, folder / "out")
    return outcome.eval_results_path


def _polyglot_run(folder: Path, data_dir: Path) -> Path:
    """One model's answers: the references for bowling, the untouched stub for zipper."""
    bench = get_benchmark("aider-polyglot")
    data = DataSettings(data_dir=data_dir, download=False)
    tasks = {
        f"{t.metadata['exercise']}/{t.metadata['language']}": t for t in bench.load(data=data).tasks
    }
    rows = []
    for key in EXERCISES:
        task = tasks[key]
        code = bench.canonical_code(task)
        if key == "zipper/python":
            code = json.dumps({"files": task.metadata["stubs"]})
        rows.append({"task_id": task.task_id, "solution": code})
    folder.mkdir()
    samples = folder / "editor.jsonl"
    samples.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    settings = EvaluateSettings(
        benchmark="aider-polyglot", split="whole", workers=2, check_ground_truth=False
    )
    paths = Paths(cache_dir=folder / "cache", data_dir=data_dir)
    outcome = Evaluator(settings, paths).evaluate_samples(samples, folder / "out")
    return outcome.eval_results_path


def test_swebench_and_polyglot_runs_each_get_a_board(tmp_path: Path, data_dir: Path) -> None:
    store = open_store(f"sqlite:///{tmp_path / 'store.db'}")
    try:
        import_results(store, _swebench_run(tmp_path / "swe"))
        import_results(store, _polyglot_run(tmp_path / "poly", data_dir))
        with store.transaction() as session:
            build(session, tmp_path / "site")
    finally:
        store.close()
    document = json.loads((tmp_path / "site" / "board.json").read_text(encoding="utf-8"))
    shown = {
        view["label"]: [(row["model"], row["pass_at_1"], row["n_tasks"]) for row in view["rows"]]
        for view in document["views"]
    }
    assert shown == {
        "SWE-bench Verified · Full · Complete": [("org/patcher", 100.0, 1)],
        "Aider polyglot · Full · Whole": [("editor", pytest.approx(200 / 3), 3)],
        "Aider polyglot · Full · Whole · Go": [("editor", 100.0, 1)],
        "Aider polyglot · Full · Whole · Python": [("editor", 50.0, 2)],
    }
    keys = [view["key"] for view in document["views"]]
    assert "aider-polyglot-full-whole-python" in keys
    for key in keys:
        assert (tmp_path / "site" / f"matrix-{key}.parquet").is_file()
    python = pq.read_table(tmp_path / "site" / "matrix-aider-polyglot-full-whole-python.parquet")
    tasks = python.column("task_id").to_pylist()
    assert len(tasks) == 2 and all("/python/" in task for task in tasks), tasks
