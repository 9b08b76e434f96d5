"""The `remote` backend against a real `passbench serve` on loopback: dropped connections retried
without asking for any verdict twice, clear refusals, an evaluation through it equal to a local
one. (Its verdicts on the contract's ordinary and hostile programs: tests/contracts.)"""

from __future__ import annotations

import contextlib
import json
import socket
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from tests.apps.serve.live import free_port, running_server

from passbench.core.errors import SandboxError
from passbench.core.settings import Paths
from passbench.stages.evaluate import EvaluateSettings, Evaluator
from passbench.stages.sandbox import RemoteConfig, SandboxConfig, open_sandbox
from passbench.stages.sandbox.base import EnvironmentRef

from .conftest import BWRAP
from .helpers import TEST_LIMITS, unittest_program

pytestmark = [pytest.mark.bwrap, pytest.mark.skipif(not BWRAP, reason="bubblewrap cannot run")]

TOKEN = "remote-test-token"
HOST = EnvironmentRef("host")


@pytest.fixture(scope="module")
def endpoint(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    from passbench.apps.serve import ServeConfig, ServerLimits

    root = tmp_path_factory.mktemp("server")
    config = ServeConfig(
        base=EvaluateSettings(limits=TEST_LIMITS),
        paths=Paths(cache_dir=root / "cache", data_dir=None),
        jobs_dir=root / "jobs",
        port=free_port(),
        token=TOKEN,
        limits=ServerLimits(max_workers=2, max_memory_mb=TEST_LIMITS.memory_mb),
    )
    with running_server(config) as url:
        yield url


def remote_config(endpoint: str, **fields: object) -> SandboxConfig:
    config = SandboxConfig(
        python=Path(sys.executable),
        workers=2,
        limits=TEST_LIMITS,
        environment=HOST,
        backend_config=RemoteConfig(endpoint, TOKEN),
    )
    return replace(config, **fields)  # type: ignore[arg-type]


class _CuttingProxy:
    """A TCP proxy to the server that cuts the first run's response after `cut` bytes, as a
    dropped connection does; later connections go through whole."""

    def __init__(self, upstream_port: int, cut: int) -> None:
        self.upstream_port = upstream_port
        self.cut = cut
        self.runs = 0
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._relay, args=(client,), daemon=True).start()

    def _relay(self, client: socket.socket) -> None:
        upstream = socket.create_connection(("127.0.0.1", self.upstream_port))
        first = client.recv(65536)
        cut = None
        if first.startswith(b"POST /passbench/v1/run"):
            self.runs += 1
            cut = self.cut if self.runs == 1 else None
        upstream.sendall(first)

        def forward_requests() -> None:
            try:
                while data := client.recv(65536):
                    upstream.sendall(data)
            except OSError:
                pass

        threading.Thread(target=forward_requests, daemon=True).start()
        sent = 0
        try:
            while data := upstream.recv(65536):
                if cut is not None and sent + len(data) >= cut:
                    client.sendall(data[: max(0, cut - sent)])
                    break
                client.sendall(data)
                sent += len(data)
        except OSError:
            pass
        finally:
            for end in (client, upstream):  # shutdown wakes the other thread's recv
                with contextlib.suppress(OSError):
                    end.shutdown(socket.SHUT_RDWR)
                end.close()

    def close(self) -> None:
        self.listener.close()


def test_a_dropped_connection_is_retried_for_the_unanswered_programs_only(endpoint: str) -> None:
    port = int(endpoint.rstrip("/").rsplit(":", 1)[1])
    proxy = _CuttingProxy(port, cut=1500)  # headers and about one verdict line
    warnings: list[str] = []
    programs = [unittest_program(f"p{i}", "def f(x):\n    return x + 1\n") for i in range(6)]
    try:
        config = remote_config(f"http://127.0.0.1:{proxy.port}/")
        with open_sandbox(config, backend="remote", warn=warnings.append) as remote:
            results = list(remote.run(programs))
    finally:
        proxy.close()
    assert sorted(r.key for r in results) == sorted(p.key for p in programs)  # each once
    assert all(r.status == "pass" for r in results)
    assert proxy.runs == 2 and len(warnings) == 1
    assert "programs again" in warnings[0]


def test_a_client_that_goes_away_cancels_its_run_at_once(endpoint: str) -> None:
    """Closing the stream is the API's cancellation: the server kills the run's samples and
    frees its slot (this server runs one request at a time) instead of running them out."""
    import httpx

    from passbench.stages.sandbox.remote.wire import RunRequest, request_to_json

    def body(*programs: object) -> dict[str, object]:
        request = RunRequest(HOST, TEST_LIMITS, 1, tuple(programs))  # type: ignore[arg-type]
        return request_to_json(request)

    spin = unittest_program("spin", "def f(x):\n    while True: pass\n", timeout_s=120.0)
    headers = {"Authorization": f"Bearer {TOKEN}"}
    url = endpoint.rstrip("/") + "/passbench/v1/run"
    with httpx.Client(headers=headers, timeout=30) as client:
        with client.stream("POST", url, json=body(spin)) as response:
            assert response.status_code == 200
            time.sleep(2.0)  # the spinning sample is running; then the client goes away
        started = time.monotonic()
        quick = unittest_program("quick", "def f(x):\n    return x + 1\n")
        answer = client.post(url, json=body(quick), timeout=60)
        waited = time.monotonic() - started
    verdicts = [json.loads(text) for text in answer.text.splitlines() if text.strip()]
    assert verdicts[0]["key"] == "quick" and verdicts[0]["status"] == "pass"
    assert waited < 20, f"the next request waited {waited:.0f} s for the abandoned one"


def test_refusals_are_one_clear_line(endpoint: str) -> None:
    with pytest.raises(SandboxError, match="bearer token"):
        open_sandbox(
            remote_config(endpoint, backend_config=RemoteConfig(endpoint)), backend="remote"
        )
    with pytest.raises(SandboxError, match="has no 'nope' environment"):
        open_sandbox(remote_config(endpoint, environment=EnvironmentRef("nope")), backend="remote")
    with pytest.raises(SandboxError, match="cannot connect"):
        open_sandbox(remote_config(f"http://127.0.0.1:{free_port()}/"), backend="remote")


def _statuses(path: Path) -> dict[str, list[str]]:
    document = json.loads(path.read_text())
    return {task: [e["status"] for e in entries] for task, entries in document["eval"].items()}


def _find(document: object, key: str) -> object:
    """The first value of `key` anywhere in a JSON document."""
    if isinstance(document, dict):
        if key in document:
            return document[key]
        for value in document.values():
            found = _find(value, key)
            if found is not None:
                return found
    return None


def test_an_evaluation_through_the_remote_backend_is_the_local_one(
    endpoint: str, tmp_path: Path, data_dir: Path
) -> None:
    rows = [
        {"task_id": "HumanEval/0", "completion": "    return False\n"},
        {
            "task_id": "HumanEval/2",
            "solution": "def truncate_number(number: float) -> float:\n    return number % 1.0\n",
        },
        {"task_id": "HumanEval/2", "solution": "def truncate_number(number):\n    return 0.5\n"},
    ]
    samples = tmp_path / "samples.jsonl"
    samples.write_text("".join(json.dumps(row) + "\n" for row in rows))
    settings = EvaluateSettings(
        benchmark="humanevalplus", task_ids=("HumanEval/0", "HumanEval/2"), workers=2
    )
    local = Evaluator(settings, Paths(cache_dir=tmp_path / "l", data_dir=data_dir))
    local_out = local.evaluate_samples(samples, tmp_path / "local")
    remote_settings = replace(
        settings, backend="remote", endpoint=endpoint, token=TOKEN, verify_fraction=1.0
    )
    remote = Evaluator(remote_settings, Paths(cache_dir=tmp_path / "r", data_dir=data_dir))
    remote_out = remote.evaluate_samples(samples, tmp_path / "remote")
    assert _statuses(remote_out.eval_results_path) == _statuses(local_out.eval_results_path)
    assert _statuses(remote_out.eval_results_path) == {
        "HumanEval/0": ["fail"],
        "HumanEval/2": ["pass", "fail"],
    }
    backend = _find(json.loads(remote_out.eval_results_path.read_text()), "backend")
    assert isinstance(backend, dict)
    assert backend["name"] == "remote" and backend["endpoint"] == endpoint
    assert backend["verified"] > 0 and backend["disagreements"] == []
    # the same evaluation again is answered from its journal: nothing is sent
    again = Evaluator(remote_settings, Paths(cache_dir=tmp_path / "r", data_dir=data_dir))
    assert again.evaluate_samples(samples, tmp_path / "remote").reused == 6  # 3 x base, plus
