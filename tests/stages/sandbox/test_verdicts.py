"""Ordinary programs: verdicts, details and error categories match the official evaluator's
semantics on both isolation levels."""

from __future__ import annotations

import pytest

from passbench.core.records import ErrorCategory, Program
from passbench.stages.sandbox import Sandbox

from .helpers import checks_program, run_one, unittest_program


def test_pass(any_sandbox: Sandbox) -> None:
    result = run_one(any_sandbox, unittest_program("ok", "def f(x):\n    return x + 1"))
    assert (result.status, result.category, result.details) == ("pass", None, {})
    assert result.tests_run == 2
    assert result.isolation == any_sandbox.isolation


def test_failure_details_are_keyed_by_test_method(any_sandbox: Sandbox) -> None:
    result = run_one(any_sandbox, unittest_program("bad", "def f(x):\n    return x"))
    assert result.status == "fail"
    assert result.category == ErrorCategory.ASSERTION_FAILED
    assert set(result.details) == {"test_one", "test_two"}
    assert "AssertionError: 1 != 2" in result.details["test_one"]
    assert result.reason.startswith("test_one: AssertionError: 1 != 2")


def test_error_in_test_is_exception(any_sandbox: Sandbox) -> None:
    result = run_one(any_sandbox, unittest_program("err", "def f(x):\n    return {}[x]"))
    assert result.status == "fail"
    assert result.category == ErrorCategory.EXCEPTION
    assert "KeyError: 1" in result.details["test_one"]


def test_syntax_error(any_sandbox: Sandbox) -> None:
    result = run_one(any_sandbox, unittest_program("syn", "def f(x) return x"))
    assert result.status == "fail"
    assert result.category == ErrorCategory.SYNTAX_ERROR
    # the official evaluator stores str(exception) under "ALL"
    assert result.details == {"ALL": "expected ':' (__test__.py, line 1)"}


def test_import_error_at_load_and_in_a_test(any_sandbox: Sandbox) -> None:
    at_load = run_one(any_sandbox, unittest_program("imp1", "import no_such_module_xyz\n"))
    assert at_load.category == ErrorCategory.IMPORT_ERROR
    assert at_load.details == {"ALL": "No module named 'no_such_module_xyz'"}
    in_test = run_one(
        any_sandbox,
        unittest_program("imp2", "def f(x):\n    import no_such_module_xyz\n    return x + 1"),
    )
    assert in_test.status == "fail"
    assert in_test.category == ErrorCategory.IMPORT_ERROR


def test_missing_test_class_fails_like_official(any_sandbox: Sandbox) -> None:
    program = Program(key="notc", task_id="notc", source="x = 1\n")
    result = run_one(any_sandbox, program)
    assert result.status == "fail"
    assert result.details == {"ALL": "module '__test__' has no attribute 'TestCases'"}


def test_skipped_tests_still_pass(any_sandbox: Sandbox) -> None:
    result = run_one(any_sandbox, checks_program("skip", "self.skipTest('not here')"))
    assert result.status == "pass"


def test_official_environment_inside_a_test(any_sandbox: Sandbox) -> None:
    body = """
import builtins, os, sys, time
self.assertIsNone(builtins.exit)
self.assertIsNone(builtins.quit)
self.assertEqual(os.environ["TZ"], "UTC")
self.assertEqual(time.strftime("%Z"), "UTC")
self.assertEqual(os.environ["OMP_NUM_THREADS"], "1")
with self.assertRaises(OSError):
    sys.stdin.read()
self.assertEqual(sys.modules["__test__"].__file__, "__test__.py")
self.assertTrue(os.getcwd().startswith(os.environ["TMPDIR"]))
self.assertEqual(os.listdir("."), [])
"""
    result = run_one(any_sandbox, checks_program("env", body))
    assert result.status == "pass", result.details


def test_subprocess_wrappers_behave_like_official(any_sandbox: Sandbox) -> None:
    body = """
import subprocess
done = subprocess.run(["echo", "hi"])
self.assertEqual(done.stdout, b"hi\\n")  # stdout captured by the official swallow wrapper
self.assertEqual(subprocess.check_output("ps aux", shell=True), b"")  # official "ps" quirk
p = subprocess.Popen(["sleep", "5"])
self.assertEqual(p.communicate(timeout=0.1), (None, None))  # SafePopen swallows the timeout
"""
    result = run_one(any_sandbox, checks_program("subp", body))
    assert result.status == "pass", result.details


def test_output_tail_is_kept(any_sandbox: Sandbox) -> None:
    body = "print('swallowed-marker')\nimport os\nos.write(1, b'fd-marker')"
    result = run_one(any_sandbox, checks_program("out", body))
    assert result.status == "pass"
    assert "swallowed-marker" in result.stdout_tail
    assert "fd-marker" in result.stdout_tail


def test_script_style(any_sandbox: Sandbox) -> None:
    ok = Program(
        key="s1", task_id="s1", source="def f(x): return x\nassert f(1) == 1\n", style="script"
    )
    bad = Program(key="s2", task_id="s2", source="assert 1 == 2, 'nope'\n", style="script")
    results = {r.key: r for r in any_sandbox.run([ok, bad])}
    assert results["s1"].status == "pass"
    assert results["s2"].status == "fail"
    assert results["s2"].category == ErrorCategory.ASSERTION_FAILED
    assert results["s2"].details == {"ALL": "AssertionError: nope"}


@pytest.mark.slow
def test_alarm_inside_a_test_is_a_timeout_category(any_sandbox: Sandbox) -> None:
    # The official SIGALRM interrupts the running test (an error), the rest finishes: "fail".
    body = "import time\nwhile True:\n    time.sleep(0.01)"
    program = checks_program("alarm", body, timeout_s=1.0)
    result = run_one(any_sandbox, program)
    assert result.status == "fail"
    assert result.category == ErrorCategory.TIMEOUT
    assert "TimeoutException: Timed out!" in result.details["test_it"]


def test_many_programs_each_get_one_result(any_sandbox: Sandbox) -> None:
    programs = [
        unittest_program(f"p{i}", "def f(x):\n    return x + 1" if i % 2 else "def f(x): return 0")
        for i in range(12)
    ]
    results = list(any_sandbox.run(programs))
    assert sorted(r.key for r in results) == sorted(p.key for p in programs)
    for result in results:
        assert result.status == ("pass" if int(result.key[1:]) % 2 else "fail")


def test_reason_takes_a_message_that_starts_on_the_next_line() -> None:
    from passbench.stages.sandbox.verdict import _first_line

    trace = "Traceback:\n  File x\nLookupError: \n*****\n  Resource punkt not found.\n  More\n"
    assert _first_line(trace) == "LookupError: Resource punkt not found."
    assert _first_line("Traceback\nValueError: bad\n") == "ValueError: bad"
    coloured = "LookupError: \n  Resource \x1b[93mpunkt\x1b[0m not found.\n"
    assert _first_line(coloured) == "LookupError: Resource punkt not found."
