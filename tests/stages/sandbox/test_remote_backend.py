"""The base every remote backend shares (remote/backend.py): one run-and-retry rule, and the
isolation and cgroup taken from the agent's closing line."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from passbench.core.errors import BackendUnavailable, SandboxError
from passbench.core.records import ExecResult, Isolation, Program
from passbench.stages.sandbox.remote.backend import RemoteBackend

from .helpers import unittest_program


class _Flaky(RemoteBackend):
    """Loses its place after the first verdict of the first attempt, then answers the rest."""

    def __init__(self, done: dict[str, str]) -> None:
        self.warnings: list[str] = []
        super().__init__("flaky backend", "flaky", self.warnings.append)
        self.asked: list[list[str]] = []
        self.done = done
        self.closed = False

    def _attempt(self, programs: list[Program]) -> Iterator[ExecResult]:
        self.asked.append([program.key for program in programs])
        for program in programs:
            yield ExecResult(
                key=program.key,
                task_id=program.task_id,
                status="pass",
                category=None,
                details={},
                duration_s=0.0,
                wall_s=0.0,
                isolation=Isolation.BUBBLEWRAP,
            )
            if len(self.asked) == 1:
                raise BackendUnavailable("the connection dropped")
        self._take_done(self.done)

    def close(self) -> None:
        self.closed = True


def test_lost_programs_are_asked_again_and_no_verdict_twice(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("time.sleep", lambda seconds: None)  # the retry's backoff
    programs = [unittest_program(f"p{i}", "def f(x):\n    return x + 1\n") for i in range(3)]
    with _Flaky({"isolation": "rlimit", "cgroup": "v2"}) as backend:
        keys = [result.key for result in backend.run(programs)]
        assert backend.isolation == Isolation.RLIMIT and backend.cgroup == "flaky:v2"
    assert sorted(keys) == ["p0", "p1", "p2"]
    assert backend.asked == [["p0", "p1", "p2"], ["p1", "p2"]]
    assert backend.closed
    assert len(backend.warnings) == 1 and "flaky backend" in backend.warnings[0]


def test_an_isolation_the_agent_made_up_is_refused() -> None:
    backend = _Flaky({"isolation": "hopefully"})
    with pytest.raises(SandboxError, match="flaky backend: the agent reported isolation"):
        backend._take_done({"isolation": "hopefully"})
    assert backend.isolation == Isolation.BUBBLEWRAP and backend.cgroup == "flaky"
