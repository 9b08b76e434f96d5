"""A test run that skipped the sandbox tests is a failed run, unless the machine opts out."""

from __future__ import annotations

import fnmatch
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
ALLOW_SKIPS_VARIABLE = "PASSBENCH_TESTS_ALLOW_ESSENTIAL_SKIPS"  # tests/conftest.py


def _pytest_without_bwrap(tmp_path: Path, allow: bool) -> subprocess.CompletedProcess[str]:
    """The isolation tests, on a PATH where bubblewrap cannot be found (as on a machine
    without it): every one of them skips."""
    env = {k: v for k, v in os.environ.items() if k != ALLOW_SKIPS_VARIABLE}
    env["PATH"] = str(tmp_path)  # no bwrap here
    if allow:
        env[ALLOW_SKIPS_VARIABLE] = "1"
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "tests/stages/sandbox/test_isolation.py",
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_skipped_isolation_tests_fail_the_run(tmp_path: Path) -> None:
    run = _pytest_without_bwrap(tmp_path, allow=False)
    assert run.returncode == 1, run.stdout
    assert "isolation or real-environment tests were skipped" in run.stdout
    assert "SKIPPED ESSENTIAL tests/stages/sandbox/test_isolation.py::" in run.stdout


def test_a_machine_that_cannot_run_them_can_opt_out(tmp_path: Path) -> None:
    run = _pytest_without_bwrap(tmp_path, allow=True)
    assert run.returncode == 0, run.stdout
    assert " skipped" in run.stdout and "SKIPPED ESSENTIAL" not in run.stdout


# ------------------------------------------ the same guard, in a throwaway project (pytester)

CONFTEST = REPO / "tests" / "conftest.py"


def _run_guard(pytester: pytest.Pytester, files: dict[str, str], *options: str) -> pytest.RunResult:
    """This repository's tests/conftest.py over `files` (paths under tests/), as CI runs it
    (`options`: "-n", "2" runs it over pytest-xdist workers, as scripts/check.sh does)."""
    (pytester.path / "tests").mkdir(exist_ok=True)
    (pytester.path / "tests" / "conftest.py").write_text(CONFTEST.read_text())
    # what the conftest imports of this repository's tests/
    for module in ("datasets.py", "ordering.py"):
        (pytester.path / "tests" / module).write_text(CONFTEST.with_name(module).read_text())
    for name, text in files.items():
        path = pytester.path / "tests" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return pytester.runpytest_subprocess("-p", "no:cacheprovider", *options, "tests")


@pytest.fixture
def no_opt_out(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ALLOW_SKIPS_VARIABLE, raising=False)


IMPORTORSKIP_MODULE = (
    "import pytest\n"
    "pytest.importorskip('passbench_no_such_sdk')\n"
    "def test_through_the_sdk():\n"
    "    assert False, 'never collected'\n"
)
SKIPPING_TEST = "import pytest\ndef test_it():\n    pytest.skip('chromium is not installed')\n"


#: The essential skips the guard lists for the files below, sorted.
EXPECTED = (
    "SKIPPED ESSENTIAL tests/apps/leaderboard/web/test_ui.py::test_it: chromium *",
    "SKIPPED ESSENTIAL tests/stages/sandbox/test_s.py::test_it: chromium *",
    "SKIPPED ESSENTIAL tests/test_gone.py (whole module, at collection): no server binary",
    "SKIPPED ESSENTIAL tests/test_sdk.py (whole module, at collection): *no_such_sdk*",
)

#: Serially, and over two pytest-xdist workers (where the skips happen in the workers and
#: the verdict is the controller's).
RUN_MODES = pytest.mark.parametrize("options", [(), ("-n", "2")], ids=["serial", "xdist"])


@RUN_MODES
@pytest.mark.usefixtures("no_opt_out")
def test_skips_at_collection_and_in_the_essential_folders_fail_the_run(
    pytester: pytest.Pytester, options: tuple[str, ...]
) -> None:
    """A module-level importorskip or skip drops its tests before any test hook runs; every
    test under tests/stages/sandbox and tests/apps/leaderboard/web is essential, marked or not;
    an unmarked skip elsewhere and a "not applicable" one are not."""
    result = _run_guard(
        pytester,
        {
            "test_ordinary.py": "def test_one():\n    pass\n",
            "test_sdk.py": IMPORTORSKIP_MODULE,
            "test_gone.py": (
                "import pytest\n"
                "pytest.skip('no server binary', allow_module_level=True)\n"
                "def test_x():\n    pass\n"
            ),
            "test_root.py": (
                "import pytest\n"
                "pytest.skip('not applicable as root', allow_module_level=True)\n"
                "def test_y():\n    pass\n"
            ),
            "stages/sandbox/test_s.py": SKIPPING_TEST,
            "apps/leaderboard/web/test_ui.py": SKIPPING_TEST,
            "apps/test_other.py": SKIPPING_TEST,
        },
        *options,
    )
    assert result.ret == 1, result.stdout.str()
    result.stdout.fnmatch_lines(["*isolation or real-environment tests were skipped*"])
    # workers report in their own order: the set matters, not the order
    essential = sorted(line for line in result.stdout.lines if line.startswith("SKIPPED ESSENTIAL"))
    assert len(essential) == len(EXPECTED), essential  # not test_root.py nor apps/test_other.py
    for line, pattern in zip(essential, EXPECTED, strict=True):
        assert fnmatch.fnmatch(line, pattern), essential


@RUN_MODES
@pytest.mark.usefixtures("no_opt_out")
def test_a_run_that_collected_only_a_skipped_module_fails(
    pytester: pytest.Pytester, options: tuple[str, ...]
) -> None:
    result = _run_guard(pytester, {"test_sdk.py": IMPORTORSKIP_MODULE}, *options)
    assert result.ret == 1, result.stdout.str()


def test_the_opt_out_accepts_collection_skips(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ALLOW_SKIPS_VARIABLE, "1")
    result = _run_guard(
        pytester,
        {"test_ordinary.py": "def test_one():\n    pass\n", "test_sdk.py": IMPORTORSKIP_MODULE},
    )
    assert result.ret == 0, result.stdout.str()


def test_the_essential_folders_exist() -> None:
    """A folder renamed by a regrouping would silently stop counting (tests/sandbox did)."""
    spec = importlib.util.spec_from_file_location("_conftest_copy", CONFTEST)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.ESSENTIAL_FOLDERS
    for folder in module.ESSENTIAL_FOLDERS:
        assert folder.is_dir(), folder
        assert any(folder.glob("test_*.py")), folder
