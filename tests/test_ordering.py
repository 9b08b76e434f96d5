"""The suite's files go to pytest-xdist's workers slowest first (tests/ordering.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.ordering import DURATIONS_FILE, load_durations, slowest_files_first
from tests.test_essential_skips import _run_guard


def test_slowest_files_first_keeps_each_files_tests_together_and_in_order() -> None:
    nodeids = [
        "tests/a/test_quick.py::test_1",
        "tests/a/test_quick.py::test_2",
        "tests/b/test_slow.py::TestIt::test_1[x]",
        "tests/b/test_slow.py::TestIt::test_2",
        "tests/c/test_new.py::test_1",
        "tests/c/test_middle.py::test_1",
    ]
    durations = {"tests/b/test_slow.py": 90.0, "tests/c/test_middle.py": 20.0, "gone.py": 500}
    order = [nodeids[position] for position in slowest_files_first(nodeids, durations)]
    assert order == [
        "tests/b/test_slow.py::TestIt::test_1[x]",
        "tests/b/test_slow.py::TestIt::test_2",
        "tests/c/test_middle.py::test_1",
        # not listed: after the listed ones, in collection order
        "tests/a/test_quick.py::test_1",
        "tests/a/test_quick.py::test_2",
        "tests/c/test_new.py::test_1",
    ]


def test_the_committed_durations_name_test_files_that_exist() -> None:
    durations = load_durations()
    assert durations, f"{DURATIONS_FILE} is missing or empty"
    root = DURATIONS_FILE.parents[1]
    slowest = max(durations, key=durations.__getitem__)
    assert (root / slowest).is_file(), slowest
    assert all(seconds >= 0 for seconds in durations.values())


RECORDING_TEST = (
    "import os\n"
    "def test_{index}():\n"
    "    with open(os.environ['ORDER_LOG'], 'a') as log:\n"
    "        log.write(__name__.rsplit('.', 1)[-1] + '\\n')\n"
)


def test_a_worker_gets_the_slowest_files_first(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """As scripts/check.sh spreads the suite (`--dist loadfile --no-loadscope-reorder`), over
    one worker so its order is the queue's: the listed files by their seconds, then the rest
    (xdist alone would start with the file holding the most tests)."""
    log = tmp_path / "order.log"
    monkeypatch.setenv("ORDER_LOG", str(log))
    many = "".join(RECORDING_TEST.format(index=index) for index in range(4))
    files = {
        "test_alpha.py": RECORDING_TEST.format(index=0),
        "test_many.py": many,
        "test_zulu.py": RECORDING_TEST.format(index=0),
    }
    (pytester.path / "tests").mkdir()
    (pytester.path / "tests" / "durations.json").write_text(
        json.dumps({"tests/test_zulu.py": 100.0, "tests/test_alpha.py": 5.0})
    )
    result = _run_guard(pytester, files, "-n", "1", "--dist", "loadfile", "--no-loadscope-reorder")
    assert result.ret == 0, result.stdout.str()
    ran = log.read_text().split()
    assert ran == ["test_zulu", "test_alpha", *["test_many"] * 4], ran
