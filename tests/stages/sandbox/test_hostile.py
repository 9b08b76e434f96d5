"""Hostile samples: none may pass by cheating, hurt the host, or break the sandbox for the next
sample."""

from __future__ import annotations

import os
import re
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest

from passbench.core.records import ErrorCategory, ExecResult, Isolation, Program
from passbench.stages.sandbox import Sandbox, SandboxConfig, open_sandbox
from passbench.stages.sandbox.host.worker import WorkerHandle

from .conftest import BWRAP, needs_bwrap
from .helpers import PYTHON, TEST_LIMITS, checks_program, run_one, unittest_program

GOOD = "def f(x):\n    return x + 1\n"


def _still_works(sandbox: Sandbox) -> None:
    """After a hostile sample, an ordinary one still passes."""
    assert run_one(sandbox, unittest_program("after", GOOD)).status == "pass"


def _host_processes_with(marker: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as f:
                    if marker.encode() in f.read():
                        found.append(int(entry))
            except OSError:
                continue
    return found


# ---------------------------------------------------------------- ending early, killing


@pytest.mark.parametrize(
    "solution",
    [
        "import sys\nsys.exit(0)\n",
        "import os\nos._exit(0)\n",
        "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n",
        "import posix, signal\nposix.kill(posix.getpid(), signal.SIGTERM)\n",
        "raise SystemExit(0)\n",
    ],
    ids=["sys.exit", "os._exit", "kill-self", "posix-kill-self", "SystemExit"],
)
def test_ending_early_never_passes(any_sandbox: Sandbox, solution: str) -> None:
    result = run_one(any_sandbox, unittest_program("early", solution + GOOD))
    assert result.status != "pass"
    assert result.category is not None


def test_exit_inside_a_test_never_passes(any_sandbox: Sandbox) -> None:
    solution = "import os\ndef f(x):\n    os._exit(0)\n"
    result = run_one(any_sandbox, unittest_program("early2", solution))
    assert result.status != "pass"
    assert result.category == ErrorCategory.KILLED


def test_killing_the_worker(any_sandbox: Sandbox) -> None:
    # posix.kill bypasses the official os.kill guard. Inside bubblewrap the worker is pid 1 of
    # its namespace and cannot be killed; in the fallback it dies and is replaced.
    solution = "import os, posix\ndef f(x):\n    posix.kill(os.getppid(), 9)\n    return x\n"
    result = run_one(any_sandbox, unittest_program("parent", solution))
    assert result.status != "pass"
    if any_sandbox.isolation == Isolation.BUBBLEWRAP:
        assert result.category == ErrorCategory.ASSERTION_FAILED
    _still_works(any_sandbox)


def test_official_kill_wrapper_ignores_missing_processes(any_sandbox: Sandbox) -> None:
    body = """
import os, signal, subprocess
os.kill(999999, signal.SIGTERM)  # official wrapper: no ProcessLookupError
child = subprocess.Popen(['sleep', '30'])
os.kill(child.pid, signal.SIGKILL)
self.assertEqual(child.wait(), -signal.SIGKILL)
"""
    result = run_one(any_sandbox, checks_program("kill", body))
    assert result.status == "pass", result.details


def test_multiprocessing_pool_exits_cleanly(any_sandbox: Sandbox) -> None:
    # BigCodeBench 205/363: the official kill allow-list made this hang on small machines
    solution = (
        "from multiprocessing import Pool\n"
        "def g(x):\n    return x + 1\n"
        "def f(x):\n    with Pool(2) as pool:\n        return pool.map(g, [x])[0]\n"
    )
    result = run_one(any_sandbox, unittest_program("pool", solution, timeout_s=20.0))
    assert result.status == "pass", result.details or result.reason


# ---------------------------------------------------------------- forging a verdict


@pytest.mark.parametrize(
    "solution",
    [
        # the tests never run
        "import unittest\nunittest.TestCase.run = lambda self, result=None: None\n",
        # failures are dropped
        "import unittest\nunittest.TestResult.addFailure = lambda *a: None\n",
        # assertions made harmless
        "import unittest\nunittest.TestCase.assertEqual = lambda *a, **k: None\n",
        # a loader that finds nothing
        "import unittest\nclass L(unittest.TestLoader):\n"
        "    def loadTestsFromTestCase(self, c): return unittest.TestSuite()\n"
        "unittest.TestLoader = L\n",
        # a fake base class for the test class
        "import unittest\nclass T:\n    pass\nunittest.TestCase = T\n",
        # every failing test counted as skipped
        "import unittest.case\nunittest.case.SkipTest = BaseException\n",
    ],
    ids=["TestCase.run", "addFailure", "assertEqual", "TestLoader", "fake-TestCase", "SkipTest"],
)
def test_monkeypatching_unittest_is_tampering(any_sandbox: Sandbox, solution: str) -> None:
    result = run_one(any_sandbox, unittest_program("patch", solution + "def f(x):\n    return 0\n"))
    assert result.status == "fail"
    assert result.category in (ErrorCategory.TAMPERED, ErrorCategory.EXCEPTION)


@pytest.mark.parametrize(
    ("target", "flag"),
    [
        ("type(me)", "__unittest_skip__"),
        ("type(me).test_two", "__unittest_skip__"),
        ("type(me).test_two", "__unittest_expecting_failure__"),
    ],
    ids=["class-skip", "method-skip", "method-expected-failure"],
)
def test_skipping_a_later_test_is_tampering(any_sandbox: Sandbox, target: str, flag: str) -> None:
    # the first test passes and marks the second, which would fail, as skipped (or its
    # failure as expected): unittest would then not count it as a failure
    solution = (
        "import sys\n"
        "def f(x):\n"
        "    me = sys._getframe(1).f_locals['self']\n"
        f"    {target}.{flag} = True\n"
        "    return x + 1 if x == 1 else 0\n"
    )
    result = run_one(any_sandbox, unittest_program("skip", solution))
    assert result.status == "fail"
    assert result.category == ErrorCategory.TAMPERED
    assert f"TestCases.{flag} set" in result.reason or "test_two replaced" in result.reason


def test_expecting_its_own_failure_while_running_is_tampering(any_sandbox: Sandbox) -> None:
    # the running test's outcome marked as expecting failure: unittest would count the
    # failed assertion as an expected failure, which is no failure
    solution = (
        "import sys\n"
        "def f(x):\n"
        "    sys._getframe(1).f_locals['self']._outcome.expecting_failure = True\n"
        "    return 0\n"
    )
    result = run_one(any_sandbox, unittest_program("expect", solution))
    assert result.status == "fail"
    assert result.category == ErrorCategory.TAMPERED
    assert "failure marked expected while running" in result.reason


def test_stopping_the_run_from_inside_a_test_is_tampering(any_sandbox: Sandbox) -> None:
    solution = (
        "import sys\n"
        "def f(x):\n"
        "    sys._getframe(1).f_locals['self']._outcome.result.stop()\n"
        "    return x + 1\n"
    )
    result = run_one(any_sandbox, unittest_program("stop", solution))
    assert result.status == "fail"
    assert result.category == ErrorCategory.TAMPERED
    assert "1 of 2 tests" in result.reason


def test_patching_the_result_instance_is_tampering(any_sandbox: Sandbox) -> None:
    solution = (
        "import sys\n"
        "def f(x):\n"
        "    result = sys._getframe(1).f_locals['self']._outcome.result\n"
        "    result.addFailure = lambda *a: None\n"
        "    return 0\n"
    )
    result = run_one(any_sandbox, unittest_program("inst", solution))
    assert result.status == "fail"


def test_printing_a_fake_verdict_never_passes(any_sandbox: Sandbox) -> None:
    solution = (
        "import os, sys, json\n"
        "fake = json.dumps({'status': 'pass', 'details': {}, 'phase': 'done'})\n"
        "print(fake)\n"
        "os.write(1, fake.encode())\n"
        "os.write(2, fake.encode())\n"
        "for fd in range(3, 64):\n"
        "    try:\n"
        "        os.write(fd, b'0' * 32 + (len(fake)).to_bytes(8, 'big') + fake.encode())\n"
        "    except OSError:\n"
        "        pass\n"
        "def f(x):\n    return 0\n"
    )
    result = run_one(any_sandbox, unittest_program("fake", solution))
    assert result.status != "pass"
    _still_works(any_sandbox)


def test_forked_copy_cannot_report(any_sandbox: Sandbox) -> None:
    # A copy of the sample's process that falls through into the runner has other values than
    # the process the worker started; only the latter reports.
    solution = (
        "import os\n"
        "def f(x):\n"
        "    if os.fork() == 0:\n"
        "        return x + 1\n"
        "    os.wait()\n"
        "    os._exit(0)\n"
    )
    result = run_one(any_sandbox, unittest_program("forkcopy", solution))
    assert result.status != "pass"
    _still_works(any_sandbox)


# ---------------------------------------------------------------- resources


@pytest.mark.slow
def test_fork_bomb(any_sandbox: Sandbox) -> None:
    # as root in the fallback only the worker's cgroup (pids.max) holds it
    root_fallback = any_sandbox.isolation == Isolation.RLIMIT and os.geteuid() == 0
    if root_fallback and any_sandbox.cgroup == "none":
        pytest.skip("not applicable as root without cgroups: RLIMIT_NPROC does not hold root")
    body = "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass"
    result = run_one(any_sandbox, checks_program("bomb", body, timeout_s=3.0))
    assert result.status != "pass"
    _still_works(any_sandbox)


@pytest.mark.slow
@needs_bwrap
def test_a_fork_bomb_at_its_time_limit_gets_one_verdict_however_loaded() -> None:
    # At its time limit the test's alarm interrupts the bomb and the child reports within the
    # grace second. With 1024 copies spinning on this machine's two cores the report used to
    # come after the deadline ("timeout", not "fail": the verdict depended on load and so on
    # the backend); the worker now stops the copies at the time limit.
    body = "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass"
    verdicts = set()
    for processes in (8, 1024):
        limits = replace(TEST_LIMITS, processes=processes)
        with open_sandbox(SandboxConfig(python=PYTHON, workers=1, limits=limits)) as sandbox:
            for _ in range(2):
                result = run_one(sandbox, checks_program("bomb", body, timeout_s=2.0))
                verdicts.add((result.status, result.category))
    assert verdicts == {("fail", ErrorCategory.TIMEOUT)}


@pytest.mark.parametrize(
    "solution",
    [
        "def f(x):\n    b = bytearray(8 * 1024**3)\n    return x + 1\n",
        "def f(x):\n    keep = []\n    while True:\n        keep.append(bytearray(10**7))\n",
    ],
    ids=["one-block", "growing"],
)
def test_memory_hog(any_sandbox: Sandbox, solution: str) -> None:
    result = run_one(any_sandbox, unittest_program("mem", solution))
    assert result.status == "fail"
    assert result.category == ErrorCategory.OUT_OF_MEMORY
    _still_works(any_sandbox)


@pytest.mark.slow
def test_infinite_loop_is_killed_with_its_children(any_sandbox: Sandbox) -> None:
    marker = "987651"
    solution = (
        "import subprocess, signal\n"
        "def f(x):\n"
        f"    subprocess.Popen(['sleep', '{marker}'])\n"
        "    signal.signal(signal.SIGALRM, signal.SIG_IGN)  # dodge the official alarm too\n"
        "    while True:\n"
        "        pass\n"
    )
    result = run_one(any_sandbox, unittest_program("loop", solution, timeout_s=1.5))
    assert result.status == "timeout"
    assert result.category == ErrorCategory.TIMEOUT
    assert _host_processes_with(f"sleep\x00{marker}") == []
    _still_works(any_sandbox)


def test_leftover_processes_are_killed_after_a_pass(any_sandbox: Sandbox) -> None:
    marker = "987652"
    solution = (
        "import os, subprocess\n"
        "def f(x):\n"
        "    if os.fork() == 0:\n"
        "        os.setsid()\n"
        f"        os.execvp.__call__ if False else None\n"
        f"        import posix\n"
        f"        posix.execv('/bin/sleep', ['sleep', '{marker}'])\n"
        "    return x + 1\n"
    )
    result = run_one(any_sandbox, unittest_program("daemon", solution))
    assert result.status == "pass"
    assert _host_processes_with(f"sleep\x00{marker}") == []


def test_huge_output_keeps_only_a_tail(any_sandbox: Sandbox) -> None:
    body = "import os\nfor _ in range(200):\n    os.write(1, b'x' * 1_000_000)\nos.write(1, b'END')"
    result = run_one(any_sandbox, checks_program("loud", body))
    assert result.status == "pass"
    assert result.stdout_tail.endswith("END")
    assert len(result.stdout_tail) <= 4096


def test_big_file_write_hits_the_file_size_limit(any_sandbox: Sandbox) -> None:
    body = """
import tempfile
with self.assertRaises(OSError):
    with open(tempfile.gettempdir() + "/big", "wb") as f:
        f.write(b"x" * (64 * 1024 * 1024))
"""
    result = run_one(any_sandbox, checks_program("bigfile", body))
    assert result.status == "pass", result.details


def test_files_do_not_leak_between_samples(any_sandbox: Sandbox) -> None:
    write = checks_program(
        "w", "import tempfile\nopen(tempfile.gettempdir() + '/leak-marker', 'w').write('x')"
    )
    read = checks_program(
        "r",
        "import os, tempfile\n"
        "self.assertFalse(os.path.exists(tempfile.gettempdir() + '/leak-marker'))",
    )
    assert run_one(any_sandbox, write).status == "pass"
    for _ in range(3):  # whichever worker runs it
        assert run_one(any_sandbox, read).status == "pass"


# TEST_LIMITS: 64 MiB of /tmp (a disk folder the worker measures), 16 MiB per file
@pytest.mark.parametrize(
    "body",
    [
        "import tempfile\nfor i in range(10):\n"
        "    open(f'{tempfile.gettempdir()}/chunk{i}', 'wb').write(b'x' * (15 * 2**20))",
        # deleted while open: the space stays used, no file shows it
        "import os, time\nkeep = []\nfor i in range(6):\n"
        "    f = open(f'chunk{i}', 'wb'); f.write(b'x' * (15 * 2**20)); f.flush()\n"
        "    os.unlink(f'chunk{i}'); keep.append(f)\ntime.sleep(5)",
        # empty files are not free: inodes and directory entries
        "import os\nfor i in range(20000):\n    open(f'e{i}', 'w').close()",
    ],
    ids=["big-files", "deleted-but-open", "many-empty-files"],
)
def test_storing_more_than_tmp_mb_is_killed(any_sandbox: Sandbox, body: str) -> None:
    # a long limit, so that "stopped when seen" and "stopped at the limit" stay apart on a
    # loaded machine (20,000 empty files took 10.5 s there)
    result = run_one(any_sandbox, checks_program("disk", body, timeout_s=60.0))
    assert result.status == "fail"
    assert result.category == ErrorCategory.KILLED
    assert "stored more than its 64 MiB" in result.reason
    assert result.wall_s < 30  # stopped when seen, not at the time limit
    _still_works(any_sandbox)


def test_storing_less_than_tmp_mb_is_fine(any_sandbox: Sandbox) -> None:
    body = "for i in range(3):\n    open(f'chunk{i}', 'wb').write(b'x' * (15 * 2**20))"
    result = run_one(any_sandbox, checks_program("disk-ok", body))
    assert result.status == "pass", result.reason


_LOCKED_TREE = """
import os, tempfile
for base in (tempfile.gettempdir(), os.getcwd()):
    top = os.path.join(base, 'locked')
    os.makedirs(os.path.join(top, 'inner', 'deeper'))
    open(os.path.join(top, 'inner', 'deeper', 'f'), 'w').write('x')
    open(os.path.join(top, 'inner', 'g'), 'w').write('x')
    os.chmod(os.path.join(top, 'inner', 'g'), 0)
    os.symlink({outside!r}, os.path.join(top, 'inner', 'out'))
    for path in ('inner/deeper', 'inner', ''):
        os.chmod(os.path.join(top, path), 0)
# deeper than PATH_MAX: only a walk through directory descriptors can empty it
os.chdir(tempfile.gettempdir())
for _ in range(400):
    os.mkdir('d' * 30)
    os.chdir('d' * 30)
os.chmod('.', 0)
try:
    os.chmod(tempfile.gettempdir(), 0)  # the sample's own scratch folder, locked too
except PermissionError:
    pass
"""


def test_locked_and_deep_folders_are_cleaned_without_breaking_the_worker(
    any_sandbox: Sandbox, tmp_path: Path
) -> None:
    # a host file the sample links to: the cleanup must neither follow nor change it
    outside = tmp_path / "host-file"
    outside.write_text("keep")
    outside.chmod(0o640)
    body = _LOCKED_TREE.format(outside=str(outside))
    result = run_one(any_sandbox, checks_program("locked", body))
    assert result.status == "pass", result.details or result.reason
    check = """
import os, tempfile
tmp = tempfile.gettempdir()
self.assertEqual(os.stat(tmp).st_mode & 0o777, 0o777 if tmp == '/tmp' else 0o700)
mine = os.path.basename(os.getcwd())  # this sample's own working directory
self.assertEqual([e for e in os.listdir(tmp) if e != mine], [])
"""
    for index in range(3):  # whichever worker runs it
        after = run_one(any_sandbox, checks_program(f"after{index}", check))
        assert after.status == "pass", after.details or after.reason
    assert outside.read_text() == "keep"
    assert outside.stat().st_mode & 0o777 == 0o640


def test_a_program_that_closes_its_verdict_channel(any_sandbox: Sandbox) -> None:
    solution = (
        "import os\nfor fd in range(3, 256):\n    try: os.close(fd)\n    except OSError: pass\n"
    )
    result = run_one(any_sandbox, unittest_program("close", solution + GOOD))
    assert result.status != "pass"
    _still_works(any_sandbox)


#: A test that fails on purpose with the identity of the worker that forked it: its pid and
#: its start time since boot (field 22 of /proc/PID/stat), which tells two workers apart even
#: when a fresh pid namespace gives them the same pid.
WHICH_WORKER = """
import os
with open(f"/proc/{os.getppid()}/stat") as stat:
    fields = stat.read().rsplit(")", 1)[1].split()
self.fail(f"worker={os.getppid()}@{fields[19]}")
"""


def _worker_of(result: ExecResult) -> str:
    found = re.search(r"worker=(\d+@\d+)", str(result.details))
    assert found, (result.status, result.details, result.reason)
    return found.group(1)


@pytest.mark.parametrize("backend", ["local", "local-rlimit"])
def test_workers_are_replaced_after_recycle_after_samples(backend: str) -> None:
    """With recycle_after=2 and one worker, six samples meet three different workers, two
    samples each, and the verdicts after the replacements are still right."""
    if backend == "local" and not BWRAP:
        pytest.skip("bubblewrap cannot run here")
    config = SandboxConfig(python=PYTHON, workers=1, limits=TEST_LIMITS, recycle_after=2)
    with open_sandbox(config, backend=backend, warn=lambda message: None) as sandbox:
        who = [checks_program(f"who{i}", WHICH_WORKER) for i in range(6)]
        workers = [_worker_of(result) for result in sandbox.run(who)]
        programs = [unittest_program(f"r{i}", GOOD) for i in range(3)]
        programs.append(unittest_program("wrong", "def f(x):\n    return x\n"))
        verdicts = {r.key: r.status for r in sandbox.run(programs)}
    assert sorted(Counter(workers).values()) == [2, 2, 2], workers
    assert verdicts == {"r0": "pass", "r1": "pass", "r2": "pass", "wrong": "fail"}


@pytest.mark.parametrize("backend", ["local", "local-rlimit"])
def test_a_worker_that_served_its_share_is_replaced_only_for_work_left(
    backend: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Six samples on one worker with recycle_after=2 start three workers, not a fourth that
    nothing would use (one starting while the last samples run takes their CPU); the next run
    meets a new worker."""
    if backend == "local" and not BWRAP:
        pytest.skip("bubblewrap cannot run here")
    starts: list[int] = []
    start = WorkerHandle.start

    def counted_start(handle: WorkerHandle) -> None:
        starts.append(handle.slot)
        start(handle)

    monkeypatch.setattr(WorkerHandle, "start", counted_start)
    config = SandboxConfig(python=PYTHON, workers=1, limits=TEST_LIMITS, recycle_after=2)
    with open_sandbox(config, backend=backend, warn=lambda message: None) as sandbox:
        who = [checks_program(f"who{i}", WHICH_WORKER) for i in range(6)]
        first = [_worker_of(result) for result in sandbox.run(who)]
        started_by_the_first_run = len(starts)
        (again,) = [_worker_of(r) for r in sandbox.run([checks_program("again", WHICH_WORKER)])]
    assert sorted(Counter(first).values()) == [2, 2, 2], first
    assert started_by_the_first_run == 3
    assert len(starts) == 4 and again not in first


def test_unused_program_fields_are_respected() -> None:
    program = Program(key="k", task_id="t", source="x = 1\n", style="script")
    assert program.test_class == "TestCases"


# ---------------------------------------------------------------- script programs (HumanEval's
# own tests): the candidate runs in the same process as `check`, so what it replaces is watched


def script_program(key: str, solution: str) -> Program:
    """HumanEval-shaped: the solution, a `check` with asserts, then the call."""
    test = "def check(candidate):\n    assert candidate(2) == 3\n    assert len([1]) == 1\n"
    source = solution + "\n" + test + "\ncheck(f)\n"
    return Program(key=key, task_id=key, source=source, style="script", timeout_s=5)


def test_script_passes_and_fails_normally(any_sandbox: Sandbox) -> None:
    assert run_one(any_sandbox, script_program("s-ok", GOOD)).status == "pass"
    wrong = run_one(any_sandbox, script_program("s-wrong", "def f(x):\n    return x\n"))
    assert (wrong.status, wrong.category) == ("fail", ErrorCategory.ASSERTION_FAILED)


@pytest.mark.parametrize(
    "solution",
    [
        # a len that makes every assert about lengths hold
        "import builtins\nbuiltins.len = lambda x: 1\n" + GOOD,
        # an AssertionError that is never raised where the test expects it
        "import builtins\nbuiltins.AssertionError = type('Quiet', (Exception,), {})\n" + GOOD,
        # a fake module the test code would import
        "import sys, types\nsys.modules['math'] = types.ModuleType('math')\n" + GOOD,
    ],
    ids=["builtins.len", "builtins.AssertionError", "sys.modules"],
)
def test_script_tampering_is_caught(any_sandbox: Sandbox, solution: str) -> None:
    result = run_one(any_sandbox, script_program("s-tamper", solution))
    assert (result.status, result.category) == ("fail", ErrorCategory.TAMPERED)
    assert "replaced" in result.reason


@pytest.mark.parametrize(
    "solution",
    [
        "import sys\nsys.exit(0)\n" + GOOD,
        "import os\nos._exit(0)\n" + GOOD,
        "raise SystemExit(0)\n" + GOOD,
        "import os\ndef f(x):\n    os._exit(0)\n",
        "import sys\ndef f(x):\n    sys.exit(0)\n",
        "print('passed')\nimport os\nos._exit(0)\n" + GOOD,
    ],
    ids=["sys.exit", "os._exit", "SystemExit", "os._exit-in-call", "sys.exit-in-call", "output"],
)
def test_script_exits_never_pass(any_sandbox: Sandbox, solution: str) -> None:
    result = run_one(any_sandbox, script_program("s-exit", solution))
    assert result.status != "pass" and result.category is not None
