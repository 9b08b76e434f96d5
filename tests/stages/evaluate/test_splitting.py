"""A long unittest program split into one program per test method: which classes may be split,
and that the parts' verdicts put back together are the verdict of one run, in the real local
sandbox (bubblewrap)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import replace

import pytest

from passbench.core.journal import program_sha
from passbench.core.records import ErrorCategory, ExecResult, Isolation, Program
from passbench.stages.evaluate.splitting import SplitRun, combine, part_program, splittable_methods
from passbench.stages.sandbox import Sandbox, SandboxConfig, open_sandbox
from passbench.stages.sandbox.base import cpu_share

from ..sandbox.helpers import PYTHON, TEST_LIMITS, bwrap_usable

INDEPENDENT = '''
import os
import unittest

LIMIT = 3

def task_func(n):
    return n + 1

class TestCases(unittest.TestCase):
    """Independent tests."""
    def setUp(self):
        self.value = task_func(1)
    def test_b(self):
        self.assertEqual(self.value, 2)
    def test_a(self):
        self.assertTrue(os.path.isdir("."))
'''


def _rule(tests: str, solution: str = "def task_func(n):\n    return n\n") -> object:
    source = f"import unittest\n{solution}\nclass TestCases(unittest.TestCase):\n{tests}"
    return splittable_methods(source, "TestCases")


def test_independent_methods_in_the_order_unittest_runs_them() -> None:
    assert splittable_methods(INDEPENDENT, "TestCases") == ("test_a", "test_b")


@pytest.mark.parametrize(
    ("tests", "solution"),
    [
        # one test method only: nothing to spread
        ("    def test_a(self):\n        pass\n", ""),
        # a test writes class state another test may read
        (
            "    def test_a(self):\n        type(self).x = 1\n"
            "    def test_b(self):\n        self.__class__.y = 2\n",
            "",
        ),
        # a seed one test sets for the next
        (
            "    def test_a(self):\n        random.seed(3)\n    def test_b(self):\n        pass\n",
            "import random\n",
        ),
        # a module-level container the solution fills across calls
        (
            "    def test_a(self):\n        task_func(1)\n"
            "    def test_b(self):\n        task_func(2)\n",
            "SEEN = []\ndef task_func(n):\n    SEEN.append(n)\n    return len(SEEN)\n",
        ),
        # a global the solution rebinds
        (
            "    def test_a(self):\n        pass\n    def test_b(self):\n        pass\n",
            "COUNT = 0\ndef task_func():\n    global COUNT\n    COUNT += 1\n",
        ),
        # a mutable default argument
        (
            "    def test_a(self):\n        pass\n    def test_b(self):\n        pass\n",
            "def task_func(n, seen=[]):\n    seen.append(n)\n",
        ),
        # pyplot's current figure, which one test leaves behind for the next
        (
            "    def test_a(self):\n        plt.hist([1])\n    def test_b(self):\n        pass\n",
            "import matplotlib.pyplot as plt\n",
        ),
        # the working directory and the environment
        (
            "    def test_a(self):\n        os.chdir('/')\n    def test_b(self):\n        pass\n",
            "import os\n",
        ),
        (
            "    def test_a(self):\n        os.environ['X'] = '1'\n"
            "    def test_b(self):\n        pass\n",
            "import os\n",
        ),
        # a patcher started by hand stays for the tests after it
        (
            "    def test_a(self):\n        patch('os.getcwd').start()\n"
            "    def test_b(self):\n        pass\n",
            "from unittest.mock import patch\n",
        ),
        # a class teardown would run after other tests than in one run
        (
            "    @classmethod\n    def tearDownClass(cls):\n        pass\n"
            "    def test_a(self):\n        pass\n    def test_b(self):\n        pass\n",
            "",
        ),
        # a class attribute that is not a constant
        (
            "    shared = []\n"
            "    def test_a(self):\n        pass\n    def test_b(self):\n        pass\n",
            "",
        ),
        # subtests
        (
            "    def test_a(self):\n        with self.subTest(i=1):\n            pass\n"
            "    def test_b(self):\n        pass\n",
            "",
        ),
    ],
)
def test_classes_whose_tests_may_share_state_are_not_split(tests: str, solution: str) -> None:
    assert _rule(tests, solution) is None


def test_set_up_class_may_set_class_state() -> None:
    tests = (
        "    @classmethod\n    def setUpClass(cls):\n        cls.data = [1, 2]\n"
        "    def test_a(self):\n        pass\n    def test_b(self):\n        pass\n"
    )
    assert _rule(tests) == ("test_a", "test_b")


def test_a_part_keeps_every_line_number_and_loads_one_method() -> None:
    program = Program(key="t#gt", task_id="t", source=INDEPENDENT)
    part = part_program(program, ("test_a", "test_b"), "test_b")
    assert part.key == "t#gt::test_b"
    assert part.source.startswith(INDEPENDENT)
    assert "'test_a'" in part.source.split(INDEPENDENT, 1)[1]


# ---- the verdict of the parts is the verdict of one run, in the real sandbox ------------------

HEADER = """
import time
import unittest

def task_func(n):
    return n + 1

class TestCases(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.base = task_func(0)
    def setUp(self):
        self.one = task_func(self.base - 1)
"""

PASSING = (
    HEADER
    + """
    def test_a(self):
        self.assertEqual(self.one, 1)
    def test_b(self):
        time.sleep(0.2)
        self.assertEqual(task_func(2), 3)
    def test_c(self):
        self.assertIsInstance(self.base, int)
"""
)

FAILING = (
    HEADER
    + """
    def test_a(self):
        self.assertEqual(self.one, 1)
    def test_d(self):
        self.assertEqual(task_func(2), 4, "off by one")
    def test_b(self):
        self.assertIn(5, [1, 2])
    def test_c(self):
        self.assertEqual(self.base, 1)
"""
)

ERRORING = (
    HEADER
    + """
    def test_a(self):
        raise KeyError("missing")
    def test_b(self):
        self.assertEqual(self.one, 1)
    def test_c(self):
        [][3]
    def test_d(self):
        self.assertEqual(task_func(1), 3)
"""
)

# the alarm at the time limit interrupts the hanging test; the others still run
ALARMED = (
    HEADER
    + """
    def test_a(self):
        self.assertEqual(self.one, 1)
    def test_b(self):
        time.sleep(60)
    def test_c(self):
        self.assertEqual(task_func(1), 2)
"""
)

# a test that outlives even the alarm: the process is killed at its deadline
HANGING = (
    HEADER
    + """
    def test_a(self):
        self.assertEqual(self.one, 1)
    def test_b(self):
        end = time.monotonic() + 60
        while time.monotonic() < end:
            try:
                time.sleep(60)
            except BaseException:
                pass
    def test_c(self):
        self.assertEqual(task_func(1), 2)
"""
)

NOT_LOADING = "import no_such_module_here\n" + PASSING

CLASSES = {
    "passing": (PASSING, "pass", None),
    "failing": (FAILING, "fail", ErrorCategory.ASSERTION_FAILED),
    "erroring": (ERRORING, "fail", ErrorCategory.ASSERTION_FAILED),
    "alarmed": (ALARMED, "fail", ErrorCategory.TIMEOUT),
    "hanging": (HANGING, "timeout", ErrorCategory.TIMEOUT),
    "not-loading": (NOT_LOADING, "fail", ErrorCategory.IMPORT_ERROR),
}


@pytest.fixture(scope="module")
def sandbox() -> Iterator[Sandbox]:
    if not bwrap_usable():
        pytest.skip("bubblewrap cannot run here")
    config = SandboxConfig(python=PYTHON, workers=4, limits=TEST_LIMITS)
    with open_sandbox(config) as opened:
        yield opened


def _program(name: str, source: str) -> Program:
    return Program(key=f"{name}#gt", task_id=name, source=source, timeout_s=3.0)


def _same_verdict(split: ExecResult, whole: ExecResult) -> None:
    assert split.key == whole.key
    assert split.status == whole.status
    assert split.category == whole.category
    assert list(split.details) == list(whole.details)  # the same tests, in the same order
    assert dict(split.details) == dict(whole.details)  # with the same tracebacks
    assert split.reason == whole.reason
    if whole.status != "timeout":
        assert split.tests_run == whole.tests_run


@pytest.mark.bwrap
def test_parts_together_give_the_verdict_of_one_run(sandbox: Sandbox) -> None:
    wholes = {name: _program(name, source) for name, (source, _, _) in CLASSES.items()}
    split = SplitRun(lambda shas: {}, split_from_s=1.0)
    # known to wait (a tenth of a core), so long enough ones are split
    timed = [replace(p, expected_duration_s=5.0, expected_cpu_share=0.1) for p in wholes.values()]
    running = split.expand(timed)
    assert sorted(split.split_keys) == sorted(p.key for p in timed)
    assert len(running) == 3 + 4 + 4 + 3 + 3 + 3
    # every part and every whole program, in one batch over the same workers
    results = _by_key(sandbox.run([*running, *wholes.values()]))
    # each program's CPU time is measured (the timings cache keeps it for the next run)
    assert all(result.cpu_s is not None for result in results.values())
    combined: dict[str, ExecResult] = {}
    for part in running:
        got = split.collect(results[part.key])
        if got is not None:
            combined[got.key] = got
    for name, (_, status, category) in CLASSES.items():
        whole = results[f"{name}#gt"]
        assert (whole.status, whole.category) == (status, category), (name, whole.reason)
        _same_verdict(combined[whole.key], whole)
    # the parts' own verdicts are kept, by their programs' hashes, to schedule the next run
    assert set(split.parts_done) == {program_sha(p.source) for p in running}


def _by_key(results: Iterable[ExecResult]) -> Mapping[str, ExecResult]:
    return {result.key: result for result in results}


def _passed(duration_s: float, cpu_s: float | None, cpu_wait_s: float | None = None) -> ExecResult:
    return ExecResult(
        key="",
        task_id="t",
        status="pass",
        category=None,
        details={},
        duration_s=duration_s,
        wall_s=duration_s + 0.1,
        isolation=Isolation.BUBBLEWRAP,
        cpu_s=cpu_s,
        cpu_wait_s=cpu_wait_s,
    )


def test_parts_are_scheduled_by_their_own_durations() -> None:
    program = Program(
        key="t#gt",
        task_id="t",
        source=INDEPENDENT,
        expected_duration_s=10.0,
        expected_cpu_share=0.1,
    )
    first = part_program(program, ("test_a", "test_b"), "test_a")
    known = {program_sha(first.source): _passed(9.5, cpu_s=0.19)}
    split = SplitRun(lambda shas: {s: known[s] for s in shas if s in known})
    parts = split.expand([program, Program(key="short", task_id="s", source=INDEPENDENT)])
    assert [(p.key, p.expected_duration_s, p.expected_cpu_share) for p in parts] == [
        ("t#gt::test_a", 9.5, pytest.approx(0.02)),
        ("t#gt::test_b", 5.0, 0.1),  # not run before: an equal share of the whole, its share
        ("short", None, None),  # no expected duration: never split
    ]


def _long(key: str, duration: float, share: float | None) -> Program:
    return Program(
        key=key,
        task_id=key,
        source=INDEPENDENT,
        expected_duration_s=duration,
        expected_cpu_share=share,
    )


def test_only_long_programs_known_to_wait_are_split() -> None:
    programs = [
        _long("waits", 20.0, 0.1),  # sleeps or polls: its parts' waits overlap
        _long("computes", 20.0, 0.95),  # its parts would only share the same busy cores
        _long("barely-computes", 20.0, 0.5),
        _long("unknown", 20.0, None),  # timed before CPU times were recorded
        _long("short", 2.0, 0.1),
    ]
    split = SplitRun(lambda shas: {})
    expanded = split.expand(programs)
    assert split.split_keys == ["waits"]
    assert [p.key for p in expanded] == [
        "waits::test_a",
        "waits::test_b",
        "computes",
        "barely-computes",
        "unknown",
        "short",
    ]


def test_a_share_of_a_core_discounts_the_wait_for_a_busy_cpu() -> None:
    # BigCodeBench/0 measured on this machine under a load of 4: it computes throughout, but
    # got a core for only 30 of its 52.7 s; BigCodeBench/459 waits on shell scripts
    assert cpu_share(_passed(52.7, cpu_s=29.7, cpu_wait_s=22.7)) == pytest.approx(0.99)
    assert cpu_share(_passed(5.26, cpu_s=0.106, cpu_wait_s=0.083)) == pytest.approx(0.02, abs=0.01)
    assert cpu_share(_passed(5.0, cpu_s=None)) is None
    # a run that waited for a CPU throughout would have used one throughout
    assert cpu_share(_passed(1.0, cpu_s=0.5, cpu_wait_s=1.0)) == 1.0


def test_the_parts_cpu_times_add_up() -> None:
    program = Program(key="t#gt", task_id="t", source=INDEPENDENT, timeout_s=30.0)
    whole = combine(program, [_passed(2.0, 0.5, 0.25), _passed(3.0, 1.0, None)])
    assert (whole.cpu_s, whole.cpu_wait_s, whole.duration_s) == (1.5, 0.25, 5.0)
    assert combine(program, [_passed(2.0, 0.5), _passed(3.0, None)]).cpu_s is None


def test_parts_that_together_outlast_the_limit_time_out() -> None:
    program = Program(key="t#gt", task_id="t", source=INDEPENDENT, timeout_s=3.0)
    part = ExecResult(
        key="x",
        task_id="t",
        status="pass",
        category=None,
        details={},
        duration_s=2.0,
        wall_s=2.1,
        isolation=Isolation.BUBBLEWRAP,
        tests_run=1,
    )
    result = combine(program, [part, part])
    assert (result.status, result.category, result.details) == (
        "timeout",
        ErrorCategory.TIMEOUT,
        {},
    )
    assert combine(program, [part]).status == "pass"
