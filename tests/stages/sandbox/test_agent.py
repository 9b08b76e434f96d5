"""The runner backends start where programs run (`python -m passbench.stages.sandbox.remote.agent`):
a request in, verdicts out as NDJSON lines, the same answer the server gives."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from passbench.core.errors import HostUnfit, SandboxError
from passbench.stages.sandbox.base import EnvironmentRef
from passbench.stages.sandbox.remote import agent
from passbench.stages.sandbox.remote.wire import (
    PROTOCOL,
    RunRequest,
    read_verdicts,
    request_to_json,
)

from .conftest import needs_bwrap
from .helpers import TEST_LIMITS, checks_program, unittest_program


def _agent(*args: str, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "passbench.stages.sandbox.remote.agent", *args],
        input=stdin,
        capture_output=True,
        timeout=120,
    )


def _request(*programs: Any) -> bytes:
    request = RunRequest(EnvironmentRef("host"), TEST_LIMITS, 2, tuple(programs))
    return json.dumps(request_to_json(request)).encode()


@needs_bwrap
def test_verdicts_stream_out_and_are_copied_to_the_output_file(tmp_path: Path) -> None:
    copy = tmp_path / "answer.ndjson"
    body = _request(
        unittest_program("good", "def f(x):\n    return x + 1"),
        unittest_program("bad", "def f(x):\n    return x"),
        checks_program("slow", "while True: pass", timeout_s=1.0),
    )
    done: dict[str, Any] = {}
    answer = _agent("--output", str(copy), stdin=body)
    assert answer.returncode == 0, answer.stderr
    results = {r.key: r for r in read_verdicts(answer.stdout.splitlines(), "agent", done)}
    assert {k: r.status for k, r in results.items()} == {
        "good": "pass",
        "bad": "fail",
        "slow": "fail",  # a test that times out fails it, as officially
    }
    assert results["slow"].category is not None and results["slow"].category.value == "timeout"
    assert done["isolation"] == "bubblewrap"
    assert copy.read_bytes() == answer.stdout


def test_a_malformed_request_is_one_line_and_exit_2() -> None:
    answer = _agent(stdin=b'{"protocol": 1, "environment": {"name": "host"}, "programs": 3}')
    assert answer.returncode == 2
    (only,) = answer.stdout.splitlines()
    message = json.loads(only)
    assert "programs" in message["error"] and message["retry"] is False


def test_an_environment_it_lacks_is_an_error_to_retry_elsewhere(tmp_path: Path) -> None:
    request = RunRequest(EnvironmentRef("bigcodebench"), TEST_LIMITS, 1, ())
    body = json.dumps(request_to_json(request)).encode()
    answer = _agent("--envs-root", str(tmp_path), stdin=body)
    assert answer.returncode == 3
    message = json.loads(answer.stdout)
    assert "no 'bigcodebench' environment" in message["error"] and message["retry"] is True


def test_a_machine_unfit_for_the_run_says_not_to_retry_other_failures_to_retry(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # what the sandbox raises is mapped, not the sandbox itself, so it stands in here
    request = RunRequest(EnvironmentRef("host"), TEST_LIMITS, 1, ())
    setup = agent.RunnerSetup()
    for error, retry in ((HostUnfit("no 'ip' here"), False), (SandboxError("lost"), True)):

        def failing(config: object, error: Exception = error) -> None:
            raise error

        monkeypatch.setattr(agent, "open_sandbox", failing)
        (only,) = list(agent.answer(request, setup))
        message = json.loads(only)
        assert message["retry"] is retry and str(error) in message["error"]


def test_describe_says_what_it_offers(tmp_path: Path) -> None:
    answer = _agent("--describe", "--envs-root", str(tmp_path))
    assert answer.returncode == 0
    offered = json.loads(answer.stdout)
    assert offered["protocol"] == PROTOCOL == 2
    assert set(offered["environments"]) == {"host"}
    assert isinstance(offered["bubblewrap"], bool)


def test_a_runner_keeps_history_caches_only_where_it_says() -> None:
    """A server's runner keeps its mirrors' history caches in its cache folder; an agent in a
    container (its folders last one run) keeps none."""
    request = RunRequest(EnvironmentRef("host"), TEST_LIMITS, 1, ())
    kept = agent.sandbox_config(request, agent.RunnerSetup(history_dir=Path("/cache/histories")))
    assert kept.history_dir == Path("/cache/histories")
    assert agent.sandbox_config(request, agent.RunnerSetup()).history_dir is None
