"""The SWE-bench log parsers on test output as the real runners print it, quirks included."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from passbench.core.errors import UnknownNameError
from passbench.stages.benchmarks.swebench.logparsers import (
    ERROR,
    FAILED,
    PARSER_FOR_REPO,
    PARSERS,
    PASSED,
    SKIPPED,
    XFAIL,
    OfficialParserCrash,
    parse_log,
)

DATASETS = ("swebench-verified.jsonl.gz", "swebench-lite.jsonl.gz", "swebench-lite-dev.jsonl.gz")

PYTEST_NAMES = (
    "parse_log_pytest",
    "parse_log_astroid",
    "parse_log_flask",
    "parse_log_marshmallow",
    "parse_log_pvlib",
    "parse_log_pyvista",
    "parse_log_sqlfluff",
    "parse_log_xarray",
)
OPTIONS_NAMES = (
    "parse_log_pytest_options",
    "parse_log_pydicom",
    "parse_log_requests",
    "parse_log_pylint",
)
V2_NAMES = ("parse_log_pytest_v2", "parse_log_astropy", "parse_log_scikit", "parse_log_sphinx")
OTHER_NAMES = ("parse_log_django", "parse_log_seaborn", "parse_log_sympy", "parse_log_matplotlib")


def _dataset_rows(data_dir: Path) -> list[dict[str, str]]:
    rows: list[dict[str, str]] = []
    for name in DATASETS:
        with gzip.open(data_dir / "swebench" / name, "rt", encoding="utf-8") as handle:
            rows.extend(json.loads(line) for line in handle)
    return rows


def test_every_parser_of_the_harness_is_there() -> None:
    assert set(PARSERS) == {*PYTEST_NAMES, *OPTIONS_NAMES, *V2_NAMES, *OTHER_NAMES}
    assert len(PARSERS) == 20
    assert len(PARSER_FOR_REPO) == 18
    assert set(PARSER_FOR_REPO.values()) <= set(PARSERS)


def test_every_parser_the_datasets_name_is_known(data_dir: Path) -> None:
    rows = _dataset_rows(data_dir)
    named = {row["log_parser"] for row in rows}
    assert len(named) == 18  # 12 in Verified and Lite test, 6 more in Lite dev
    assert named <= set(PARSERS)
    for row in rows:
        assert PARSER_FOR_REPO[row["repo"]] == row["log_parser"], row["instance_id"]


def test_an_unknown_parser_is_an_input_error() -> None:
    with pytest.raises(UnknownNameError, match="parse_log_nope"):
        parse_log("parse_log_nope", "PASSED a")


# pytest -rA, as pytest 7 prints it for psf/requests (test_requests.py at the repository root).
PYTEST_RA = """\
============================= test session starts ==============================
platform linux -- Python 3.9.20, pytest-7.4.4, pluggy-1.5.0
rootdir: /testbed
collected 7 items

test_requests.py ..F.sxE                                                 [100%]

==================================== ERRORS ====================================
__________________ ERROR at setup of RequestsTestCase.test_conn ________________
E   fixture 'httpbin' not found
=================================== FAILURES ===================================
______________________ RequestsTestCase.test_invalid_url _______________________
>       requests.get('hiwpefhipowhefopw')
E       requests.exceptions.MissingSchema: Invalid URL 'hiwpefhipowhefopw': No schema supplied
==================================== PASSES ====================================
=========================== short test summary info ============================
PASSED test_requests.py::RequestsTestCase::test_basic_building
PASSED test_requests.py::RequestsTestCase::test_entry_points
PASSED test_requests.py::test_data_argument[a b]
SKIPPED [1] test_requests.py:120: needs the network
XFAIL test_requests.py::RequestsTestCase::test_xfail - reason: known bug
ERROR test_requests.py::RequestsTestCase::test_conn
FAILED test_requests.py::RequestsTestCase::test_invalid_url - requests.exceptions.MissingSchema: Invalid URL - No schema supplied
=========== 1 failed, 3 passed, 1 skipped, 1 xfailed, 1 error in 0.41s ===========
"""  # noqa: E501

PYTEST_RA_STATUSES = {
    "test_requests.py::RequestsTestCase::test_basic_building": PASSED,
    "test_requests.py::RequestsTestCase::test_entry_points": PASSED,
    # the id is cut at its first space
    "test_requests.py::test_data_argument[a": PASSED,
    "test_requests.py::RequestsTestCase::test_xfail": XFAIL,
    "test_requests.py::RequestsTestCase::test_conn": ERROR,
    "test_requests.py::RequestsTestCase::test_invalid_url": FAILED,
}


@pytest.mark.parametrize("name", PYTEST_NAMES + OPTIONS_NAMES + ("parse_log_matplotlib",))
def test_pytest_short_summary(name: str) -> None:
    # The `[1]` of the grouped SKIPPED line is no test; progress and banner lines are ignored.
    assert parse_log(name, PYTEST_RA) == PYTEST_RA_STATUSES


def test_pytest_quirks() -> None:
    log = "\n".join(
        (
            "PASSED [100%]",  # a wrapped progress line: pytest-dev__pytest-5262 expects it
            "SKIPPED tests/test_a.py::test_flaky",  # a real SKIPPED test is kept
            "ERROR: Could not find a version that satisfies the requirement",
            "PASSED",  # alone: nothing
            "FAILED - tests/test_a.py::test_dash",
            "  PASSED tests/test_a.py::test_indented",  # not at the line's start: nothing
            "XPASS tests/test_a.py::test_xpass",  # not a status the harness knows
            "PASSED tests/test_a.py::test_twice",
            "FAILED tests/test_a.py::test_twice",  # the last line wins
        )
    )
    assert parse_log("parse_log_pytest", log) == {
        "[100%]": PASSED,
        "tests/test_a.py::test_flaky": SKIPPED,
        # the status is the first word, whatever it is
        "Could": "ERROR:",
        "tests/test_a.py::test_dash": FAILED,
        "tests/test_a.py::test_twice": FAILED,
    }


URL_ID = "tests/test_utils.py::test_urldefragauth[//u:p@example.com/path-//example.com/path]"


def test_pytest_options_cuts_absolute_paths_in_parameters() -> None:
    log = "\n".join(
        (
            "PASSED tests/test_self.py::TestRunTC::test_stdin[/tmp/pytest-of-root/pytest-0/"
            "test_stdin0/mymodule.py]",
            "FAILED tests/test_utils.py::test_unzipped_paths_unchanged[/] - assert False",
            f"PASSED {URL_ID}",
            "PASSED tests/test_glob.py::test_glob[/tmp/*.py]",
            "PASSED tests/test_utils.py::test_plain",
            "PASSED tests/test_odd.py::test_x[a]b",  # after the last `]`: dropped
        )
    )
    assert parse_log("parse_log_requests", log) == {
        "tests/test_self.py::TestRunTC::test_stdin[/mymodule.py]": PASSED,
        "tests/test_utils.py::test_unzipped_paths_unchanged[/]": FAILED,
        URL_ID: PASSED,
        "tests/test_glob.py::test_glob[/tmp/*.py]": PASSED,
        "tests/test_utils.py::test_plain": PASSED,
        "tests/test_odd.py::test_x[a]": PASSED,
    }
    # The plain pytest parser keeps the path.
    assert "tests/test_glob.py::test_glob[/tmp/*.py]" in parse_log("parse_log_pytest", log)
    assert "tests/test_self.py::TestRunTC::test_stdin[/mymodule.py]" not in parse_log(
        "parse_log_pytest", log
    )


def test_matplotlib_renames_mouse_buttons() -> None:
    log = "\n".join(
        (
            "PASSED lib/matplotlib/tests/test_widgets.py::test_rectangle_minspan"
            "[MouseButton.LEFT-10.5-0-10-data]",
            "PASSED lib/matplotlib/tests/test_widgets.py::test_polygon_selector_remove"
            "[MouseButton.RIGHT]",
            "SKIPPED [2] lib/matplotlib/testing/compare.py:285: Don't know how to convert .svg",
        )
    )
    assert parse_log("parse_log_matplotlib", log) == {
        "lib/matplotlib/tests/test_widgets.py::test_rectangle_minspan[1-10.5-0-10-data]": PASSED,
        "lib/matplotlib/tests/test_widgets.py::test_polygon_selector_remove[3]": PASSED,
    }
    assert parse_log("parse_log_pytest", log) == {
        "lib/matplotlib/tests/test_widgets.py::test_rectangle_minspan"
        "[MouseButton.LEFT-10.5-0-10-data]": PASSED,
        "lib/matplotlib/tests/test_widgets.py::test_polygon_selector_remove"
        "[MouseButton.RIGHT]": PASSED,
    }


# astropy's pytest with colour: codes around statuses and names.
PYTEST_V2 = "\n".join(
    (
        "astropy/units/tests/test_format.py::test_unit_grammar[strings0-unit0] "
        "\x1b[32mPASSED\x1b[0m\x1b[32m [  1%]\x1b[0m",
        "\x1b[32mPASSED\x1b[0m astropy/units/tests/test_format.py::\x1b[1mtest_ogip_grammar_fail"
        "[log(photon /m**2/s)]\x1b[0m",
        "\x1b[31mFAILED\x1b[0m astropy/units/tests/test_format.py::test_cds[a - b] - "
        "AssertionError: 1 - 2",
        "SKIPPED [4] astropy/units/tests/test_quantity.py:33: needs matplotlib",
        "XFAIL astropy/io/fits/tests/test_core.py::test_x",
        "sphinx/tests/test_build.py::test_build_all PASSED",  # old pytest's verbose line
        "sphinx/tests/test_build.py::test_xpass XPASSED",
        "\x1b[1;31mFAILED\x1b[0m astropy/x.py::test_bold",  # a two-number code is not removed
        "PASSED\tastropy/x.py::test_tab",  # a tab is deleted, not a separator
        "PASSED",
    )
)


@pytest.mark.parametrize("name", V2_NAMES)
def test_pytest_v2(name: str) -> None:
    assert parse_log(name, PYTEST_V2) == {
        # the verbose line with a percentage is not read; ids keep their spaces
        "astropy/units/tests/test_format.py::test_ogip_grammar_fail[log(photon /m**2/s)]": PASSED,
        # a FAILED line is cut at its first " - ", inside the id too
        "astropy/units/tests/test_format.py::test_cds[a": FAILED,
        "astropy/io/fits/tests/test_core.py::test_x": XFAIL,
        "sphinx/tests/test_build.py::test_build_all": PASSED,
        "sphinx/tests/test_build.py::test_xpass": "XPASSED",
        # `PASSED\tx` became one word `PASSEDx`, a line of one word records nothing; the bold
        # red FAILED line neither starts nor ends with a status once cleaned
    }


def test_seaborn_reads_passes_and_summary_failures_only() -> None:
    log = "\n".join(
        (
            "tests/test_core.py::TestHueMapping::test_init_from_map PASSED            [ 10%]",
            "tests/test_core.py::TestHueMapping::test_verbose_failure FAILED          [ 20%]",
            "tests/test_core.py::TestHueMapping::test_skipped SKIPPED (needs scipy)   [ 30%]",
            "PASSED tests/test_core.py::TestHueMapping::test_summary_pass",
            "FAILED tests/test_core.py::TestHueMapping::test_summary_fail - AssertionError: x",
            "ERROR tests/test_core.py::TestHueMapping::test_error - KeyError",
            "SKIPPED [1] tests/test_core.py:40: needs scipy",
            "XFAIL tests/test_core.py::TestHueMapping::test_xfail",
            "PASSED",  # a bare status word: no crash (SWE-bench #611)
            "FAILED",
        )
    )
    assert parse_log("parse_log_seaborn", log) == {
        "tests/test_core.py::TestHueMapping::test_init_from_map": PASSED,
        "tests/test_core.py::TestHueMapping::test_summary_pass": PASSED,
        "tests/test_core.py::TestHueMapping::test_summary_fail": FAILED,
    }


# sympy's bin/test -C --verbose on one file.
SYMPY = """\
============================= test process starts ==============================
executable:         /opt/miniconda3/envs/testbed/bin/python  (3.9.19-final-0) [CPython]
architecture:       64-bit
cache:              no
ground types:       python
numpy:              None
random seed:        83811287
hash randomization: on (PYTHONHASHSEED=2519418587)

sympy/core/tests/test_basic.py[7]
test__aresame ok
test_structure ok
test_immutable F
test_equality E
test_matches_basic f
test_has s
test_printing printed something ok
test_last ok                                                              [FAIL]


________________________________________________________________________________
_______________ sympy/core/tests/test_basic.py:test_immutable ________________
Traceback (most recent call last):
  File "/testbed/sympy/core/tests/test_basic.py", line 38, in test_immutable
    assert not hasattr(b1, '__dict__')
AssertionError
________________________________________________________________________________
________________ sympy/core/tests/test_basic.py:test_equality _________________
Traceback (most recent call last):
  File "/testbed/sympy/core/tests/test_basic.py", line 45, in test_equality
    raise TypeError
TypeError

== tests finished: 4 passed, 1 failed, 1 skipped, 1 expected to fail,
1 exceptions, in 0.07 seconds ==
DO *NOT* COMMIT!
"""


def test_sympy() -> None:
    assert parse_log("parse_log_sympy", SYMPY) == {
        # the failure headers, by path and name
        "sympy/core/tests/test_basic.py:test_immutable": FAILED,
        "sympy/core/tests/test_basic.py:test_equality": FAILED,
        "test__aresame": PASSED,
        "test_structure": PASSED,
        "test_immutable": FAILED,
        "test_equality": ERROR,
        "test_printing": PASSED,
        # `f` (expected failure) and `s` are not recorded; nor is a file's last test, whose line
        # ends with the file's `[OK]`/`[FAIL]` (SWE-bench 2.1 cut it, 3.0 and later do not)
    }


def test_sympy_failure_header_pattern_is_unanchored() -> None:
    log = "see numpy/core/setup.py:12 for details\n"
    assert parse_log("parse_log_sympy", log) == {"numpy/core/setup.py:12 for": FAILED}


# Django's tests/runtests.py --verbosity 2.
DJANGO = """\
Testing against Django installed in '/testbed/django'
Importing application auth_tests
Operations to perform:
  Synchronize unmigrated apps: auth, auth_tests, contenttypes, messages, sessions
  Apply all migrations: admin, sites
Running migrations:
  Applying admin.0001_initial... OK
  Applying sites.0002_alter_domain_unique... OK
System check identified no issues (0 silenced).
test_ascii_validator (auth_tests.test_validators.UsernameValidatorsTests) ... ok
test_unicode_validator (auth_tests.test_validators.UsernameValidatorsTests) ... FAIL
test_help_text (auth_tests.test_validators.UserAttributeSimilarityValidatorTest) ... ERROR
test_skip (auth_tests.test_validators.OtherTests) ... skipped 'needs foo'
test_upper (auth_tests.test_validators.OtherTests) ...  OK
test_expected (auth_tests.test_validators.OtherTests) ... expected failure
test_post (csrf_tests.tests.CsrfViewMiddlewareTest)
A POST with an invalid token is rejected. ... ok

======================================================================
ERROR: test_help_text (auth_tests.test_validators.UserAttributeSimilarityValidatorTest)
----------------------------------------------------------------------
Traceback (most recent call last):
  File "/testbed/tests/auth_tests/test_validators.py", line 20, in test_help_text
KeyError: 'x'

======================================================================
FAIL: test_unicode_validator (auth_tests.test_validators.UsernameValidatorsTests)
----------------------------------------------------------------------
AssertionError: ValidationError not raised

----------------------------------------------------------------------
Ran 7 tests in 0.012s

FAILED (failures=1, errors=1, skipped=1, expected failures=1)
"""


def test_django() -> None:
    assert parse_log("parse_log_django", DJANGO) == {
        "test_ascii_validator (auth_tests.test_validators.UsernameValidatorsTests)": PASSED,
        "test_unicode_validator (auth_tests.test_validators.UsernameValidatorsTests)": FAILED,
        "test_help_text (auth_tests.test_validators.UserAttributeSimilarityValidatorTest)": ERROR,
        "test_skip (auth_tests.test_validators.OtherTests)": SKIPPED,
        "test_upper (auth_tests.test_validators.OtherTests)": PASSED,
        # a test with a docstring goes by the docstring's first line
        "A POST with an invalid token is rejected.": PASSED,
        # `ERROR: name (class)` and `FAIL: name (class)` record the bare method name
        "test_help_text": ERROR,
        "test_unicode_validator": FAILED,
    }


def test_django_results_on_a_later_line() -> None:
    log = "\n".join(
        (
            "test_runserver (admin_scripts.tests.ManageRunserver) ... Testing against Django "
            "installed in '/testbed/django' with up to 4 processes",
            "Checking the url ... of the app",  # holds " ... ": the loop credits the wrong test
            "System check identified no issues (0 silenced).",
            "ok",
            "test_view (admin_views.tests.AdminViewTests) ... Internal Server Error: /admin/x/",
            "ok",
            "test_version (admin_scripts.tests.CommandTypes)",
            "--version is equivalent to version",
            "Applying sites.0002_alter_domain_unique...test_no_migrations "
            "(migrations.test_commands.MigrateTests) ... ok",
            "test_broken (m.tests.T) ... FAIL",
            "okay, moving on",  # any line starting with "ok" passes the last started test
        )
    )
    assert parse_log("parse_log_django", log) == {
        "Checking the url": PASSED,
        # the multi-line pattern finds the right one as well
        "test_runserver (admin_scripts.tests.ManageRunserver)": PASSED,
        "test_view (admin_views.tests.AdminViewTests)": PASSED,
        "--version is equivalent to version": PASSED,
        "test_no_migrations (migrations.test_commands.MigrateTests)": PASSED,
        "test_broken (m.tests.T)": PASSED,
    }


def test_django_system_check_pattern_needs_no_full_stop() -> None:
    # Real Django ends the message with a full stop, which this official pattern does not allow.
    log = "test_a (m.T) ... System check identified no issues (0 silenced)\nok\n"
    assert parse_log("parse_log_django", log) == {"test_a (m.T)": PASSED}


@pytest.mark.parametrize("line", ["FAIL:", "ERROR:", "  FAIL:  "])
def test_django_crashes_where_the_official_parser_does(line: str) -> None:
    with pytest.raises(OfficialParserCrash):
        parse_log("parse_log_django", f"test_a (m.T) ... ok\n{line}\n")
