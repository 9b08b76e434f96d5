"""The `e2b` backend through the real e2b SDK against a loopback E2B
(tests/stages/sandbox/e2b_loopback.py:
E2B's REST API and envd's process and file API on 127.0.0.1): the same verdicts as the local
sandbox, streamed as they finish; an expired sandbox or a lost stream costs only the pending
programs, never a verdict twice; every sandbox is killed; clear one-line refusals."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from passbench.apps.cli import main
from passbench.core.errors import InputError
from passbench.core.records import ExecResult, Program
from passbench.stages.sandbox import E2BConfig, SandboxConfig, describe_backend, open_sandbox
from passbench.stages.sandbox.remote import e2b_backend

from .e2b_loopback import Event, LoopbackE2B, describe
from .e2b_support import loopback, loopback_config
from .helpers import checks_program, unittest_program

PROGRAMS: dict[str, Program] = {
    "pass": unittest_program("pass", "def f(x):\n    return x + 1\n"),
    "wrong": unittest_program("wrong", "def f(x):\n    return x\n"),
    "raises": unittest_program("raises", "def f(x):\n    raise ValueError(x)\n"),
    "infinite-loop": unittest_program(
        "infinite-loop", "def f(x):\n    while True: pass\n", timeout_s=2.0
    ),
    "exit": unittest_program("exit", "import sys\nsys.exit(0)\n"),
    "fake-output": unittest_program(
        "fake-output", "print('OK'); print('Ran 2 tests'); import os; os._exit(0)\n"
    ),
    "memory-bomb": checks_program("memory-bomb", "x = bytearray(8 * 1024 ** 3)"),
    "syntax-error": unittest_program("syntax-error", "def f(x)\n    return x\n"),
}


@pytest.fixture(scope="module")
def server() -> Iterator[LoopbackE2B]:
    with loopback() as running:
        yield running


@pytest.fixture
def config(server: LoopbackE2B) -> SandboxConfig:
    return loopback_config()


def _sleeper(key: str, seconds: float) -> Program:
    return checks_program(key, f"import time\ntime.sleep({seconds})")


def _requests(events: list[Event], sandbox_id: str) -> list[set[str]]:
    """The program keys of each run request uploaded to a sandbox."""
    return [
        {program["key"] for program in json.loads(data)["programs"]}
        for event in events
        if event.kind == "upload" and event.sandbox_id == sandbox_id
        for name, data in [event.detail]
        if name == e2b_backend.REQUEST_FILE
    ]


def _created_since(server: LoopbackE2B, mark: int) -> list[str]:
    return [e.sandbox_id for e in server.events[mark:] if e.kind == "create"]


def _ended(server: LoopbackE2B, sandbox_id: str) -> bool:
    return any(e.sandbox_id == sandbox_id and e.kind in ("kill", "expire") for e in server.events)


def test_verdicts_equal_the_local_sandboxes(config: SandboxConfig) -> None:
    local_backend = "local-rlimit" if config.allow_unsandboxed else "local"
    with open_sandbox(config, backend=local_backend, warn=lambda m: None) as local:
        expected = {r.key: r for r in local.run(PROGRAMS.values())}
    with open_sandbox(config, backend="e2b") as sandbox:
        got = {r.key: r for r in sandbox.run(PROGRAMS.values())}
        assert sandbox.isolation == expected["pass"].isolation
    assert set(got) == set(PROGRAMS)
    for key, result in got.items():
        want = expected[key]
        assert (result.status, result.category, result.tests_run) == (
            want.status,
            want.category,
            want.tests_run,
        ), key
    assert got["pass"].status == "pass" and got["fake-output"].status != "pass"


def test_describe_checks_the_template_and_asks_its_agent(
    server: LoopbackE2B, config: SandboxConfig
) -> None:
    mark = len(server.events)
    target = describe_backend(config, "e2b")
    assert target is not None
    assert (target.backend, target.location) == ("e2b", "e2b:passbench")
    assert target.environment.name == "host" and target.environment.python_version
    assert "E2B microVM" in target.isolation
    (probe,) = _created_since(server, mark)
    assert _ended(server, probe), "the sandbox that ran `agent --describe` was not killed"


def test_verdicts_stream_as_they_finish_and_every_sandbox_is_killed(
    server: LoopbackE2B, config: SandboxConfig
) -> None:
    mark = len(server.events)
    programs = [_sleeper("slow", 4), PROGRAMS["pass"]]
    arrivals: dict[str, float] = {}
    start = time.monotonic()
    with open_sandbox(config, backend="e2b") as sandbox:
        for result in sandbox.run(programs):
            arrivals[result.key] = time.monotonic() - start
    assert arrivals["pass"] < arrivals["slow"] - 1.5, arrivals  # not held until the end
    (created,) = _created_since(server, mark)
    assert server.kinds("kill")[-1].sandbox_id == created
    assert created not in server.live()
    # the sandbox's life and the command's stream are bounded by the programs' limits
    body = next(e.detail for e in server.events[mark:] if e.kind == "create")
    command_s = e2b_backend.command_timeout_s(programs, config.workers)
    assert body["timeout"] == command_s + e2b_backend.SLACK_S
    assert body["templateID"] == "passbench"
    start_event = next(e for e in server.events[mark:] if e.kind == "start")
    assert command_s * 1000 - 5000 < start_event.detail["timeout_ms"] <= command_s * 1000


def test_an_expiring_sandbox_costs_only_the_pending_programs(
    server: LoopbackE2B, config: SandboxConfig
) -> None:
    programs = [_sleeper(f"p{i}", 0.3) for i in range(6)]
    server.plan("expire", after_lines=2)
    mark = len(server.events)
    warnings: list[str] = []
    one_at_a_time = replace(config, workers=1)
    with open_sandbox(one_at_a_time, backend="e2b", warn=warnings.append) as sandbox:
        results = list(sandbox.run(programs))
    keys = [r.key for r in results]
    assert sorted(keys) == sorted(p.key for p in programs), "a verdict lost or given twice"
    assert all(r.status == "pass" for r in results)
    first, second = _created_since(server, mark)
    assert any(e.kind == "expire" and e.sandbox_id == first for e in server.events)
    (asked_first,) = _requests(server.events, first)
    (asked_again,) = _requests(server.events, second)
    answered_first = asked_first - asked_again
    assert len(answered_first) >= 2, describe(server.events[mark:])
    assert asked_again < asked_first  # only what had no verdict
    assert any("programs again" in warning for warning in warnings), warnings
    assert _ended(server, second) and not server.live()


def test_a_lost_stream_reads_back_what_the_agent_wrote(
    server: LoopbackE2B, config: SandboxConfig
) -> None:
    programs = [_sleeper(f"d{i}", 0.3) for i in range(5)]
    server.plan("drop", after_lines=1)
    mark = len(server.events)
    with open_sandbox(replace(config, workers=1), backend="e2b", warn=lambda m: None) as sandbox:
        results = list(sandbox.run(programs))
    assert sorted(r.key for r in results) == sorted(p.key for p in programs)
    first, second = _created_since(server, mark)
    downloads = [e for e in server.events[mark:] if e.kind == "download"]
    assert [(e.sandbox_id, e.detail) for e in downloads] == [(first, e2b_backend.ANSWER_FILE)]
    (asked_first,) = _requests(server.events, first)
    (asked_again,) = _requests(server.events, second)
    assert asked_again < asked_first
    # the sandbox that lost its stream lived on: it was killed, not left to its timeout
    assert any(e.kind == "kill" and e.sandbox_id == first for e in server.events)
    assert not server.live()


def test_batches_are_chunked_across_sandboxes(
    server: LoopbackE2B, config: SandboxConfig, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(e2b_backend, "CHUNK", 3)
    programs = [unittest_program(f"c{i}", "def f(x):\n    return x + 1\n") for i in range(7)]
    mark = len(server.events)
    with open_sandbox(config, backend="e2b") as sandbox:
        results = list(sandbox.run(programs))
    assert sorted(r.key for r in results) == sorted(p.key for p in programs)
    created = _created_since(server, mark)
    assert len(created) == 3
    asked = [_requests(server.events, sid)[0] for sid in created]
    assert sorted(len(keys) for keys in asked) == [1, 3, 3]
    assert all(_ended(server, sid) for sid in created)


def test_sandboxes_are_killed_when_the_run_fails(
    server: LoopbackE2B, config: SandboxConfig
) -> None:
    def refuse(result: ExecResult) -> None:
        raise RuntimeError("the journal could not be written")

    mark = len(server.events)
    programs = [PROGRAMS["pass"], _sleeper("slow", 30)]
    with (
        pytest.raises(RuntimeError, match="journal"),
        open_sandbox(config, backend="e2b") as sandbox,
    ):
        for result in sandbox.run(programs):  # as the evaluator journals each verdict
            refuse(result)
    (created,) = _created_since(server, mark)
    assert any(e.kind == "kill" and e.sandbox_id == created for e in server.events)
    assert not server.live()


def _one_line(error: BaseException) -> str:
    text = str(error)
    assert "\n" not in text
    return text


def test_a_missing_api_key_is_one_line(
    server: LoopbackE2B, config: SandboxConfig, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("E2B_API_KEY")
    with pytest.raises(InputError) as caught:
        describe_backend(config, "e2b")
    assert "E2B_API_KEY" in _one_line(caught.value)
    with pytest.raises(InputError, match="E2B_API_KEY"):
        open_sandbox(config, backend="e2b")


def test_a_wrong_api_key_is_one_line(
    server: LoopbackE2B, config: SandboxConfig, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("E2B_API_KEY", "e2b_not_the_key")
    with pytest.raises(InputError) as caught:
        describe_backend(config, "e2b")
    assert "refused the API key" in _one_line(caught.value)


def test_an_unknown_template_is_one_line(server: LoopbackE2B, config: SandboxConfig) -> None:
    mark = len(server.events)
    with pytest.raises(InputError) as caught:
        describe_backend(replace(config, backend_config=E2BConfig("no-such-template")), "e2b")
    assert "no template 'no-such-template'" in _one_line(caught.value)
    assert _created_since(server, mark) == []


def test_the_cli_exits_2_for_an_unknown_template(
    server: LoopbackE2B,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    data_dir: Path,
) -> None:
    monkeypatch.setenv("PASSBENCH_DATA_DIR", str(data_dir))
    monkeypatch.setenv("PASSBENCH_CACHE_DIR", str(tmp_path / "cache"))
    argv = ["evaluate", "-b", "humaneval", "--ground-truth", "--id-range", "0-2"]
    argv += ["--backend", "e2b", "--image", "no-such-template", "--output-dir", str(tmp_path)]
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2
    (line,) = [text for text in capsys.readouterr().err.splitlines() if text.strip()]
    assert "no template 'no-such-template'" in line


def test_the_command_timeout_covers_the_programs_limits() -> None:
    programs = [_sleeper(f"t{i}", 0) for i in range(4)]
    programs = [replace(p, timeout_s=10.0) for p in programs]
    serial = e2b_backend.command_timeout_s(programs, workers=1)
    assert serial >= 40 + 10 + e2b_backend.SLACK_S
    assert e2b_backend.command_timeout_s(programs, workers=2) < serial


def test_the_template_dockerfile_is_one_e2b_builds() -> None:
    """deploy/e2b/e2b.Dockerfile through the SDK's own Dockerfile parser (what a template build
    sends to E2B): every COPY source exists in the repository, and the image gets bubblewrap
    and puts passbench first on the login shell's PATH."""
    from e2b import Template

    root = Path(__file__).resolve().parents[3]
    dockerfile = root / "deploy" / "e2b" / "e2b.Dockerfile"
    # COPY sources are relative to the build's context: the repository's root
    template = Template(file_context_path=root).from_dockerfile(str(dockerfile))
    steps = json.loads(Template.to_json(template))["steps"]
    copies = [step["args"][0] for step in steps if step["type"] == "COPY"]
    assert copies and all((root / source).exists() for source in copies), copies
    runs = " ".join(step["args"][0] for step in steps if step["type"] == "RUN")
    assert "bubblewrap" in runs and "passbench env create bigcodebench" in runs
    assert "/etc/profile.d/passbench.sh" in runs


def test_the_sdk_is_imported_only_when_the_backend_is_used() -> None:
    check = (
        "import sys, passbench.apps.cli, passbench.stages.sandbox.remote.e2b_backend; "
        "sys.exit(1 if 'e2b' in sys.modules else 0)"
    )
    assert subprocess.run([sys.executable, "-c", check], timeout=120).returncode == 0
