"""A store as the leaderboard sees it: the public board's 202 models (Full and Hard, reported),
a run a worker verified and a run imported from the official evaluator's files, the latter
under a model the public board also lists, and a contamination check of BigCodeBench Hard's
complete prompts against a corpus that holds two of the runs' tasks."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.analysis.report.result_files import OFFICIAL, OURS
from tests.apps.leaderboard.store.conftest import fresh_postgres_database, postgres_server

from passbench.analysis.contamination import check_overlap, overlap_document, task_text
from passbench.apps.leaderboard.store.contamination import import_contamination
from passbench.apps.leaderboard.store.database import Store, open_store
from passbench.apps.leaderboard.store.importing import import_results
from passbench.apps.leaderboard.store.official_leaderboard import import_official
from passbench.stages.benchmarks import DataSettings, get_benchmark

#: The imported run is stored under this public model's name.
SHARED_MODEL = "Magicoder-S-DS-6.7B"
#: The tasks whose complete prompts the contamination check's corpus holds (one the verified
#: run always solves, one it never does).
PLANTED = ("BigCodeBench/13", "BigCodeBench/82")


def leaderboard_file(data_dir: Path, subset: str) -> Path:
    path = data_dir / "leaderboard" / f"bigcodebench-results-{subset}.json"
    if not path.is_file():
        pytest.fail(f"{path} not found; set PASSBENCH_DATA_DIR to the shared datasets folder")
    return path


def overlap_file(data_dir: Path, folder: Path) -> Path:
    """`passbench contamination overlap --subset hard --split complete -o FILE` over a corpus
    holding the PLANTED tasks' prompts (the command's own functions, on the real data)."""
    loaded = get_benchmark("bigcodebench").load(
        subset="hard", data=DataSettings(data_dir=data_dir, download=False)
    )
    texts = {task.task_id: task_text(task, "complete") for task in loaded.tasks}
    corpus = folder / "corpus.jsonl"
    corpus.write_text(
        "".join(json.dumps({"content": texts[task_id]}) + "\n" for task_id in PLANTED),
        encoding="utf-8",
    )
    meta = {
        "benchmark": loaded.benchmark,
        "version": loaded.version,
        "split": "complete",
        "subset": loaded.subset,
        "dataset_sha256": loaded.sha256,
    }
    path = folder / "overlap.json"
    path.write_text(json.dumps(overlap_document(check_overlap(texts, [corpus]), meta)))
    return path


def fill_store(store: Store, data_dir: Path, folder: Path) -> dict[str, int]:
    """Import both public files, the two runs and the contamination check; returns the runs'
    ids by model name."""
    for subset in ("full", "hard"):
        import_official(store, leaderboard_file(data_dir, subset))
    verified = import_results(store, OURS, provenance="verified")
    renamed = folder / OFFICIAL.name.replace("demo-model", SHARED_MODEL)
    renamed.write_bytes(OFFICIAL.read_bytes())
    side = json.loads(Path(str(OFFICIAL).replace("eval_results", "pass_at_k")).read_text())
    side["model"] = SHARED_MODEL
    (folder / renamed.name.replace("eval_results", "pass_at_k")).write_text(json.dumps(side))
    imported = import_results(store, renamed)
    import_contamination(store, overlap_file(data_dir, folder))
    return {verified.model: verified.run_id, SHARED_MODEL: imported.run_id}


@pytest.fixture(scope="module")
def filled(
    data_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Store, dict[str, int]]]:
    folder = tmp_path_factory.mktemp("board")
    store = open_store(f"sqlite:///{folder / 'store.db'}")
    try:
        yield store, fill_store(store, data_dir, folder)
    finally:
        store.close()


@pytest.fixture(scope="module")
def server(filled: tuple[Store, dict[str, int]]) -> Iterator[str]:
    """`passbench leaderboard serve` on the filled store, on a loopback port: its address."""
    import uvicorn
    from tests.apps.serve.live import free_port

    from passbench.apps.leaderboard.web.app import asgi_app

    store, _ = filled
    port = free_port()
    runner = uvicorn.Server(
        uvicorn.Config(asgi_app(store), host="127.0.0.1", port=port, log_level="warning")
    )
    thread = threading.Thread(target=runner.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not runner.started:
        assert time.monotonic() < deadline and thread.is_alive(), "the app did not start"
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}/"
    finally:
        runner.should_exit = True
        thread.join(30)


@pytest.fixture(scope="module")
def filled_postgres(
    data_dir: Path, tmp_path_factory: pytest.TempPathFactory, postgres_server: str
) -> Iterator[tuple[Store, dict[str, int]]]:
    """The same store on the real PostgreSQL server tests/apps/leaderboard/store starts (a fresh
    database)."""
    store = open_store(fresh_postgres_database(postgres_server))
    try:
        yield store, fill_store(store, data_dir, tmp_path_factory.mktemp("board-pg"))
    finally:
        store.close()


__all__ = [
    "postgres_server"
]  # the session's server fixture, shared with tests/apps/leaderboard/store
