# mypy: ignore-errors
# (runs as a program's source inside the sandbox, under the evaluation environment's Python)
"""CWEval's pytest files as unittest cases, the tail of a "unittest" program. INSIDE the sandbox.

CWEval runs `pytest -k "not _unsafe"` on each `<stem>_test.py`, which imports the candidate
from `<stem>_task`; a test counts for functionality or security by its `pytest.mark`. Here the
host prepends `_CW_PROGRAM`: the two module names, their sources, each case's time limit and
`oracle` (True: also the `_unsafe` tests, for the oracle self-check, without per-case limits
as CWEval runs them), and
this file turns every parametrized case into one method of `TestCases`, named
`test_<seq>_<tag>__<function>[<index>]`, so the sandbox runner's unittest path (its tamper
checks and its nonce-guarded verdict channel) reports each case and the host reads the tag from
the name (benchmarks/cweval/benchmark.py). Nothing here reports a verdict.

Why not pytest itself: its collection, plugins and reports would run in the candidate's process
and decide the verdict there, a much larger surface than the unittest classes the runner
guards; these tests use only `param`, `mark.<name>`, `mark.parametrize`, `raises`, `fixture`
and the `tmp_path` fixture, which the small `pytest` module below provides. pytest-timeout's
per-test limit (signal method) and `wrapt_timeout_decorator.timeout` are signal timers that
put the runner's own alarm back when they end.

Order, as under pytest: the tests' module is executed first and imports the candidate's (one
test patches `tempfile.mktemp` before that import). While the candidate's module runs, the
shims are out of `sys.modules`, and after it they must be unchanged, else the program fails.

Standard library only, no passbench imports: this text runs as the program's source.
"""

import importlib.util as _cw_importlib_util
import itertools as _cw_itertools
import pathlib as _cw_pathlib
import re as _cw_re
import signal as _cw_signal
import sys as _cw_sys
import tempfile as _cw_tempfile
import time as _cw_time
import types as _cw_types
import unittest as _cw_unittest

_CW_TAGS = ("functionality", "security")
# what the host wrote above this text (benchmarks/cweval/benchmark.py program_source)
_CW_TASK = globals()["_CW_PROGRAM"]["task"]  # the candidate's module name: "<stem>_task"
_CW_TEST = globals()["_CW_PROGRAM"]["test"]  # the tests' module name: "<stem>_test"
_CW_CANDIDATE = globals()["_CW_PROGRAM"]["candidate"]
_CW_TESTS = globals()["_CW_PROGRAM"]["tests"]
_CW_ORACLE = globals()["_CW_PROGRAM"]["oracle"]
_CW_TEST_TIMEOUT_S = globals()["_CW_PROGRAM"]["case_timeout_s"]
#: taken before the candidate runs: pytest reports a case that raises it as skipped, which
#: CWEval's run_tests counts as not passed; unittest would count it as no failure
_CW_SKIP = _cw_unittest.SkipTest


# ---- timers ---------------------------------------------------------------------------------


def _cw_with_alarm(seconds, make_error, function, *args, **kwargs):
    """`function(*args, **kwargs)` with `make_error()` raised after `seconds`; an enclosing
    alarm (the runner's limit for the whole run) that would fire sooner is left alone, and
    one that fires later is set again, less the time spent here."""
    outer_left = _cw_signal.getitimer(_cw_signal.ITIMER_REAL)[0]
    if outer_left and outer_left <= seconds:
        return function(*args, **kwargs)

    def expired(signum, frame):
        raise make_error()

    previous = _cw_signal.signal(_cw_signal.SIGALRM, expired)
    started = _cw_time.monotonic()
    _cw_signal.setitimer(_cw_signal.ITIMER_REAL, seconds)
    try:
        return function(*args, **kwargs)
    finally:
        _cw_signal.setitimer(_cw_signal.ITIMER_REAL, 0)
        _cw_signal.signal(_cw_signal.SIGALRM, previous)
        if outer_left:
            left = outer_left - (_cw_time.monotonic() - started)
            _cw_signal.setitimer(_cw_signal.ITIMER_REAL, max(left, 0.001))


# ---- the `pytest` the tests import ------------------------------------------------------------


class _CwFailed(Exception):
    """pytest's `Failed` (pytest.fail, DID NOT RAISE, a test's timeout)."""


class _CwParameterSet:
    def __init__(self, values, marks, id):
        self.values = tuple(values)
        self.marks = tuple(marks if isinstance(marks, (list, tuple)) else (marks,))
        self.id = id


class _CwMark:
    """`pytest.mark.<name>(...)`: a mark, and a decorator that attaches itself."""

    def __init__(self, name, args=(), kwargs=None):
        self.name = name
        self.args = tuple(args)
        self.kwargs = dict(kwargs or {})

    def __call__(self, *args, **kwargs):
        if len(args) == 1 and callable(args[0]) and not kwargs:
            function = args[0]
            function.__dict__.setdefault("_cw_marks", []).append(self)
            return function
        return _CwMark(self.name, args, kwargs)


class _CwMarks:
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _CwMark(name)


class _CwExceptionInfo:
    def __init__(self):
        self.type = None
        self.value = None


class _CwRaises:
    def __init__(self, expected, match):
        self.expected = expected
        self.match = match
        self.info = _CwExceptionInfo()

    def __enter__(self):
        return self.info

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            raise _CwFailed(f"DID NOT RAISE {self.expected}")
        if not issubclass(exc_type, self.expected):
            return False
        if self.match is not None and not _cw_re.search(self.match, str(exc)):
            raise AssertionError(
                f"Regex pattern did not match.\n Regex: {self.match!r}\n Input: {str(exc)!r}"
            )
        self.info.type, self.info.value = exc_type, exc
        return True


def _cw_param(*values, marks=(), id=None):
    return _CwParameterSet(values, marks, id)


def _cw_raises(expected_exception, *, match=None):
    return _CwRaises(expected_exception, match)


def _cw_fixture(function=None, **options):
    def mark(target):
        target._cw_fixture = True
        return target

    return mark(function) if callable(function) else mark


def _cw_fail(reason=""):
    raise _CwFailed(reason)


def _cw_timeout(
    dec_timeout=None, use_signals=True, timeout_exception=None, exception_message=None, *_, **__
):
    """wrapt_timeout_decorator.timeout: TimeoutError after `dec_timeout` seconds."""

    def decorate(function):
        def wrapper(*args, **kwargs):
            if not dec_timeout:
                return function(*args, **kwargs)
            error = timeout_exception or TimeoutError
            message = exception_message or (
                f"Function {function.__name__} timed out after {dec_timeout} seconds"
            )
            return _cw_with_alarm(
                float(dec_timeout), lambda: error(message), function, *args, **kwargs
            )

        wrapper.__name__ = getattr(function, "__name__", "wrapper")
        wrapper.__wrapped__ = function
        return wrapper

    return decorate


def _cw_module(name, attributes):
    module = _cw_types.ModuleType(name)
    module.__dict__.update(attributes)
    return module


_cw_pytest = _cw_module(
    "pytest",
    {
        "param": _cw_param,
        "mark": _CwMarks(),
        "raises": _cw_raises,
        "fixture": _cw_fixture,
        "fail": _cw_fail,
        "fail_exception": _CwFailed,
    },
)
_cw_wrapt = _cw_module("wrapt_timeout_decorator", {"timeout": _cw_timeout, "__all__": ["timeout"]})
_CW_SHIMS = {"pytest": _cw_pytest, "wrapt_timeout_decorator": _cw_wrapt}


def _cw_parts(value):
    """What a value's behaviour is made of: a function's code and defaults too (they can be
    replaced without replacing the function)."""
    if isinstance(value, _cw_types.FunctionType):
        return (value, value.__code__, value.__defaults__, value.__kwdefaults__)
    return (value,)


def _cw_snapshot():
    """Identity of everything the shims and this harness are made of so far (its globals,
    the shim modules, its classes), as an immutable tuple."""
    seen = [(("globals", key), _cw_parts(value)) for key, value in list(globals().items())]
    for name, module in _CW_SHIMS.items():
        seen += [((name, key), _cw_parts(value)) for key, value in vars(module).items()]
    classes = (_CwFailed, _CwParameterSet, _CwMark, _CwMarks, _CwRaises, _CwExceptionInfo)
    for cls in (*classes, _CwCandidateLoader):
        seen += [((cls.__name__, key), _cw_parts(value)) for key, value in vars(cls).items()]
    return tuple(seen)


def _cw_changed(before):
    """What of `before` is no longer there, or no longer the same object."""
    after = dict(_cw_snapshot())
    changed = [key for key, parts in before if key not in after or len(after[key]) != len(parts)]
    changed += [
        key
        for key, parts in before
        if key in after and any(a is not b for a, b in zip(after[key], parts, strict=False))
    ]
    changed += [
        f"sys.modules[{n!r}]" for n, m in _CW_SHIMS.items() if _cw_sys.modules.get(n) is not m
    ]
    return changed


_cw_sys.modules.update(_CW_SHIMS)


# ---- the candidate, imported by the tests ----------------------------------------------------


class _CwCandidateLoader:
    """Finds `_CW_TASK` (only) and executes the candidate as it, with the shims hidden."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != _CW_TASK:
            return None
        return _cw_importlib_util.spec_from_loader(fullname, self, origin=f"{_CW_TASK}.py")

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        module.__file__ = f"{_CW_TASK}.py"
        for name in _CW_SHIMS:
            _cw_sys.modules.pop(name, None)
        try:
            exec(compile(_CW_CANDIDATE, f"{_CW_TASK}.py", "exec"), module.__dict__)
        finally:
            _cw_sys.modules.update(_CW_SHIMS)


def _cw_load_tests():
    """The tests' module, executed as pytest imports it (the candidate's module with it);
    RuntimeError when the candidate changed the harness or the shims meanwhile."""
    before = _cw_snapshot()
    loader = _CwCandidateLoader()
    _cw_sys.meta_path.insert(0, loader)
    tests = _cw_types.ModuleType(_CW_TEST)
    tests.__file__ = f"{_CW_TEST}.py"
    try:
        exec(compile(_CW_TESTS, f"{_CW_TEST}.py", "exec"), tests.__dict__)
    finally:
        if loader in _cw_sys.meta_path:
            _cw_sys.meta_path.remove(loader)
    changed = _cw_changed(before)
    if changed:
        names = ", ".join(str(key) for key in changed[:4])
        raise RuntimeError(f"the candidate changed the test harness or its shims: {names}")
    return tests


_cw_tests = _cw_load_tests()


# ---- the cases -------------------------------------------------------------------------------


def _cw_argnames(spec):
    if isinstance(spec, str):
        return [name.strip() for name in spec.split(",") if name.strip()]
    return list(spec)


def _cw_cases(function):
    """(values by argument name, marks) of each case of a test function, in pytest's order."""
    own = list(getattr(function, "_cw_marks", []))
    parametrize = [mark for mark in own if mark.name == "parametrize"]
    others = [mark for mark in own if mark.name != "parametrize"]
    axes = []
    for mark in reversed(parametrize):  # the decorator nearest the function varies slowest
        names = _cw_argnames(mark.args[0] if mark.args else mark.kwargs["argnames"])
        values = mark.args[1] if len(mark.args) > 1 else mark.kwargs["argvalues"]
        axis = []
        for value in values:
            if isinstance(value, _CwParameterSet):
                items, marks = value.values, value.marks
            else:
                items, marks = ((value,) if len(names) == 1 else tuple(value)), ()
            axis.append((dict(zip(names, items, strict=True)), marks))
        axes.append(axis)
    for combination in _cw_itertools.product(*axes):
        arguments, marks = {}, list(others)
        for values, extra in combination:
            arguments.update(values)
            marks.extend(extra)
        yield arguments, marks


def _cw_tag(marks):
    for mark in marks:
        if isinstance(mark, _CwMark) and mark.name in _CW_TAGS:
            return mark.name
    return "untagged"


_cw_tmp_paths = _cw_itertools.count()


def _cw_tmp_path():
    """pytest's `tmp_path`: a new empty folder in the private /tmp. Named by a counter: the
    official harness's subprocess wrappers answer b"" to any command containing "ps", which a
    random name could."""
    path = _cw_pathlib.Path(
        _cw_tempfile.gettempdir(), "pytest-of-sandbox", f"test{next(_cw_tmp_paths)}"
    )
    path.mkdir(parents=True)
    return path


def _cw_fixture_value(name, teardowns):
    if name == "tmp_path":
        return _cw_tmp_path()
    fixture = getattr(_cw_tests, name, None)
    if not getattr(fixture, "_cw_fixture", False):
        raise TypeError(f"fixture '{name}' not found")
    value = fixture()
    if isinstance(value, _cw_types.GeneratorType):
        teardowns.append(value)
        return next(value)
    return value


def _cw_method(function, arguments):
    code = function.__code__
    wanted = code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]

    def test(self):
        outcome = getattr(self, "_outcome", None)
        teardowns = []
        try:
            kwargs = {}
            for name in wanted:
                kwargs[name] = (
                    arguments[name] if name in arguments else _cw_fixture_value(name, teardowns)
                )
            if _CW_ORACLE:  # CWEval's self-check is a plain `pytest benchmark/`: no limit
                function(**kwargs)
            else:
                _cw_with_alarm(
                    _CW_TEST_TIMEOUT_S,
                    lambda: _CwFailed(f"Timeout >{_CW_TEST_TIMEOUT_S}s"),
                    function,
                    **kwargs,
                )
        except _CW_SKIP as skipped:
            raise _CwFailed(f"skipped: {skipped}") from None
        finally:
            for generator in reversed(teardowns):
                for _ in generator:
                    pass
            # no case expects to fail: a candidate that set this on the running case (through
            # its frames) would have its failure counted as a success
            if getattr(outcome, "expecting_failure", False):
                outcome.expecting_failure = False
                raise _CwFailed("the case was made to expect its failure") from None

    return test


class TestCases(_cw_unittest.TestCase):
    pass


def _cw_collect():
    seq = 0
    for name, function in list(vars(_cw_tests).items()):
        if not name.startswith("test") or not isinstance(function, _cw_types.FunctionType):
            continue
        if "_unsafe" in name and not _CW_ORACLE:  # CWEval: pytest -k "not _unsafe"
            continue
        for index, (arguments, marks) in enumerate(_cw_cases(function)):
            tag = _cw_tag(marks)
            if tag == "untagged" and not _CW_ORACLE:  # CWEval counts only marked tests
                continue
            setattr(
                TestCases, f"test_{seq:03d}_{tag}__{name}[{index}]", _cw_method(function, arguments)
            )
            seq += 1


_cw_collect()
