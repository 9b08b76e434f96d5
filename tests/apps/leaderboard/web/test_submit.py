"""Submitting end to end: `passbench leaderboard serve` and `passbench leaderboard worker` run as
real processes on a SQLite store (three HumanEval tasks, the real sandbox); samples go in through
the app's `submit` API with gradio_client, through `passbench leaderboard submit`, and through
the web form in headless Chromium. Each job is scored with the pass@1 `passbench evaluate` gives
the same samples, and the board shows it; a malformed bundle is refused with a one-line reason
and stores nothing. One app and one worker serve the whole module."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select
from tests.apps.leaderboard.test_worker import RIGHT, TASKS, WRONG, make_bundle
from tests.apps.leaderboard.web.browser import CHROMIUM, Browser

from passbench.apps.leaderboard.store.bundle import bundle_zip, read_bundle
from passbench.apps.leaderboard.store.database import Store, open_store
from passbench.apps.leaderboard.store.models import Job, Model, Run, Submission
from passbench.apps.leaderboard.web import board as boards
from passbench.core.settings import Paths
from passbench.stages.evaluate import EvaluateSettings, Evaluator

pytestmark = pytest.mark.bwrap

TOKEN = "submitter-token-0123456789"
ADMIN = "admin-token-0123456789abcdef"
FINAL = ("scored", "rejected", "failed", "cancelled")


@dataclass(frozen=True)
class Deployment:
    url: str
    store: Store
    env: dict[str, str]
    logs: Path

    def log(self) -> str:
        return "\n".join(
            f"--- {path.name}\n{path.read_text()[-3000:]}" for path in sorted(self.logs.glob("*"))
        )


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "passbench.apps.cli", *args]


@pytest.fixture(scope="module")
def deployment(data_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    from tests.apps.serve.live import free_port

    folder = tmp_path_factory.mktemp("deployment")
    logs = folder / "logs"
    logs.mkdir()
    db = f"sqlite:///{folder / 'store.db'}"
    env = dict(
        os.environ,
        PASSBENCH_DATA_DIR=str(data_dir),
        PASSBENCH_CACHE_DIR=str(folder / "cache"),
        PASSBENCH_ADMIN_TOKEN=ADMIN,
        PYTHONPATH=os.pathsep.join(p for p in (os.environ.get("PYTHONPATH"), "src") if p),
    )
    store = open_store(db)  # creates the schema before either process opens it
    port = free_port()
    tasks = ",".join(TASKS)
    started = []
    try:
        for name, args in (
            ("serve", ("serve", "--port", str(port), "--tasks", tasks)),
            (
                "worker",
                (
                    *("worker", "--poll-s", "0.3", "--workers", "2"),
                    *("--work-dir", str(folder / "jobs")),
                ),
            ),
        ):
            started.append(
                subprocess.Popen(
                    _cli("leaderboard", *args, "--db", db),
                    env=env,
                    stdout=subprocess.DEVNULL,
                    stderr=(logs / f"{name}.log").open("wb"),
                    start_new_session=True,
                )
            )
        url = f"http://127.0.0.1:{port}/"
        ready = Deployment(url, store, env, logs)
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(url + "health", timeout=5) as answer:
                    if answer.status == 200:
                        break
            except OSError:
                pass
            assert time.monotonic() < deadline and started[0].poll() is None, ready.log()
            time.sleep(0.2)
        yield ready
    finally:
        for process in started:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
        for process in started:
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        store.close()


def _rows(rights: dict[str, str]) -> list[dict[str, Any]]:
    """Two samples a task, one right and one `rights[task]`: pass@1 is not just 0 or 1."""
    rows = []
    for task in TASKS:
        rows.append({"task_id": task, "solution": RIGHT[task], "raw_solution": RIGHT[task]})
        rows.append({"task_id": task, "solution": rights[task]})
    return rows


def _evaluated(samples: Path, data_dir: Path, out: Path) -> float:
    """pass@1 of `passbench evaluate` on the same samples file, as a fraction."""
    done = Evaluator(
        EvaluateSettings(benchmark="humaneval", task_ids=TASKS, workers=2),
        Paths(cache_dir=out / "cache", data_dir=data_dir),
    ).evaluate_samples(samples, out / "evaluate")
    return float(done.pass_at_k["pass@1"])


def _counts(store: Store) -> dict[str, int]:
    with store.transaction() as session:
        return {
            table.__name__: session.scalar(select(func.count()).select_from(table)) or 0
            for table in (Job, Submission, Run, Model)
        }


def _client(deployment: Deployment) -> Any:
    from gradio_client import Client

    return Client(deployment.url, verbose=False)


def _wait(deployment: Deployment, client: Any, job: str, timeout: float = 240) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        found: dict[str, Any] = client.predict(job, api_name="/status")
        if found["state"] in FINAL:
            return found
        assert time.monotonic() < deadline, f"{found}\n{deployment.log()}"
        time.sleep(0.5)


def _board_row(store: Store, model: str) -> boards.BoardRow:
    with store.transaction() as session:
        view = boards.find_view(boards.views(session), "humaneval-full-complete")
        assert view is not None
        return next(row for row in boards.board(session, view) if row.model == model)


def test_gradio_client_submission_is_scored_as_evaluate_scores_it(
    deployment: Deployment, data_dir: Path, tmp_path: Path
) -> None:
    folder = make_bundle(tmp_path / "bundle", data_dir, _rows(WRONG), n=2)
    archive = tmp_path / "bundle.zip"
    archive.write_bytes(bundle_zip(read_bundle(folder)))
    from gradio_client import handle_file

    client = _client(deployment)
    queued = client.predict(handle_file(str(archive)), *([None] * 9), TOKEN, api_name="/submit")
    assert queued["state"] in ("queued", "validating", "running", "scored")
    assert queued["job"] == read_bundle(folder).sha256

    done = _wait(deployment, client, queued["job"])
    assert done["state"] == "scored", done
    expected = _evaluated(folder / "samples.jsonl", data_dir, tmp_path)
    assert done["pass_at_1"] == pytest.approx(expected)
    assert 0 < expected < 1
    row = _board_row(deployment.store, "org/model")
    assert row.badge == "verified" and row.pass_at_1 == pytest.approx(100 * expected)


def test_the_cli_submits_and_reports_status(
    deployment: Deployment, data_dir: Path, tmp_path: Path
) -> None:
    rights = dict(RIGHT, **{"HumanEval/0": WRONG["HumanEval/0"]})
    samples = tmp_path / "cli-samples.jsonl"
    samples.write_text("".join(json.dumps(row) + "\n" for row in _rows(rights)))
    env = dict(deployment.env, PASSBENCH_SUBMIT_TOKEN=TOKEN)
    sent = subprocess.run(
        _cli(
            *("leaderboard", "submit", "--server", deployment.url, "--samples", str(samples)),
            *("--model", "org/cli-model", "--benchmark", "humaneval", "--split", "complete"),
            *("--subset", "full", "--temperature", "0.8", "--size-b", "7"),
        ),
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert sent.returncode == 0, sent.stderr
    job = sent.stdout.strip()
    assert len(job) == 64, sent.stdout

    deadline = time.monotonic() + 240
    while True:
        shown = subprocess.run(
            _cli("leaderboard", "status", "--server", deployment.url, job, "--format", "json"),
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        status = json.loads(shown.stdout)
        assert set(status) == {"job", "state", "reason", "queue_position", "pass_at_1", "log_tail"}
        if status["state"] in FINAL:
            break
        assert time.monotonic() < deadline, f"{status}\n{deployment.log()}"
        time.sleep(1)
    assert (shown.returncode, status["state"]) == (0, "scored"), status
    expected = _evaluated(samples, data_dir, tmp_path)
    assert status["pass_at_1"] == pytest.approx(expected)
    text = subprocess.run(
        _cli("leaderboard", "status", "--server", deployment.url, job),
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert f"{job}: scored" in text.stdout and f"pass_at_1: {expected}" in text.stdout
    row = _board_row(deployment.store, "org/cli-model")
    assert row.pass_at_1 == pytest.approx(100 * expected) and row.size_b == 7


def test_a_malformed_bundle_is_refused_and_changes_nothing(
    deployment: Deployment, data_dir: Path, tmp_path: Path
) -> None:
    from gradio_client import handle_file
    from gradio_client.exceptions import AppError

    before = _counts(deployment.store)
    folder = make_bundle(tmp_path / "bad", data_dir, _rows(RIGHT), n=2)
    manifest = json.loads((folder / "manifest.json").read_text())
    manifest["dataset_sha256"] = "0" * 64
    (folder / "manifest.json").write_text(json.dumps(manifest))
    archive = tmp_path / "bad.zip"
    archive.write_bytes(bundle_zip(read_bundle(folder)))
    client = _client(deployment)
    with pytest.raises(AppError) as refused:
        client.predict(handle_file(str(archive)), *([None] * 9), TOKEN, api_name="/submit")
    message = str(refused.value)
    assert message.startswith("rejected: ") and "\n" not in message
    assert "bad.zip/manifest.json" in message and "dataset_sha256" in message

    garbage = tmp_path / "garbage.zip"
    garbage.write_bytes(b"not an archive")
    with pytest.raises(AppError, match="not a bundle"):
        client.predict(handle_file(str(garbage)), *([None] * 9), TOKEN, api_name="/submit")

    # the CLI: a malformed sample line, refused with one line and a non-zero exit
    samples = tmp_path / "broken.jsonl"
    samples.write_text('{"task_id": "HumanEval/0", "solution": "x"}\n{not json\n')
    sent = subprocess.run(
        _cli(
            *("leaderboard", "submit", "--server", deployment.url, "--samples", str(samples)),
            *("--model", "org/broken", "--benchmark", "humaneval", "--token", TOKEN),
        ),
        env=deployment.env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert sent.returncode != 0 and sent.stdout == ""
    lines = sent.stderr.strip().splitlines()
    assert (
        len(lines) == 1 and "rejected" in lines[0] and "broken.zip/samples.jsonl:2" in lines[0]
    ), sent.stderr
    missing = subprocess.run(
        _cli("leaderboard", "status", "--server", deployment.url, "f" * 64),
        env=deployment.env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert missing.returncode != 0 and "no job" in missing.stderr
    assert _counts(deployment.store) == before


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed")
def test_the_form_submits_and_the_queue_tab_follows_the_job(
    deployment: Deployment, data_dir: Path, tmp_path: Path
) -> None:
    rows = [{"task_id": task, "solution": RIGHT[task]} for task in TASKS]
    folder = make_bundle(tmp_path / "form", data_dir, rows, n=1)
    manifest = json.loads((folder / "manifest.json").read_text())
    manifest["model"] = {"name": "org/form-model", "revision": "r1"}
    (folder / "manifest.json").write_text(json.dumps(manifest))
    archive = tmp_path / "form-bundle.zip"
    archive.write_bytes(bundle_zip(read_bundle(folder)))

    browser = Browser(tmp_path / "chromium")
    try:
        browser.open(deployment.url)
        browser.wait_for("[...document.querySelectorAll('button[role=tab]')].length >= 5", 60)
        # the page's load answers with the tab its address names: let it land first
        browser.wait_for("document.body.dataset.loaded === '1'", 60)
        browser.evaluate(
            "[...document.querySelectorAll('button[role=tab]')]"
            ".find(b => b.innerText.trim() === 'Submit').click()"
        )
        browser.wait_for("!!document.querySelector('#bundle input[type=file]')")
        browser.upload("#bundle input[type=file]", archive)
        browser.wait_for("document.querySelector('#bundle').innerText.includes('form-bundle')")
        browser.type("#token input", TOKEN)
        browser.click("#submit-button")
        status = "(document.querySelector('#job-status') || {}).innerText || ''"
        try:
            browser.wait_for(f"({status}).includes('org/form-model')", 60)  # queued, shown
            browser.wait_for(f"({status}).includes('state: scored')", 240)
        except AssertionError:
            (tmp_path / "failed.png").write_bytes(browser.screenshot())
            page = browser.evaluate("document.body.innerText")
            raise AssertionError(f"{page[-2000:]}\n{deployment.log()}") from None
        shown = browser.evaluate(status)
        assert "org/form-model" in shown and "pass@1: 100.0%" in shown
        browser.wait_for("document.querySelector('#queue').innerText.includes('org/form-model')")
        screenshot = browser.screenshot()
    finally:
        browser.close()
    (tmp_path / "queue.png").write_bytes(screenshot)
    from PIL import Image

    image = Image.open(tmp_path / "queue.png").convert("L")
    low, high = image.getextrema()
    assert high - low > 100 and sum(1 for n in image.histogram() if n) > 20  # drawn, not blank
    assert _board_row(deployment.store, "org/form-model").pass_at_1 == 100.0


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed")
def test_the_address_opens_the_queue_on_a_job_and_an_admin_hides_it_there(
    deployment: Deployment, data_dir: Path, tmp_path: Path
) -> None:
    from gradio_client import handle_file

    rows = [{"task_id": task, "solution": RIGHT[task]} for task in TASKS]
    folder = make_bundle(tmp_path / "admin", data_dir, rows, n=1)
    manifest = json.loads((folder / "manifest.json").read_text())
    manifest["model"] = {"name": "org/hidden-model", "revision": "r1"}
    (folder / "manifest.json").write_text(json.dumps(manifest))
    archive = tmp_path / "admin.zip"
    archive.write_bytes(bundle_zip(read_bundle(folder)))
    client = _client(deployment)
    sent = client.predict(handle_file(str(archive)), *([None] * 9), TOKEN, api_name="/submit")
    job = sent["job"]
    assert _wait(deployment, client, job)["state"] == "scored"
    assert _board_row(deployment.store, "org/hidden-model").badge == "verified"

    browser = Browser(tmp_path / "chromium")
    status = "(document.querySelector('#job-status') || {}).innerText || ''"
    try:
        browser.open(f"{deployment.url}?tab=queue&job={job[:12]}")
        selected = (
            "(document.querySelector('button[role=tab][aria-selected=true]') || {}).innerText"
        )
        browser.wait_for(f"({selected} || '').trim() === 'Queue'", 60)
        browser.wait_for(f"({status}).includes('org/hidden-model')", 60)
        assert "state: scored" in browser.evaluate(status)
        browser.wait_for("document.querySelector('#queue').innerText.includes('org/hidden-model')")
        browser.type("#manage-token input", ADMIN)
        browser.click("#job-hide")
        managed = "(document.querySelector('#job-managed') || {}).innerText || ''"
        try:
            browser.wait_for(f"({managed}).includes('hidden')", 60)
        except AssertionError:
            page = browser.evaluate("document.body.innerText")
            raise AssertionError(f"{page[-2000:]}\n{deployment.log()}") from None
        with deployment.store.transaction() as session:
            run = session.get(Run, session.get(Job, job).run_id)  # type: ignore[union-attr]
            assert run is not None and run.hidden
            shown = {row.model for v in boards.views(session) for row in boards.board(session, v)}
        assert "org/hidden-model" not in shown
        browser.wait_for(
            "!document.querySelector('#queue').innerText.includes('org/hidden-model')"
        )  # the queue leaves it out too
        browser.click("#job-show")
        browser.wait_for(f"({managed}).includes('shown')", 60)
    finally:
        browser.close()
    assert _board_row(deployment.store, "org/hidden-model").badge == "verified"


def test_the_queue_tab_s_buttons_cancel_hide_and_delete_as_the_queue_allows(
    data_dir: Path, tmp_path: Path
) -> None:
    from passbench.apps.leaderboard.store.queue import QueuePolicy
    from passbench.apps.leaderboard.web.submit import Submissions

    store = open_store(f"sqlite:///{tmp_path / 'store.db'}")
    try:
        paths = Paths(cache_dir=tmp_path / "cache", data_dir=data_dir)
        policy = QueuePolicy(task_ids=TASKS, admin_token=ADMIN)
        tabs = Submissions(store, paths, policy)
        archive = tmp_path / "b.zip"
        rows = [{"task_id": task, "solution": RIGHT[task]} for task in TASKS]
        archive.write_bytes(bundle_zip(read_bundle(make_bundle(tmp_path / "b", data_dir, rows, 1))))
        job = tabs.submit(str(archive), *([None] * 9), TOKEN)["job"]
        other = "someone-else-token-0123456789"
        with pytest.raises(Exception, match=r"not allowed: job \w+ belongs to another submitter"):
            tabs.manage("cancel", job[:12], other)
        with pytest.raises(Exception, match="not allowed: only an admin can hide"):
            tabs.manage("hide", job[:12], TOKEN)  # the owner, but no admin
        assert tabs.manage("hide", job[:12], ADMIN).endswith("left off the board and the queue")
        assert tabs.manage("show", job[:12], ADMIN).endswith("back on the board and the queue")
        assert tabs.manage("cancel", job[:12], TOKEN) == f"job {job[:12]} cancelled"
        assert tabs.status(job)["state"] == "cancelled"
        assert tabs.manage("delete", job, TOKEN) == f"job {job[:12]} deleted with its run"
        assert _counts(store) == {"Job": 0, "Submission": 0, "Run": 0, "Model": 1}
        with pytest.raises(Exception, match="no job"):
            tabs.status(job)
    finally:
        store.close()
