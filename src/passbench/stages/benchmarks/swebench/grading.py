"""SWE-bench's verdict: a test log -> a status map -> FAIL_TO_PASS / PASS_TO_PASS buckets -> FULL /
PARTIAL / NO -> resolved, and the official report files, as the harness makes them
(SWE-bench/SWE-bench v5.0.x: `swebench/harness/grading.py`, `reporting.py`, `infra_failure.py`,
`run_evaluation.py`).

The log side (`logs_eval`, SWE-bench's `get_logs_eval`) reads the whole test output file:
- a marker line `>>>>> Patch Apply Failed`, `>>>>> Reset Failed`, `>>>>> Tests Errored` or
  `>>>>> Tests Timed Out` anywhere in it, or a missing `>>>>> Start Test Output` or
  `>>>>> End Test Output`, means no results ("not found": the patch counts as not applied).
  Nothing in the current harness writes the first four into the test output (a model patch that
  does not apply, and a timeout, stop the instance before a report is written, so the run report
  counts it in `error_ids`; a failing reset of the test files after the run writes no marker):
  only a program printing them does, which sinks its own instance;
- the section parsed is from the first start marker to the first end marker after it, each
  found as a substring anywhere (a `+ : '>>>>> End Test Output'` set -x trace or a test printing
  the text alike): a second end marker printed by the tests cuts the section there, a start
  marker printed by the tests ends it there; if the start marker only comes after every end
  marker, the section runs to the end of the file;
- when the section yields no result the whole file is parsed instead (#402: results written
  outside the markers), lines printed before the start marker (by `pip install -e .` running the
  patched setup.py, by `git diff` showing the patch) or after the end marker included;
- no result at all, without a sign that a runner ran (`SUITE_RAN`), is "not found";
- the test command's exit status, which the harness has the eval script echo after the end
  marker (`>>>>> Test Exit Code: N`, #620 against forged PASSED lines, #601), is taken from the
  first such text anywhere in the file; a non-zero status with results none of which is FAILED
  or ERROR is "not found". The tests can print that text before the real one.

The grading side (`grade`) takes any status map, so a trusted channel can feed it in place of
the log parser; `disagreement` lists the tests on which two status sources differ.

Before 5.0 (4.0.x, 4.1.0), for comparison with older reports: a SKIPPED test was neither a
success nor a failure (a skipped FAIL_TO_PASS test left the ratio, so an all-skipped list
resolved), ids were matched exactly, neither the exit status nor the suite-ran evidence was
checked, the whole-log fallback came in 4.1.0, report.json had no `infra_failure` key and the
run report no `infra_failure_*`, `ambiguous_failure_*` or `failure_reasons` fields.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from passbench.core.errors import InputError
from passbench.stages.benchmarks.swebench.logparsers import (
    ERROR,
    FAILED,
    PASSED,
    SKIPPED,
    XFAIL,
    parse_log,
)

START_TEST_OUTPUT = ">>>>> Start Test Output"
END_TEST_OUTPUT = ">>>>> End Test Output"
APPLY_PATCH_FAIL = ">>>>> Patch Apply Failed"
RESET_FAILED = ">>>>> Reset Failed"
TESTS_ERROR = ">>>>> Tests Errored"
TESTS_TIMEOUT = ">>>>> Tests Timed Out"
TEST_EXIT_CODE = ">>>>> Test Exit Code"
#: Any of these anywhere in the test output: no results.
BAD_MARKERS = (APPLY_PATCH_FAIL, RESET_FAILED, TESTS_ERROR, TESTS_TIMEOUT)

FAIL_TO_PASS = "FAIL_TO_PASS"
PASS_TO_PASS = "PASS_TO_PASS"
FAIL_TO_FAIL = "FAIL_TO_FAIL"
PASS_TO_FAIL = "PASS_TO_FAIL"

RESOLVED_FULL = "RESOLVED_FULL"
RESOLVED_PARTIAL = "RESOLVED_PARTIAL"
RESOLVED_NO = "RESOLVED_NO"

#: The dataset's `eval_type` values (every Verified and Lite row is `pass_and_fail`).
PASS_AND_FAIL = "pass_and_fail"
FAIL_ONLY = "fail_only"

#: File names in an instance's official log folder.
LOG_REPORT = "report.json"
LOG_TEST_OUTPUT = "test_output.txt"
LOG_INSTANCE = "run_instance.log"
LOG_PATCH = "patch.diff"
LOG_EVAL_SCRIPT = "eval.sh"

# Evidence that a runner executed although nothing was parsed; each count must be non-zero. Most
# alternatives are JavaScript runners' summaries; for Python only a stray `Tests: 3` or
# `N passing` in the output matters.
SUITE_RAN = re.compile(
    "|".join(
        (
            r"Executed [1-9]\d* of \d+",
            r"TOTAL: [1-9]\d* (?:SUCCESS|FAILED)",
            r"[1-9]\d* passing",
            r"Tests:\s+[1-9]\d*",
            r"Test Suites:\s+(?:\d+ \w+, )*[1-9]\d* total",
            r"^# tests [1-9]\d*",
            r"[1-9]\d* specs?, \d+ failures?",
            r"': ok$",
        )
    ),
    re.MULTILINE,
)
_EXIT_CODE = re.compile(re.escape(TEST_EXIT_CODE) + r":\s*(-?\d+)")

ENVIRONMENT = "environment"
AMBIGUOUS = "ambiguous"
#: (reason, tier, pattern) of the harness's advisory infrastructure-failure classification; the
#: first match wins. "environment" cannot come from a patch, "ambiguous" can.
INFRA_FAILURE_SIGNATURES: tuple[tuple[str, str, re.Pattern[str]], ...] = tuple(
    (reason, tier, re.compile(pattern, re.MULTILINE))
    for reason, tier, pattern in (
        ("browser_launch_failed", ENVIRONMENT, r"Failed to launch|Failed to connect to the bus"),
        (
            "display_unavailable",
            ENVIRONMENT,
            r"cannot open display|Missing X server|unable to open X display",
        ),
        ("out_of_memory", ENVIRONMENT, r"Cannot allocate memory|OutOfMemoryError|^Killed$"),
        (
            "container_unavailable",
            ENVIRONMENT,
            r"Error response from daemon|Cannot connect to the Docker daemon",
        ),
        (
            "network_unreachable",
            ENVIRONMENT,
            r"Could not resolve host|Temporary failure in name resolution",
        ),
        ("missing_module", AMBIGUOUS, r"Cannot find module|MODULE_NOT_FOUND|ModuleNotFoundError"),
        ("no_tests_collected", AMBIGUOUS, r"no tests ran|collected 0 items"),
        ("tests_timed_out", AMBIGUOUS, r"Timeout error: \d+ seconds exceeded"),
    )
)


# ---------------------------------------------------------------------------------------------
# The log


@dataclass(frozen=True)
class LogEval:
    """What the harness reads from a test output file. `found` False means "no results" (the
    report then says the patch was not applied); `why` says which rule decided it."""

    status_map: Mapping[str, str]
    found: bool
    why: str = ""


def normalize_newlines(text: str) -> str:
    """The harness reads the test output in text mode: `\\r\\n` and a lone `\\r` become `\\n`, so
    progress bars redrawn with `\\r` come out as separate lines."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def read_test_output(path: Path) -> str:
    """A test output file as the harness reads it (it wrote the text decoded with replacement
    characters, so no byte makes the read fail)."""
    with path.open(encoding="utf-8", errors="replace", newline=None) as handle:
        return handle.read()


def test_output_section(content: str) -> str:
    """The text the parser is given first: after the first start marker, up to the first end
    marker after that (or a later start marker, which the split also stops at)."""
    after_start = content.split(START_TEST_OUTPUT)[1]
    return after_start.split(END_TEST_OUTPUT)[0]


def recorded_exit_code(content: str) -> int | None:
    """The first `>>>>> Test Exit Code: N` in the text, wherever it is."""
    found = _EXIT_CODE.search(content)
    return int(found.group(1)) if found else None


def logs_eval(content: str, parser_name: str) -> LogEval:
    """`get_logs_eval`: the status map the harness grades from `content` (the whole test output
    file), or not found. Raises UnknownNameError for an unknown parser and
    OfficialParserCrash where the official parser raises (no report.json is written then)."""
    content = normalize_newlines(content)
    for marker in BAD_MARKERS:
        if marker in content:
            return LogEval({}, False, f"marker {marker!r} in the log")
    if START_TEST_OUTPUT not in content or END_TEST_OUTPUT not in content:
        return LogEval({}, False, "no start or no end marker")
    status_map = parse_log(parser_name, test_output_section(content))
    if not status_map:
        status_map = parse_log(parser_name, content)
    if not status_map and SUITE_RAN.search(content) is None:
        return LogEval({}, False, "no results and no sign that tests ran")
    exit_code = recorded_exit_code(content)
    if (
        exit_code not in (None, 0)
        and status_map
        and not any(status in (FAILED, ERROR) for status in status_map.values())
    ):
        return LogEval({}, False, f"tests exited {exit_code} but no test failed")
    return LogEval(status_map, True)


# ---------------------------------------------------------------------------------------------
# One test


def resolve_case(case: str, status_map: Mapping[str, str]) -> str | None:
    """The status map's key for a dataset test name: the name itself or, only for a name with
    more `[` than `]` (676 Verified ids cut inside a parameter, #290), the first key starting
    with it, provided all such keys agree on passing (PASSED/XFAIL) or not."""
    if case in status_map:
        return case
    if case.count("[") <= case.count("]"):
        return None
    keys = [key for key in status_map if key.startswith(case)]
    outcomes = {status_map[key] in (PASSED, XFAIL) for key in keys}
    return keys[0] if len(outcomes) == 1 else None


def case_passed(case: str, status_map: Mapping[str, str]) -> bool:
    """PASSED or XFAIL (an expected failure counts as a pass)."""
    key = resolve_case(case, status_map)
    return key is not None and status_map[key] in (PASSED, XFAIL)


def case_maintained(case: str, status_map: Mapping[str, str]) -> bool:
    """PASS_TO_PASS success: passed, or SKIPPED (a skip is not a regression)."""
    key = resolve_case(case, status_map)
    return case_passed(case, status_map) or (key is not None and status_map[key] == SKIPPED)


def case_failed(case: str, status_map: Mapping[str, str]) -> bool:
    """Missing from the map, FAILED, ERROR or SKIPPED (a skipped FAIL_TO_PASS test resolves
    nothing). A status outside the five (`ERROR:`, `XPASSED`) is neither passed nor failed: the
    test lands in no list and does not count."""
    key = resolve_case(case, status_map)
    return key is None or status_map[key] in (FAILED, ERROR, SKIPPED)


# ---------------------------------------------------------------------------------------------
# Records


@dataclass(frozen=True)
class Bucket:
    """The tests of one kind (FAIL_TO_PASS, ...) that succeeded and failed, in dataset order."""

    success: tuple[str, ...] = ()
    failure: tuple[str, ...] = ()

    def as_official(self) -> dict[str, list[str]]:
        return {"success": list(self.success), "failure": list(self.failure)}


def _ratio_is_one(bucket: Bucket) -> bool:
    # The harness's ratio success/(success+failure) is 1 for an empty bucket.
    return not bucket.failure


@dataclass(frozen=True)
class TestsStatus:
    """The report's `tests_status`: four buckets; the harness never fills the last two."""

    __test__ = False  # a record, not a pytest test class

    fail_to_pass: Bucket
    pass_to_pass: Bucket
    fail_to_fail: Bucket = field(default_factory=Bucket)
    pass_to_fail: Bucket = field(default_factory=Bucket)

    def as_official(self) -> dict[str, dict[str, list[str]]]:
        return {
            FAIL_TO_PASS: self.fail_to_pass.as_official(),
            PASS_TO_PASS: self.pass_to_pass.as_official(),
            FAIL_TO_FAIL: self.fail_to_fail.as_official(),
            PASS_TO_FAIL: self.pass_to_fail.as_official(),
        }

    @property
    def resolution(self) -> str:
        """FULL: every counted FAIL_TO_PASS and PASS_TO_PASS test succeeded (an empty or
        uncounted list counts as all succeeded); PARTIAL: PASS_TO_PASS all succeeded and some
        but not all FAIL_TO_PASS; NO otherwise."""
        if not _ratio_is_one(self.pass_to_pass):
            return RESOLVED_NO
        if _ratio_is_one(self.fail_to_pass):
            return RESOLVED_FULL
        return RESOLVED_PARTIAL if self.fail_to_pass.success else RESOLVED_NO


@dataclass(frozen=True)
class InstanceReport:
    """One instance's verdict, as the harness's `report.json` holds it. `tests_status` is None
    when no results were found (or the patch is None)."""

    instance_id: str
    patch_is_None: bool  # spelt as the official key
    patch_exists: bool
    patch_successfully_applied: bool
    resolved: bool
    tests_status: TestsStatus | None = None
    infra_failure: bool = False
    infra_failure_reason: str | None = None

    @property
    def resolution(self) -> str:
        return RESOLVED_NO if self.tests_status is None else self.tests_status.resolution

    def as_official(self) -> dict[str, dict[str, object]]:
        """`{instance_id: {...}}` with the harness's keys in its order."""
        body: dict[str, object] = {
            "patch_is_None": self.patch_is_None,
            "patch_exists": self.patch_exists,
            "patch_successfully_applied": self.patch_successfully_applied,
            "resolved": self.resolved,
            "infra_failure": self.infra_failure,
        }
        if self.infra_failure_reason is not None:
            body["infra_failure_reason"] = self.infra_failure_reason
        if self.tests_status is not None:
            body["tests_status"] = self.tests_status.as_official()
        return {self.instance_id: body}

    def official_json(self) -> str:
        """The bytes of `report.json` (indent 4, no final newline)."""
        return json.dumps(self.as_official(), indent=4)


# ---------------------------------------------------------------------------------------------
# Grading


class _Check(Protocol):
    def __call__(self, case: str, status_map: Mapping[str, str], /) -> bool: ...


def _bucket(cases: Iterable[str], succeeded: _Check, status_map: Mapping[str, str]) -> Bucket:
    success: list[str] = []
    failure: list[str] = []
    for case in cases:
        if succeeded(case, status_map):
            success.append(case)
        elif case_failed(case, status_map):
            failure.append(case)
    return Bucket(tuple(success), tuple(failure))


def _fail_only_bucket(cases: Iterable[str], status_map: Mapping[str, str]) -> Bucket:
    # fail_only runners record failures only: a test fails when its exact name is FAILED (no
    # truncated-id matching, ERROR is a success) and succeeds otherwise, missing included.
    success: list[str] = []
    failure: list[str] = []
    for case in cases:
        (failure if status_map.get(case) == FAILED else success).append(case)
    return Bucket(tuple(success), tuple(failure))


def grade(
    fail_to_pass: Sequence[str],
    pass_to_pass: Sequence[str],
    status_map: Mapping[str, str],
    *,
    instance_id: str = "",
    eval_type: str = PASS_AND_FAIL,
    fail_to_fail: Sequence[str] = (),
    pass_to_fail: Sequence[str] = (),
) -> InstanceReport:
    """The verdict for one instance whose tests ran, from any status source (the official log
    parser's map, or a trusted channel's). FAIL_TO_PASS (and FAIL_TO_FAIL, PASS_TO_FAIL) need a
    pass; PASS_TO_PASS a pass or a skip. The harness leaves FAIL_TO_FAIL and PASS_TO_FAIL empty."""
    if eval_type == PASS_AND_FAIL:
        tests = TestsStatus(
            fail_to_pass=_bucket(fail_to_pass, case_passed, status_map),
            pass_to_pass=_bucket(pass_to_pass, case_maintained, status_map),
            fail_to_fail=_bucket(fail_to_fail, case_passed, status_map),
            pass_to_fail=_bucket(pass_to_fail, case_passed, status_map),
        )
    elif eval_type == FAIL_ONLY:
        tests = TestsStatus(
            fail_to_pass=_fail_only_bucket(fail_to_pass, status_map),
            pass_to_pass=_fail_only_bucket(pass_to_pass, status_map),
            fail_to_fail=_fail_only_bucket(fail_to_fail, status_map),
            pass_to_fail=_fail_only_bucket(pass_to_fail, status_map),
        )
    else:
        raise InputError(
            f"unknown eval_type {eval_type!r} (known: {PASS_AND_FAIL}, {FAIL_ONLY})",
            field="eval_type",
        )
    return InstanceReport(
        instance_id=instance_id,
        patch_is_None=False,
        patch_exists=True,
        patch_successfully_applied=True,
        resolved=tests.resolution == RESOLVED_FULL,
        tests_status=tests,
    )


def classify_failure(text: str) -> tuple[str, str] | None:
    """(reason, tier) of the first infrastructure-failure signature in `text`, else None."""
    for reason, tier, pattern in INFRA_FAILURE_SIGNATURES:
        if pattern.search(text):
            return reason, tier
    return None


def report_from_log(
    instance_id: str,
    fail_to_pass: Sequence[str],
    pass_to_pass: Sequence[str],
    *,
    parser_name: str,
    test_output: str,
    model_patch: str | None,
    eval_type: str = PASS_AND_FAIL,
) -> InstanceReport:
    """`get_eval_report` with the test statuses: the report.json the harness writes for an
    instance whose eval script ran and produced `test_output`. Raises OfficialParserCrash
    where the harness writes no report (the run report then counts an error)."""
    if model_patch is None:
        return InstanceReport(instance_id, True, False, False, False)
    evaluated = logs_eval(test_output, parser_name)
    if not evaluated.found:
        # Advisory only: `resolved` is False either way.
        infra = classify_failure(normalize_newlines(test_output))
        return InstanceReport(
            instance_id,
            patch_is_None=False,
            patch_exists=True,
            patch_successfully_applied=False,
            resolved=False,
            infra_failure=infra is not None and infra[1] == ENVIRONMENT,
            infra_failure_reason=None if infra is None else infra[0],
        )
    return grade(
        fail_to_pass,
        pass_to_pass,
        evaluated.status_map,
        instance_id=instance_id,
        eval_type=eval_type,
    )


_PASSING = "pass"
_SKIPPED = "skip"
_FAILING = "fail"
_UNCOUNTED = "uncounted"


def _outcome(case: str, status_map: Mapping[str, str]) -> str:
    key = resolve_case(case, status_map)
    if key is None:
        return _FAILING
    status = status_map[key]
    if status in (PASSED, XFAIL):
        return _PASSING
    if status == SKIPPED:
        return _SKIPPED
    if status in (FAILED, ERROR):
        return _FAILING
    return _UNCOUNTED


def disagreement(
    official_map: Mapping[str, str], channel_map: Mapping[str, str], tests: Iterable[str]
) -> tuple[str, ...]:
    """The tests (FAIL_TO_PASS and PASS_TO_PASS names, in the order given, each once) whose
    outcome differs between the two maps, an outcome being what grading can tell apart: passed
    (PASSED, XFAIL), skipped, failed (FAILED, ERROR, missing) or uncounted (any other status)."""
    differing: dict[str, None] = {}
    for case in tests:
        if _outcome(case, official_map) != _outcome(case, channel_map):
            differing[case] = None
    return tuple(differing)


# ---------------------------------------------------------------------------------------------
# Files


class PredictionLike(Protocol):
    """What the run report reads from a prediction."""

    @property
    def model_name_or_path(self) -> str: ...

    @property
    def model_patch(self) -> str | None: ...


def model_dir_name(model_name_or_path: str) -> str:
    """The model's folder and file-name part: every `/` becomes `__`, nothing else changes."""
    return model_name_or_path.replace("/", "__")


def official_log_dir(root: Path, run_id: str, model: str, instance_id: str) -> Path:
    """`<root>/logs/run_evaluation/<run_id>/<model>/<instance_id>/` (the harness's root is its
    working directory)."""
    return root / "logs" / "run_evaluation" / run_id / model_dir_name(model) / instance_id


def instance_log_text(log_dir: Path) -> str:
    """The text the run report classifies for an instance: its test output and its instance log,
    those that exist, joined by a newline."""
    chunks = [
        (log_dir / name).read_text(encoding="utf-8", errors="replace")
        for name in (LOG_TEST_OUTPUT, LOG_INSTANCE)
        if (log_dir / name).exists()
    ]
    return "\n".join(chunks)


def run_report(
    dataset_ids: Sequence[str],
    predictions: Mapping[str, PredictionLike],
    reports: Mapping[str, InstanceReport],
    *,
    logs: Mapping[str, str] | None = None,
) -> dict[str, object]:
    """The run report `<model>.<run_id>.json` (schema_version 2, without the Docker-only
    container and image fields). `dataset_ids`: the instances selected for the run;
    `predictions` by instance id (the count and ids submitted are all of them, in the dataset or
    not); `reports`: the report.json of every instance that has one (an instance whose patch did
    not apply, that timed out or crashed the harness has none: an error); `logs`: each
    instance's `instance_log_text`, for the advisory failure reasons of the unresolved and
    errored ones."""
    completed: set[str] = set()
    resolved: set[str] = set()
    unresolved: set[str] = set()
    errors: set[str] = set()
    incomplete: set[str] = set()
    empty_patch: set[str] = set()
    for instance_id in dataset_ids:
        prediction = predictions.get(instance_id)
        if prediction is None:
            incomplete.add(instance_id)
        elif prediction.model_patch in ("", None):
            empty_patch.add(instance_id)
        elif instance_id not in reports:
            errors.add(instance_id)
        else:
            completed.add(instance_id)
            (resolved if reports[instance_id].resolved else unresolved).add(instance_id)
    reasons: dict[str, str] = {}
    infra: set[str] = set()
    ambiguous: set[str] = set()
    for instance_id in unresolved | errors:
        found = classify_failure((logs or {}).get(instance_id, ""))
        if found is not None:
            reasons[instance_id] = found[0]
            (infra if found[1] == ENVIRONMENT else ambiguous).add(instance_id)
    return {
        "total_instances": len(dataset_ids),
        "submitted_instances": len(predictions),
        "completed_instances": len(completed),
        "resolved_instances": len(resolved),
        "unresolved_instances": len(unresolved),
        "infra_failure_instances": len(infra),
        "ambiguous_failure_instances": len(ambiguous),
        "empty_patch_instances": len(empty_patch),
        "error_instances": len(errors),
        "completed_ids": sorted(completed),
        "incomplete_ids": sorted(incomplete),
        "empty_patch_ids": sorted(empty_patch),
        "submitted_ids": sorted(predictions),
        "resolved_ids": sorted(resolved),
        "unresolved_ids": sorted(unresolved),
        "infra_failure_ids": sorted(infra),
        "ambiguous_failure_ids": sorted(ambiguous),
        "failure_reasons": dict(sorted(reasons.items())),
        "error_ids": sorted(errors),
        "schema_version": 2,
    }


def run_report_filename(predictions: Mapping[str, PredictionLike], run_id: str) -> str:
    """`<model>.<run_id>.json`, the model being the first prediction's."""
    first = next(iter(predictions.values()), None)
    if first is None:
        raise InputError("no predictions: the run report is named after the first one")
    return f"{model_dir_name(first.model_name_or_path)}.{run_id}.json"


def run_report_json(report: Mapping[str, object]) -> str:
    """The bytes of the run report file (indent 4, a final newline)."""
    return json.dumps(report, indent=4) + "\n"
