"""`passbench serve` end to end: the real Gradio server on loopback, called as the official
`bigcodebench.evaluate --execution gradio` calls it (gradio_client, `/predict`, the same keyword
arguments), answering with the verdicts a local passbench run gives."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.apps.serve.live import free_port, running_server

from passbench.core.errors import PassbenchError
from passbench.core.settings import Paths
from passbench.stages.evalenv import locate_env
from passbench.stages.evaluate import EvaluateSettings, Evaluator


def _evalenv_missing() -> str:
    try:
        locate_env("bigcodebench")
    except PassbenchError as error:
        return str(error)
    return ""


pytestmark = [
    pytest.mark.evalenv,
    pytest.mark.slow,
    pytest.mark.skipif(bool(_evalenv_missing()), reason=_evalenv_missing() or "env"),
]

TOKEN = "test-token-3f9c"
# fast stdlib tasks (perf/fast_tasks.json): the test is about the server, not the tasks
TASKS = ("BigCodeBench/1", "BigCodeBench/2")


@dataclass
class Server:
    url: str
    jobs_dir: Path
    data_dir: Path


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, data_dir: Path) -> Iterator[Server]:
    from passbench.apps.serve import ServeConfig, ServerLimits

    root = tmp_path_factory.mktemp("serve")
    config = ServeConfig(
        base=EvaluateSettings(nltk_data=data_dir / "nltk_data"),
        paths=Paths(cache_dir=root / "cache", data_dir=data_dir),
        jobs_dir=root / "jobs",
        port=free_port(),
        max_upload_mb=1,
        token=TOKEN,
        limits=ServerLimits(max_workers=2),
    )
    with running_server(config) as url:
        yield Server(url, config.jobs_dir, data_dir)


@pytest.fixture(scope="module")
def samples(tmp_path_factory: pytest.TempPathFactory, data_dir: Path) -> Path:
    """Two tasks, each with its canonical solution and a wrong one; an officially named file."""
    import gzip

    rows = {
        row["task_id"]: row
        for row in map(
            json.loads,
            gzip.decompress(
                (data_dir / "bigcodebench" / "BigCodeBench-v0.1.4.jsonl.gz").read_bytes()
            ).splitlines(),
        )
    }
    path = tmp_path_factory.mktemp("samples") / "tiny-model--bigcodebench-complete--x.jsonl"
    with path.open("w") as handle:
        for task_id in TASKS:
            canonical = (
                rows[task_id]["complete_prompt"] + "\n" + rows[task_id]["canonical_solution"]
            )
            handle.write(json.dumps({"task_id": task_id, "solution": canonical}) + "\n")
            wrong = "def task_func(*args, **kwargs):\n    return None\n"
            handle.write(json.dumps({"task_id": task_id, "solution": wrong}) + "\n")
    return path


def official_call(server: Server, samples: Path | None, **overrides: Any) -> Any:
    """`/predict` exactly as bigcodebench 0.2.5's evaluate(execution="gradio") calls it."""
    import gradio_client

    client = gradio_client.Client(
        server.url, headers={"Authorization": f"Bearer {TOKEN}"}, verbose=False
    )
    arguments: dict[str, Any] = {
        "split": "complete",
        "subset": "full",
        "samples": gradio_client.handle_file(str(samples)) if samples else None,
        "pass_k": "1,5,10",
        "parallel": -1,
        "min_time_limit": 1,
        "max_as_limit": 30 * 1024,
        "max_data_limit": 30 * 1024,
        "max_stack_limit": 10,
        "calibrated": True,
        "check_gt_only": False,
        "no_gt": False,
        "selective_evaluate": ",".join(t.split("/")[1] for t in TASKS),
    }
    arguments.update(overrides)
    return client.predict(**arguments, api_name="/predict")


def test_the_official_call_gets_the_local_verdicts(
    server: Server, samples: Path, tmp_path: Path
) -> None:
    results, pass_at_k = official_call(server, samples)
    assert pass_at_k["model"] == "tiny-model"
    assert (pass_at_k["split"], pass_at_k["subset"], pass_at_k["calibrated"]) == (
        "complete",
        "full",
        True,
    )
    assert pass_at_k["gt_pass_rate"] == 1.0 and pass_at_k["failed_tasks"] == []
    assert set(results["eval"]) == set(TASKS)
    served = {task: [e["status"] for e in entries] for task, entries in results["eval"].items()}
    assert all(
        set(entry) >= {"task_id", "solution", "status", "details"}
        for entries in results["eval"].values()
        for entry in entries
    )

    local = Evaluator(
        EvaluateSettings(task_ids=TASKS, nltk_data=server.data_dir / "nltk_data", workers=2),
        Paths(cache_dir=tmp_path / "cache", data_dir=server.data_dir),
    ).evaluate_samples(samples, tmp_path)
    document = json.loads(local.eval_results_path.read_text())
    assert served == {t: [e["status"] for e in es] for t, es in document["eval"].items()}
    assert served == {task: ["pass", "fail"] for task in TASKS}
    assert pass_at_k["pass@1"] == pytest.approx(local.pass_at_k["pass@1"]) == 0.5
    assert "pass@5" not in pass_at_k  # k above the samples per task is skipped, as officially


def test_the_same_request_again_is_answered_from_its_journal(server: Server, samples: Path) -> None:
    started = time.monotonic()
    _, again = official_call(server, samples)
    assert again["pass@1"] == 0.5
    jobs = [p for p in server.jobs_dir.iterdir() if (p / samples.name).exists()]
    assert len(jobs) == 1  # one folder for one (file, settings), found again
    assert any(p.name.endswith(".journal.sqlite") for p in jobs[0].iterdir())
    assert time.monotonic() - started < 30


def test_ground_truth_only_and_without_ground_truth(server: Server) -> None:
    results, pass_at_k = official_call(server, None, check_gt_only=True)
    assert results["eval"] == {} and pass_at_k["gt_pass_rate"] == 1.0
    assert pass_at_k["model"] == "__dummy__.jsonl" and pass_at_k["failed_tasks"] == []


def test_without_ground_truth_every_task_counts_as_failed_as_officially(
    server: Server, samples: Path
) -> None:
    _, pass_at_k = official_call(server, samples, no_gt=True)
    assert pass_at_k["gt_pass_rate"] == 0.0 and pass_at_k["failed_tasks"] == list(TASKS)
    assert pass_at_k["pass@1"] == 0.5


def test_malformed_uploads_get_one_clear_line(server: Server, tmp_path: Path) -> None:
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"task_id": "BigCodeBench/0", "solution": "x = 1"}\nnot json\n')
    from gradio_client.exceptions import AppError

    with pytest.raises(AppError, match=r"broken\.jsonl:2"):
        official_call(server, broken)
    # the official Space's dropdowns accept only their choices
    with pytest.raises(AppError, match="train is not in the list"):
        official_call(server, broken, split="train")


def test_uploads_over_the_limit_are_refused(server: Server, tmp_path: Path) -> None:
    big = tmp_path / "big.jsonl"
    row = json.dumps({"task_id": "BigCodeBench/0", "solution": "#" * 1000}) + "\n"
    big.write_text(row * 1500)  # 1.5 MB against a 1 MB limit
    with pytest.raises(Exception, match=r"(?i)size|large|exceed"):
        official_call(server, big)


def test_the_token_is_required_except_for_health(server: Server) -> None:
    health = httpx.get(server.url + "health").json()
    assert health["status"] == "ok" and health["environment"]["lock_sha256"]
    assert health["max_upload_mb"] == 1 and health["concurrency"] == 1
    assert httpx.get(server.url).status_code == 401
    assert httpx.get(server.url, headers={"Authorization": "Bearer wrong"}).status_code == 401
    ok = httpx.get(server.url, headers={"Authorization": f"Bearer {TOKEN}"})
    assert ok.status_code == 200
