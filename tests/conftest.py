"""Fixtures every test folder may use: the real benchmark data, a headless Chromium."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from tests.datasets import DATA_DIR
from tests.ordering import load_durations, slowest_files_first

if TYPE_CHECKING:
    from tests.apps.leaderboard.web.browser import Browser

REPO = Path(__file__).resolve().parents[1]

#: tests/test_essential_skips.py runs this file's guard in a throwaway project.
pytest_plugins = ("pytester",)


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """The shared datasets folder: PASSBENCH_DATA_DIR, else ../shared/datasets beside the repo."""
    if not (DATA_DIR / "bigcodebench" / "BigCodeBench-v0.1.4.jsonl.gz").is_file():
        pytest.fail(f"benchmark data not found in {DATA_DIR}; set PASSBENCH_DATA_DIR")
    return DATA_DIR


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    """One headless Chromium per test module (its pages are opened by each test); modules
    that use it skip themselves where Chromium is not installed."""
    from tests.apps.leaderboard.web.browser import Browser

    with Browser(tmp_path_factory.mktemp("chromium")) as opened:
        yield opened


@pytest.fixture
def visible_tmp_path() -> Iterator[Path]:
    """A temporary folder the sandbox can show to samples: pytest's own live under /tmp,
    which the sandbox replaces with the sample's scratch folder."""
    parent = REPO / "build" / "test-folders"
    parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=parent) as folder:
        yield Path(folder)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """In pytest-xdist's workers (whose collection order is the controller's queue), the
    slowest files go first (tests/ordering.py); a run in one process keeps the reading order."""
    if not hasattr(config, "workerinput"):
        return
    order = slowest_files_first([item.nodeid for item in items], load_durations())
    items[:] = [items[position] for position in order]


# ------------------------------------------------ a green run that tested no isolation is red

#: Set to 1 on a machine that cannot run bubblewrap or has no evaluation environment, to accept
#: a run where the tests that check isolation and verdicts there were skipped. Never set in CI.
ALLOW_SKIPS_VARIABLE = "PASSBENCH_TESTS_ALLOW_ESSENTIAL_SKIPS"
#: Markers of the tests that prove the sandbox isolates and the real environment gives the
#: official verdicts.
ESSENTIAL_MARKERS = ("bwrap", "evalenv", "hostile")
#: Folders whose every test is essential: the sandbox's own tests, and the leaderboard's UI
#: driven in a real Chromium.
ESSENTIAL_FOLDERS = (
    REPO / "tests" / "stages" / "sandbox",
    REPO / "tests" / "apps" / "leaderboard" / "web",
)
#: A skip whose reason starts with this is a property of the host the test does not apply to
#: (root cannot be held by RLIMIT_NPROC), not an inability to test.
NOT_APPLICABLE = "not applicable"

_essential_skips: list[str] = []


def _is_essential(item: pytest.Item) -> bool:
    if any(item.get_closest_marker(name) for name in ESSENTIAL_MARKERS):
        return True
    path = Path(str(item.path))
    return any(path.is_relative_to(folder) for folder in ESSENTIAL_FOLDERS)


def _skip_reason(longrepr: object) -> str:
    reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
    return str(reason).removeprefix("Skipped: ")


#: The report property that marks an essential skip: the worker that ran the test sets it,
#: the process that logs reports gathers it (the same process, or pytest-xdist's controller).
ESSENTIAL_SKIP_PROPERTY = "passbench_essential_skip"


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):  # type: ignore[no-untyped-def]
    report = yield
    if report.skipped and _is_essential(item):
        reason = _skip_reason(report.longrepr)
        if not reason.startswith(NOT_APPLICABLE):
            report.user_properties.append((ESSENTIAL_SKIP_PROPERTY, reason))
    return report


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    for name, reason in report.user_properties:
        if name == ESSENTIAL_SKIP_PROPERTY:
            _essential_skips.append(f"{report.nodeid}: {reason}")


def pytest_collectreport(report: pytest.CollectReport) -> None:
    """A module that skips while it is collected (a module-level `pytest.importorskip` or
    `pytest.skip(allow_module_level=True)`) drops every test in it before any of the hooks
    above see one: in a dev environment (scripts/setup.sh --dev installs every optional
    dependency) that is always an inability to test, so it counts as an essential skip.
    pytest-xdist sends a worker's skipped collection to the controller, which calls this too."""
    if report.skipped:
        reason = _skip_reason(report.longrepr)
        if not reason.startswith(NOT_APPLICABLE):
            _essential_skips.append(f"{report.nodeid} (whole module, at collection): {reason}")


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if hasattr(session.config, "workerinput"):
        return  # a pytest-xdist worker: its controller gathered the reports and decides
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
    if session.exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED):
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
