"""SWE-bench's Python log parsers: test output text -> `{test name: status}`, as the official
harness reads it (SWE-bench/SWE-bench `swebench/harness/log_parsers/python.py`, v5.0.x).

The dataset's `log_parser` column names the parser; `PARSERS` has every Python name the harness
registers (20: the 18 repository names of `MAP_REPO_TO_PARSER_PY` plus `parse_log_pytest_options`
and `parse_log_pytest_v2`), behind which there are seven behaviours:

- pytest (`-rA` short summary, `STATUS nodeid`): astroid, flask, marshmallow, pvlib, pytest,
  pyvista, sqlfluff, xarray; matplotlib the same after renaming two enum reprs;
- pytest with options (parametrize ids holding absolute paths cut to their last component):
  pydicom, requests, pylint;
- pytest v2 (ANSI colours and control characters removed, ids may hold spaces, old
  `nodeid STATUS` verbose lines too): astropy, scikit-learn, sphinx;
- seaborn (summary or verbose lines, PASSED and FAILED only);
- sympy (sympy's own `bin/test` runner: `test_x ok`, `test_x F`, `test_x E`);
- django (`./tests/runtests.py --verbosity 2`: `test_x (module.Class) ... ok`).

The statuses are the harness's TestStatus values (PASSED, FAILED, SKIPPED, ERROR, XFAIL), but, as
officially, a value is whatever word the line starts with or ends with: `ERROR: could not...`
gives status `ERROR:` for test `could`. Grading counts only the five real values.

Each parser reproduces the official one, quirks included; the comments say where a quirk lives.
A parser sees the text as the harness gives it: the test output file read in text mode, so `\\r`
and `\\r\\n` are already `\\n` (`grading.logs_eval` does that normalisation).

What the harness had before 5.0 (4.0.x and 4.1.0, the versions most published reports were made
with), for anyone comparing against older logs: no `SKIPPED [N] file:line: reason` filter (the
count `[N]` became a test); pytest v2 kept only the first word of an id and cut FAILED lines with
`replace(" - ", " ")`; seaborn raised IndexError on a bare `PASSED`/`FAILED` line.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from types import MappingProxyType

from passbench.core.errors import UnknownNameError

PASSED = "PASSED"
FAILED = "FAILED"
SKIPPED = "SKIPPED"
ERROR = "ERROR"
XFAIL = "XFAIL"
#: The official TestStatus values, in the enum's order (FAILED first): the prefixes a
#: pytest-family parser recognises.
TEST_STATUSES = (FAILED, PASSED, SKIPPED, ERROR, XFAIL)

Parser = Callable[[str], dict[str, str]]


class OfficialParserCrash(ValueError):
    """The official parser raises on this text (an IndexError in SWE-bench: django's `FAIL:` or
    `ERROR:` alone on a line). The harness then writes no report.json for the instance, and the
    run report counts it among `error_ids`; we raise this instead of an IndexError so a caller
    can tell the official outcome from a bug of ours."""


def parse_log(parser_name: str, text: str) -> dict[str, str]:
    """`{test name: status}` from `text`, as the official parser called `parser_name` reads it."""
    try:
        parser = PARSERS[parser_name]
    except KeyError:
        known = ", ".join(sorted(PARSERS))
        raise UnknownNameError(
            f"unknown SWE-bench log parser {parser_name!r} (known: {known})", field="log_parser"
        ) from None
    return parser(text)


def _starts_with_status(line: str) -> bool:
    return line.startswith(TEST_STATUSES)


def _is_skip_count(status: str, name: str) -> bool:
    # pytest's `SKIPPED [3] tests/test_a.py:12: reason` summary groups skips: `[3]` is a count,
    # not a test (SWE-bench #598). Only SKIPPED: the PASS_TO_PASS lists of pytest-dev__pytest-5262
    # and -7521 expect a literal `[100%]` test, left by wrapped `PASSED [100%]` progress lines.
    return status == SKIPPED and re.fullmatch(r"\[\d+\]", name) is not None


def _summary_entry(line: str) -> tuple[str, str] | None:
    """(status, name) of a pytest-family summary line: the first two whitespace-separated
    words. So an id holding a space is cut at it (the dataset's ids for these parsers are cut the
    same way), and a FAILED line's ` - message` never reaches the name."""
    if not _starts_with_status(line):
        return None
    if line.startswith(FAILED):
        # Officially every " - " becomes " "; only the name's position can change (a line
        # `FAILED - x` names `x`), so the same replacement is kept.
        line = line.replace(" - ", " ")
    words = line.split()
    if len(words) < 2 or _is_skip_count(words[0], words[1]):
        return None
    return words[0], words[1]


def parse_log_pytest(text: str) -> dict[str, str]:
    """`pytest -rA` short test summary lines: `PASSED tests/test_a.py::test_x`."""
    statuses: dict[str, str] = {}
    for line in text.split("\n"):
        entry = _summary_entry(line)
        if entry is not None:
            statuses[entry[1]] = entry[0]
    return statuses


_OPTION = re.compile(r"(.*?)\[(.*)\]")


def _without_path_prefix(name: str) -> str:
    # A parametrize id holding an absolute path (a tmp dir differing per run) is reduced to its
    # last component: `test_stdin[/tmp/x/mymodule.py]` -> `test_stdin[/mymodule.py]`; `//...`
    # (URLs) and globs are kept. The match runs from the first `[` to the last `]`, so anything
    # after the last `]` is dropped, paths or not.
    found = _OPTION.search(name)
    if found is None:
        return name
    head, option = found.groups()
    if option.startswith("/") and not option.startswith("//") and "*" not in option:
        option = "/" + option.split("/")[-1]
    return f"{head}[{option}]"


def parse_log_pytest_options(text: str) -> dict[str, str]:
    """pytest summary lines, absolute paths in parametrize ids cut to their last component."""
    statuses: dict[str, str] = {}
    for line in text.split("\n"):
        entry = _summary_entry(line)
        if entry is not None:
            statuses[_without_path_prefix(entry[1])] = entry[0]
    return statuses


def parse_log_matplotlib(text: str) -> dict[str, str]:
    """pytest summary lines, after `MouseButton.LEFT` -> `1` and `MouseButton.RIGHT` -> `3`
    anywhere in the line (the dataset's ids were recorded when the enum printed as a number)."""
    statuses: dict[str, str] = {}
    for line in text.split("\n"):
        line = line.replace("MouseButton.LEFT", "1").replace("MouseButton.RIGHT", "3")
        entry = _summary_entry(line)
        if entry is not None:
            statuses[entry[1]] = entry[0]
    return statuses


_COLOUR_CODE = re.compile(r"\[(\d+)m")
# Characters 1 to 31 are deleted, not replaced: a tab inside a line joins its neighbours.
_CONTROL_CHARACTERS = str.maketrans("", "", "".join(chr(code) for code in range(1, 32)))


def parse_log_pytest_v2(text: str) -> dict[str, str]:
    """pytest output of later versions: colour codes removed, the whole rest of a summary line
    is the id (ids may hold spaces), and a verbose `nodeid STATUS` line counts too."""
    statuses: dict[str, str] = {}
    for line in text.split("\n"):
        # `[31m` style codes go first (only single numbers: `[1;31m` stays), then the control
        # characters, the ESC of each code among them.
        line = _COLOUR_CODE.sub("", line).translate(_CONTROL_CHARACTERS)
        if _starts_with_status(line):
            if line.startswith(FAILED):
                line = line.split(" - ", 1)[0]
            words = line.split()
            if len(words) >= 2 and not _is_skip_count(words[0], words[1]):
                statuses[" ".join(words[1:])] = words[0]
        elif line.endswith(TEST_STATUSES):
            # Old pytest's verbose line without a percentage. Any line ending in a status word
            # counts (`collected ... ERROR` names `collected ...`), and the status is the whole
            # last word (`tests/a.py::t XPASSED` records status `XPASSED`).
            words = line.split()
            if len(words) >= 2:
                statuses[" ".join(words[:-1])] = words[-1]
    return statuses


def parse_log_seaborn(text: str) -> dict[str, str]:
    """`FAILED nodeid ...`, `PASSED nodeid` and verbose `nodeid PASSED [ 50%]` lines; SKIPPED,
    ERROR and XFAIL are never recorded, and a verbose FAILED line is not read either."""
    statuses: dict[str, str] = {}
    for line in text.split("\n"):
        words = line.split()
        if len(words) < 2:
            continue
        if line.startswith(FAILED):
            statuses[words[1]] = FAILED
        elif f" {PASSED} " in line:
            if words[1] == PASSED:
                statuses[words[0]] = PASSED
        elif line.startswith(PASSED):
            statuses[words[1]] = PASSED
    return statuses


# sympy's failure headers `____ sympy/core/tests/test_basic.py:test_immutable ____`. Nothing
# anchors it: any text ` <something>.py:<something> ` on a line records a FAILED
# `<something>.py:<something>`, `<something>` running as far as the line allows.
_SYMPY_FAILURE_HEADER = re.compile(r"(_*) (.*)\.py:(.*) (_*)")


def parse_log_sympy(text: str) -> dict[str, str]:
    """sympy's `bin/test --verbose` lines `test_name ok` / `F` / `E` (after strip), and its
    failure headers as `path.py:test_name` FAILED. Other results (`f` expected failure, `s`
    skipped, `X`, `T`) are not recorded."""
    statuses: dict[str, str] = {}
    for found in _SYMPY_FAILURE_HEADER.finditer(text):
        statuses[f"{found.group(2)}.py:{found.group(3)}"] = FAILED
    for raw in text.split("\n"):
        line = raw.strip()
        if not line.startswith("test_"):
            continue
        # The name is the first word whatever the test printed between it and its result.
        name = line.split()[0]
        if line.endswith(" E"):
            statuses[name] = ERROR
        if line.endswith(" F"):
            statuses[name] = FAILED
        if line.endswith(" ok"):
            statuses[name] = PASSED
    return statuses


_DJANGO_PASS_SUFFIXES = (" ... ok", " ... OK", " ...  OK")
# django__django-7188: a migration's progress line and the test's result share one line.
_DJANGO_7188_PREFIX = "Applying sites.0002_alter_domain_unique...test_no_migrations"
# A test whose result line was split by a multi-line message printed before `ok`.
_DJANGO_INTERRUPTED = tuple(
    re.compile(r"^(.*?)\s\.\.\.\s" + message + r"\nok$", re.MULTILINE)
    for message in (
        r"Testing against Django installed in ((?s:.*?)) silenced\)\.",
        r"Internal Server Error: /(.*)/",
        # Matches only a message without the full stop Django prints after it.
        r"System check identified no issues \(0 silenced\)",
    )
)


def _django_word_after(line: str) -> str:
    # `FAIL: test_x (module.Class)` records only `test_x`, not the name the `... FAIL` line
    # records; a bare `FAIL:` crashes the official parser.
    words = line.split()
    if len(words) < 2:
        raise OfficialParserCrash(f"the official django parser fails on the line {line!r}")
    return words[1].strip()


def parse_log_django(text: str) -> dict[str, str]:
    """Django's own runner at verbosity 2: `name ... ok|OK|skipped|FAIL|ERROR`, where name is
    `test_x (module.Class)` or, for a test with a docstring, the docstring's first line (unittest
    prints the name on one line and `first docstring line ... ok` on the next: the dataset's
    names are those first lines). A result printed on a later line than ` ... ` is read from any
    line starting with `ok`, credited to the last line holding ` ... `."""
    statuses: dict[str, str] = {}
    last_started: str | None = None
    for raw in text.split("\n"):
        line = raw.strip()
        if "--version is equivalent to version" in line:
            # A test whose output spans several lines; recorded by its docstring's words.
            statuses["--version is equivalent to version"] = PASSED
        if " ... " in line:
            last_started = line.split(" ... ")[0]
        for suffix in _DJANGO_PASS_SUFFIXES:
            if line.endswith(suffix):
                if line.startswith(_DJANGO_7188_PREFIX):
                    line = line.split("...", 1)[-1].strip()
                statuses[line.rsplit(suffix, 1)[0]] = PASSED
                break
        if " ... skipped" in line:
            statuses[line.split(" ... skipped")[0]] = SKIPPED
        if line.endswith(" ... FAIL"):
            statuses[line.split(" ... FAIL")[0]] = FAILED
        if line.startswith("FAIL:"):
            statuses[_django_word_after(line)] = FAILED
        if line.endswith(" ... ERROR"):
            statuses[line.split(" ... ERROR")[0]] = ERROR
        if line.startswith("ERROR:"):
            statuses[_django_word_after(line)] = ERROR
        if line.startswith("ok") and last_started is not None:
            # Any line starting with "ok" ("okay", "ok." printed by a test) passes the last
            # started test, even one already recorded as FAIL.
            statuses[last_started] = PASSED
    for pattern in _DJANGO_INTERRUPTED:
        for found in pattern.finditer(text):
            statuses[found.group(1)] = PASSED
    return statuses


#: Every Python parser name of the harness's registry, to its behaviour.
PARSERS: Mapping[str, Parser] = MappingProxyType(
    {
        "parse_log_pytest": parse_log_pytest,
        "parse_log_pytest_options": parse_log_pytest_options,
        "parse_log_django": parse_log_django,
        "parse_log_pytest_v2": parse_log_pytest_v2,
        "parse_log_seaborn": parse_log_seaborn,
        "parse_log_sympy": parse_log_sympy,
        "parse_log_matplotlib": parse_log_matplotlib,
        "parse_log_astroid": parse_log_pytest,
        "parse_log_flask": parse_log_pytest,
        "parse_log_marshmallow": parse_log_pytest,
        "parse_log_pvlib": parse_log_pytest,
        "parse_log_pyvista": parse_log_pytest,
        "parse_log_sqlfluff": parse_log_pytest,
        "parse_log_xarray": parse_log_pytest,
        "parse_log_pydicom": parse_log_pytest_options,
        "parse_log_requests": parse_log_pytest_options,
        "parse_log_pylint": parse_log_pytest_options,
        "parse_log_astropy": parse_log_pytest_v2,
        "parse_log_scikit": parse_log_pytest_v2,
        "parse_log_sphinx": parse_log_pytest_v2,
    }
)

#: The parser the harness used per repository before the dataset carried a `log_parser`
#: column (`MAP_REPO_TO_PARSER_PY`), for rows of older copies of the data.
PARSER_FOR_REPO: Mapping[str, str] = MappingProxyType(
    {
        "astropy/astropy": "parse_log_astropy",
        "django/django": "parse_log_django",
        "marshmallow-code/marshmallow": "parse_log_marshmallow",
        "matplotlib/matplotlib": "parse_log_matplotlib",
        "mwaskom/seaborn": "parse_log_seaborn",
        "pallets/flask": "parse_log_flask",
        "psf/requests": "parse_log_requests",
        "pvlib/pvlib-python": "parse_log_pvlib",
        "pydata/xarray": "parse_log_xarray",
        "pydicom/pydicom": "parse_log_pydicom",
        "pylint-dev/astroid": "parse_log_astroid",
        "pylint-dev/pylint": "parse_log_pylint",
        "pytest-dev/pytest": "parse_log_pytest",
        "pyvista/pyvista": "parse_log_pyvista",
        "scikit-learn/scikit-learn": "parse_log_scikit",
        "sqlfluff/sqlfluff": "parse_log_sqlfluff",
        "sphinx-doc/sphinx": "parse_log_sphinx",
        "sympy/sympy": "parse_log_sympy",
    }
)
