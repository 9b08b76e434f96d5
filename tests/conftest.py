"""Fixtures every test folder may use: the real benchmark data."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """The shared datasets folder: PASSBENCH_DATA_DIR, else ../shared/datasets beside the repo."""
    path = Path(os.environ.get("PASSBENCH_DATA_DIR") or REPO / ".." / "shared" / "datasets")
    if not (path / "bigcodebench" / "BigCodeBench-v0.1.4.jsonl.gz").is_file():
        pytest.fail(f"benchmark data not found in {path}; set PASSBENCH_DATA_DIR")
    return path.resolve()


@pytest.fixture
def visible_tmp_path() -> Iterator[Path]:
    """A temporary folder the sandbox can show to samples: pytest's own live under /tmp,
    which the sandbox replaces with the sample's scratch folder."""
    parent = REPO / "build" / "test-folders"
    parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=parent) as folder:
        yield Path(folder)


# ------------------------------------------------ a green run that tested no isolation is red

#: Set to 1 on a machine that cannot run bubblewrap or has no evaluation environment, to accept
#: a run where the tests that check isolation and verdicts there were skipped. Never set in CI.
ALLOW_SKIPS_VARIABLE = "PASSBENCH_TESTS_ALLOW_ESSENTIAL_SKIPS"
#: Markers of the tests that prove the sandbox isolates and the real environment gives the
#: official verdicts; every test under tests/stages/sandbox/ counts as one of them too.
ESSENTIAL_MARKERS = ("bwrap", "evalenv", "hostile")
#: A skip whose reason starts with this is a property of the host the test does not apply to
#: (root cannot be held by RLIMIT_NPROC), not an inability to test.
NOT_APPLICABLE = "not applicable"

_SANDBOX_TESTS = REPO / "tests" / "sandbox"
_essential_skips: list[str] = []


def _is_essential(item: pytest.Item) -> bool:
    if any(item.get_closest_marker(name) for name in ESSENTIAL_MARKERS):
        return True
    return Path(str(item.path)).is_relative_to(_SANDBOX_TESTS)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):  # type: ignore[no-untyped-def]
    report = yield
    if report.skipped and _is_essential(item):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        reason = reason.removeprefix("Skipped: ")
        if not reason.startswith(NOT_APPLICABLE):
            _essential_skips.append(f"{item.nodeid}: {reason}")
    return report


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if not _essential_skips or os.environ.get(ALLOW_SKIPS_VARIABLE) == "1":
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.ensure_newline()
        reporter.write_sep("=", "isolation or real-environment tests were skipped", red=True)
        for line in _essential_skips:
            reporter.write_line(f"SKIPPED ESSENTIAL {line}")
        reporter.write_line(
            f"These tests prove the sandbox and the official verdicts; a run that skips them "
            f"fails. On a machine that cannot run them, set {ALLOW_SKIPS_VARIABLE}=1."
        )
    if session.exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
