"""SWE-bench's verdict: the test-output section, forged lines and markers, the buckets, the
resolution, and the official report files."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from passbench.core.errors import InputError
from passbench.stages.benchmarks.swebench.grading import (
    FAIL_ONLY,
    RESOLVED_FULL,
    RESOLVED_NO,
    RESOLVED_PARTIAL,
    Bucket,
    InstanceReport,
    TestsStatus,
    case_failed,
    case_maintained,
    case_passed,
    disagreement,
    grade,
    instance_log_text,
    logs_eval,
    official_log_dir,
    read_test_output,
    recorded_exit_code,
    report_from_log,
    resolve_case,
    run_report,
    run_report_filename,
    run_report_json,
)
from passbench.stages.benchmarks.swebench.logparsers import OfficialParserCrash

A = "test_requests.py::RequestsTestCase::test_a"
B = "test_requests.py::RequestsTestCase::test_b"
C = "test_requests.py::RequestsTestCase::test_c"

# What `bash /eval.sh` prints under `set -uxo pipefail` before the tests, as the harness runs it
# (the trace goes to stderr, merged with stdout).
BEFORE = """\
+ source /opt/miniconda3/bin/activate
+ cd /testbed
+ git -c core.fileMode=false diff 091991be0da19de9108dbe5e3752917fea3d7fdc
diff --git a/requests/sessions.py b/requests/sessions.py
+        method = to_native_string(method)
+ python -m pip install .
Successfully installed requests-2.4.3
+ git checkout 091991be0da19de9108dbe5e3752917fea3d7fdc test_requests.py
Updated 0 paths from 4b8e2a1
+ git apply -v -
Checking patch test_requests.py...
Applied patch test_requests.py cleanly.
"""


def _log(body: str, *, exit_code: int | None = 0, before: str = BEFORE, after: str = "") -> str:
    """A whole test_output.txt: the eval script's trace, the markers (traced `:` no-ops), the
    exit status the harness makes the script echo after the end marker, the reset."""
    parts = [before + "+ : '>>>>> Start Test Output'", "+ pytest -rA test_requests.py", body]
    if exit_code is not None:
        parts.append(f"+ SWEBENCH_TEST_EXIT_CODE={exit_code}")
    parts.append("+ : '>>>>> End Test Output'")
    if exit_code is not None:
        parts += [
            f"+ echo '>>>>> Test Exit Code: {exit_code}'",
            f">>>>> Test Exit Code: {exit_code}",
        ]
    parts += [
        "+ git checkout 091991be0da19de9108dbe5e3752917fea3d7fdc test_requests.py",
        "Updated 1 path from 4b8e2a1",
        after,
    ]
    return "\n".join(parts)


SUMMARY_ONE_FAILS = f"""\
============================= test session starts ==============================
collected 3 items

test_requests.py ..F                                                     [100%]

=========================== short test summary info ============================
PASSED {A}
PASSED {B}
FAILED {C} - AssertionError: assert 1 == 2
========================= 1 failed, 2 passed in 0.21s ==========================
"""
SUMMARY_ALL_PASS = SUMMARY_ONE_FAILS.replace(
    f"FAILED {C} - AssertionError: assert 1 == 2", f"PASSED {C}"
)


def _report(test_output: str, f2p: list[str], p2p: list[str]) -> InstanceReport:
    return report_from_log(
        "psf__requests-2317",
        f2p,
        p2p,
        parser_name="parse_log_requests",
        test_output=test_output,
        model_patch="diff --git a/x b/x\n",
    )


# ---------------------------------------------------------------------------------------------
# The log


def test_a_plain_run_is_graded_from_the_section() -> None:
    evaluated = logs_eval(_log(SUMMARY_ONE_FAILS, exit_code=1), "parse_log_requests")
    assert evaluated.found
    assert dict(evaluated.status_map) == {A: "PASSED", B: "PASSED", C: "FAILED"}
    report = _report(_log(SUMMARY_ONE_FAILS, exit_code=1), [C], [A, B])
    assert not report.resolved
    assert report.resolution == RESOLVED_NO
    assert _report(_log(SUMMARY_ALL_PASS), [C], [A, B]).resolved


def test_fake_passed_lines_outside_the_markers_are_ignored() -> None:
    fake = f"PASSED {C}\n"
    log = _log(SUMMARY_ONE_FAILS, exit_code=1, before=BEFORE + fake, after=fake)
    assert logs_eval(log, "parse_log_requests").status_map[C] == "FAILED"
    assert not _report(log, [C], [A, B]).resolved


def test_lines_outside_the_markers_count_when_the_section_has_no_result() -> None:
    # The official fallback (#402): a patched setup.py printing PASSED lines during
    # `pip install .`, and a test command that prints nothing, resolve the instance.
    before = BEFORE.replace(
        "Successfully installed", f"PASSED {A}\nPASSED {C}\nSuccessfully installed"
    )
    log = _log("", exit_code=0, before=before)
    assert dict(logs_eval(log, "parse_log_requests").status_map) == {A: "PASSED", C: "PASSED"}
    assert _report(log, [C], [A]).resolved


def test_a_second_end_marker_cuts_the_section() -> None:
    # The tests print the end marker: what follows it is not read. The failure is hidden, but
    # the recorded exit status (1) with no failure left in the section rejects the log.
    body = f"PASSED {A}\nPASSED {C}\n>>>>> End Test Output\nFAILED {C} - AssertionError\n"
    log = _log(body, exit_code=1)
    evaluated = logs_eval(log, "parse_log_requests")
    assert not evaluated.found
    assert "exited 1" in evaluated.why
    report = _report(log, [C], [A])
    assert (report.patch_successfully_applied, report.resolved, report.tests_status) == (
        False,
        False,
        None,
    )


def test_a_forged_exit_status_printed_first_wins() -> None:
    # The exit status is read from its first occurrence: printed by the tests, it is forged.
    body = f"PASSED {C}\n>>>>> End Test Output\n>>>>> Test Exit Code: 0\nFAILED {C} - boom\n"
    log = _log(body, exit_code=1)
    assert recorded_exit_code(log) == 0
    assert logs_eval(log, "parse_log_requests").status_map == {C: "PASSED"}
    assert _report(log, [C], []).resolved


def test_fake_passes_with_a_failing_exit_status_are_rejected() -> None:
    # #601/#620: a conftest.py printing PASSED lines while the tests really exit 1.
    log = _log(f"PASSED {A}\nPASSED {C}\n", exit_code=1)
    assert not logs_eval(log, "parse_log_requests").found
    # Logs without a recorded status are graded from the lines alone.
    assert _report(_log(f"PASSED {A}\nPASSED {C}\n", exit_code=None), [C], [A]).resolved


def test_a_start_marker_printed_by_the_tests_ends_the_section() -> None:
    body = f"PASSED {A}\n>>>>> Start Test Output\nPASSED {C}\n"
    assert logs_eval(_log(body), "parse_log_requests").status_map == {A: "PASSED"}


def test_an_end_marker_only_before_the_start_leaves_the_rest() -> None:
    log = (
        "+ : '>>>>> End Test Output'\n+ : '>>>>> Start Test Output'\n"
        f"PASSED {A}\n>>>>> Test Exit Code: 0\n"
    )
    assert logs_eval(log, "parse_log_requests").status_map == {A: "PASSED"}


@pytest.mark.parametrize(
    "marker",
    [
        ">>>>> Patch Apply Failed",
        ">>>>> Reset Failed",
        ">>>>> Tests Errored",
        ">>>>> Tests Timed Out",
    ],
)
def test_a_failure_marker_anywhere_means_no_results(marker: str) -> None:
    log = _log(SUMMARY_ALL_PASS, after=f"{marker}:\nerror: patch failed: requests/sessions.py:12\n")
    evaluated = logs_eval(log, "parse_log_requests")
    assert (evaluated.found, dict(evaluated.status_map)) == (False, {})
    report = _report(log, [C], [A])
    assert report.as_official() == {
        "psf__requests-2317": {
            "patch_is_None": False,
            "patch_exists": True,
            "patch_successfully_applied": False,
            "resolved": False,
            "infra_failure": False,
        }
    }


def test_missing_markers_mean_no_results() -> None:
    assert not logs_eval(SUMMARY_ALL_PASS, "parse_log_requests").found
    no_end = BEFORE + "+ : '>>>>> Start Test Output'\n" + SUMMARY_ALL_PASS
    assert not logs_eval(no_end, "parse_log_requests").found


def test_no_results_need_a_sign_that_tests_ran() -> None:
    silent = _log("ImportError: cannot import name 'x'\n", exit_code=0)
    assert logs_eval(silent, "parse_log_requests").why == "no results and no sign that tests ran"
    ran = _log("Tests: 3 passed\n", exit_code=0)
    assert (
        logs_eval(ran, "parse_log_requests").found,
        logs_eval(ran, "parse_log_pytest").status_map,
    ) == (True, {})


def test_the_log_is_read_with_universal_newlines(tmp_path: Path) -> None:
    path = tmp_path / "test_output.txt"
    path.write_bytes(_log(f"PASSED {A}\r\nPASSED {B}\rPASSED {C}\r\n").encode() + b"\xff")
    text = read_test_output(path)
    assert "\r" not in text
    assert text.endswith("\ufffd")
    assert logs_eval(text, "parse_log_requests").status_map == {
        A: "PASSED",
        B: "PASSED",
        C: "PASSED",
    }
    # logs_eval normalises text given with carriage returns the same way
    assert logs_eval(_log(f"PASSED {A}\rPASSED {C}"), "parse_log_requests").status_map == {
        A: "PASSED",
        C: "PASSED",
    }


def test_a_parser_crash_writes_no_report() -> None:
    log = _log("test_a (m.T) ... ok\nFAIL:\n")
    with pytest.raises(OfficialParserCrash):
        report_from_log(
            "django__django-1",
            ["test_a (m.T)"],
            [],
            parser_name="parse_log_django",
            test_output=log,
            model_patch="diff",
        )


def test_no_results_are_classified_for_triage() -> None:
    log = _log("Killed\n", exit_code=137)
    report = _report(log, [C], [])
    assert (report.infra_failure, report.infra_failure_reason) == (True, "out_of_memory")
    assert list(report.as_official()["psf__requests-2317"]) == [
        "patch_is_None",
        "patch_exists",
        "patch_successfully_applied",
        "resolved",
        "infra_failure",
        "infra_failure_reason",
    ]
    ambiguous = _report(_log("collected 0 items\n", exit_code=5), [C], [])
    assert (ambiguous.infra_failure, ambiguous.infra_failure_reason) == (
        False,
        "no_tests_collected",
    )


def test_a_none_patch_and_an_empty_patch() -> None:
    none = report_from_log(
        "i", [A], [], parser_name="parse_log_pytest", test_output="", model_patch=None
    )
    assert none.as_official() == {
        "i": {
            "patch_is_None": True,
            "patch_exists": False,
            "patch_successfully_applied": False,
            "resolved": False,
            "infra_failure": False,
        }
    }
    # An empty string is not None: its log is graded (the run report counts it as empty).
    empty = report_from_log(
        "i",
        [A],
        [],
        parser_name="parse_log_pytest",
        test_output=_log(f"PASSED {A}"),
        model_patch="",
    )
    assert empty.resolved


# ---------------------------------------------------------------------------------------------
# One test


def test_statuses_as_each_bucket_counts_them() -> None:
    statuses = {
        "p": "PASSED",
        "x": "XFAIL",
        "s": "SKIPPED",
        "f": "FAILED",
        "e": "ERROR",
        "o": "ERROR:",
    }
    assert [case_passed(c, statuses) for c in "pxsfeo-"] == [
        True,
        True,
        False,
        False,
        False,
        False,
        False,
    ]
    assert [case_maintained(c, statuses) for c in "pxsfeo-"] == [
        True,
        True,
        True,
        False,
        False,
        False,
        False,
    ]
    assert [case_failed(c, statuses) for c in "pxsfeo-"] == [
        False,
        False,
        True,
        True,
        True,
        False,
        True,
    ]


def test_truncated_ids_match_by_prefix_when_unambiguous() -> None:
    cut = "astropy/units/tests/test_format.py::test_ogip_grammar_fail[log(photon"
    assert resolve_case(cut, {cut + " /m**2/s)]": "PASSED"}) == cut + " /m**2/s)]"
    mixed_pass = {cut + " a]": "PASSED", cut + " b]": "XFAIL"}
    assert case_passed(cut, mixed_pass)
    split = {cut + " a]": "PASSED", cut + " b]": "FAILED"}
    assert resolve_case(cut, split) is None
    assert case_failed(cut, split)
    # A skip among passes disagrees on passing: no match, so even a PASS_TO_PASS test fails.
    assert not case_maintained(cut, {cut + " a]": "PASSED", cut + " b]": "SKIPPED"})
    # A well-formed id is never matched by prefix.
    assert resolve_case("t.py::test_x[a]", {"t.py::test_x[a]-long": "PASSED"}) is None


# ---------------------------------------------------------------------------------------------
# Grading


def test_resolution_full_partial_no() -> None:
    statuses = {"f1": "PASSED", "f2": "FAILED", "p1": "PASSED", "p2": "SKIPPED", "p3": "ERROR"}
    assert grade(["f1"], ["p1", "p2"], statuses).resolution == RESOLVED_FULL
    partial = grade(["f1", "f2"], ["p1"], statuses)
    assert (partial.resolution, partial.resolved) == (RESOLVED_PARTIAL, False)
    assert grade(["f2"], ["p1"], statuses).resolution == RESOLVED_NO
    # A failing PASS_TO_PASS test sinks a full FAIL_TO_PASS pass.
    assert grade(["f1"], ["p1", "p3"], statuses).resolution == RESOLVED_NO
    # A FAIL_TO_PASS test missing from the log fails; a skipped one resolves nothing.
    assert grade(["gone"], [], statuses).resolution == RESOLVED_NO
    assert grade(["p2"], [], statuses).resolution == RESOLVED_NO


def test_tests_in_no_list_do_not_count() -> None:
    # An empty list is all success, so is a list whose tests all have an unknown status.
    assert grade([], [], {}).resolved
    assert grade(["t"], [], {"t": "XPASSED"}).resolved


def test_the_buckets_and_the_report_dict() -> None:
    statuses = {"f1": "PASSED", "f2": "FAILED", "p1": "PASSED", "p2": "SKIPPED", "x": "PASSED"}
    report = grade(
        ["f1", "f2"], ["p1", "p2", "p3"], statuses, instance_id="o__r-1", fail_to_fail=["x"]
    )
    assert report.tests_status == TestsStatus(
        fail_to_pass=Bucket(("f1",), ("f2",)),
        pass_to_pass=Bucket(("p1", "p2"), ("p3",)),
        fail_to_fail=Bucket(("x",), ()),
    )
    official = report.as_official()
    assert official == {
        "o__r-1": {
            "patch_is_None": False,
            "patch_exists": True,
            "patch_successfully_applied": True,
            "resolved": False,
            "infra_failure": False,
            "tests_status": {
                "FAIL_TO_PASS": {"success": ["f1"], "failure": ["f2"]},
                "PASS_TO_PASS": {"success": ["p1", "p2"], "failure": ["p3"]},
                "FAIL_TO_FAIL": {"success": ["x"], "failure": []},
                "PASS_TO_FAIL": {"success": [], "failure": []},
            },
        }
    }
    assert list(official["o__r-1"]["tests_status"]) == [  # type: ignore[call-overload]
        "FAIL_TO_PASS",
        "PASS_TO_PASS",
        "FAIL_TO_FAIL",
        "PASS_TO_FAIL",
    ]
    text = report.official_json()
    assert json.loads(text) == official
    assert text.startswith('{\n    "o__r-1": {\n        "patch_is_None": false,')
    assert not text.endswith("\n")


def test_fail_only_counts_exact_failures() -> None:
    statuses = {"a": "FAILED", "b": "ERROR", "c[x": "FAILED"}
    report = grade(["a", "b", "missing"], ["c["], statuses, eval_type=FAIL_ONLY)
    assert report.tests_status is not None
    assert report.tests_status.fail_to_pass == Bucket(("b", "missing"), ("a",))
    assert report.tests_status.pass_to_pass == Bucket(("c[",), ())


def test_an_unknown_eval_type_is_an_input_error() -> None:
    with pytest.raises(InputError, match="eval_type"):
        grade([], [], {}, eval_type="both")


def test_disagreement_between_the_log_and_a_channel() -> None:
    official = {A: "PASSED", B: "PASSED", C: "SKIPPED", "t[x]": "XFAIL"}
    channel = {A: "PASSED", B: "FAILED", "t[x]": "PASSED", "u": "ERROR"}
    tests = [A, B, C, "t[x]", "u", B, "v"]
    # B passed in one and failed in the other; C skipped in one and missing in the other; a
    # missing test and an ERROR are both failures, XFAIL and PASSED both passes.
    assert disagreement(official, channel, tests) == (B, C)
    assert disagreement(channel, channel, tests) == ()


# ---------------------------------------------------------------------------------------------
# Files


@dataclass(frozen=True)
class Prediction:
    instance_id: str
    model_name_or_path: str
    model_patch: str | None


def test_official_log_dir_sanitises_the_model(tmp_path: Path) -> None:
    where = official_log_dir(tmp_path, "run-1", "openai/gpt-4o/2024", "psf__requests-2317")
    assert where == tmp_path / "logs/run_evaluation/run-1/openai__gpt-4o__2024/psf__requests-2317"


def test_run_report(tmp_path: Path) -> None:
    model = "org/model"
    dataset = ["o__r-1", "o__r-2", "o__r-3", "o__r-4", "o__r-5", "o__r-6"]
    patches = {
        "o__r-1": "d",
        "o__r-2": "d",
        "o__r-3": "",
        "o__r-4": None,
        "o__r-5": "d",
        "x__y-9": "d",
    }
    predictions = {i: Prediction(i, model, p) for i, p in patches.items()}
    reports = {
        "o__r-1": grade(["a"], [], {"a": "PASSED"}, instance_id="o__r-1"),
        "o__r-2": grade(["a"], [], {"a": "FAILED"}, instance_id="o__r-2"),
    }
    # o__r-5 has no report.json (its patch did not apply, or it timed out): an error.
    logs: dict[str, str] = {}
    for instance_id, text in (
        ("o__r-2", "ModuleNotFoundError: No module named 'x'"),
        ("o__r-5", "Killed"),
    ):
        log_dir = official_log_dir(tmp_path, "run-1", model, instance_id)
        log_dir.mkdir(parents=True)
        (log_dir / "test_output.txt").write_text("tests\n")
        (log_dir / "run_instance.log").write_text(text + "\n")
        logs[instance_id] = instance_log_text(log_dir)
    report = run_report(dataset, predictions, reports, logs=logs)
    assert list(report.items()) == [
        ("total_instances", 6),
        ("submitted_instances", 6),
        ("completed_instances", 2),
        ("resolved_instances", 1),
        ("unresolved_instances", 1),
        ("infra_failure_instances", 1),
        ("ambiguous_failure_instances", 1),
        ("empty_patch_instances", 2),
        ("error_instances", 1),
        ("completed_ids", ["o__r-1", "o__r-2"]),
        ("incomplete_ids", ["o__r-6"]),
        ("empty_patch_ids", ["o__r-3", "o__r-4"]),
        ("submitted_ids", ["o__r-1", "o__r-2", "o__r-3", "o__r-4", "o__r-5", "x__y-9"]),
        ("resolved_ids", ["o__r-1"]),
        ("unresolved_ids", ["o__r-2"]),
        ("infra_failure_ids", ["o__r-5"]),
        ("ambiguous_failure_ids", ["o__r-2"]),
        ("failure_reasons", {"o__r-2": "missing_module", "o__r-5": "out_of_memory"}),
        ("error_ids", ["o__r-5"]),
        ("schema_version", 2),
    ]
    assert run_report_filename(predictions, "run-1") == "org__model.run-1.json"
    text = run_report_json(report)
    assert text.endswith("}\n")
    assert text.startswith('{\n    "total_instances": 6,\n')
    # Without logs nothing is classified; the counts stay the same.
    bare = run_report(dataset, predictions, reports)
    assert (bare["failure_reasons"], bare["error_ids"]) == ({}, ["o__r-5"])


def test_a_run_report_needs_a_prediction() -> None:
    with pytest.raises(InputError):
        run_report_filename({}, "run-1")
