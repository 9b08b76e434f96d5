# mypy: ignore-errors
# (runs as a program's source inside the sandbox; it mirrors LiveCodeBench's untyped harness)
"""LiveCodeBench's way of running a candidate, as the head of an "io" program. INSIDE the sandbox.

The host appends `_LCB_CODE` (the candidate, already prepared as LiveCodeBench prepares it:
the import prefix, for stdin programs the body wrapped into `wrapped_function`) and `_LCB_FUNC`
(the LeetCode method's name; None for stdin programs), then `_lcb_method = _lcb_load()`. The
io style (sandbox/inside/_io_style.py) then calls `_lcb_run` once per test input, under the worker's
per-input time limit, and reports what it returns; the host compares it with the expected
output (benchmarks/livecodebench/grade.py). Expected outputs never enter this process.

As lcb_runner/evaluation/testing_util.py: `compile_code` (exec in a fresh module named
`tmp_sol`, `Solution()` when the code mentions `class Solution`), `get_function`,
`grade_call_based` (the call, tuples turned into lists), `call_method` and `Capturing` (stdin
patched with the test's input, stdout captured, `SystemExit` ignored). An exception is returned
as its repr, not raised, so the host can write LiveCodeBench's `error` field; only what
LiveCodeBench does not catch (`BaseException`s from a LeetCode method) escapes.

Standard library only, no passbench imports: this text runs as the program's source.
"""

import io as _lcb_io
import sys as _lcb_sys
import types as _lcb_types
from unittest.mock import mock_open as _lcb_mock_open
from unittest.mock import patch as _lcb_patch

_LCB_CODE = ""
_LCB_FUNC = None


class _LcbMockBuffer:
    """`sys.stdin.buffer` of the stdin harness: the input as bytes."""

    def __init__(self, inputs):
        self.inputs = inputs.encode("utf-8")

    def read(self, *args):
        return self.inputs

    def readline(self, *args):
        return self.inputs.split(b"\n")[0] + b"\n"


class _LcbMockStdin:
    """`sys.stdin` of the stdin harness (LiveCodeBench's MockStdinWithBuffer)."""

    def __init__(self, inputs):
        self.inputs = inputs
        self._stringio = _lcb_io.StringIO(inputs)
        self.buffer = _LcbMockBuffer(inputs)

    def read(self, *args):
        return self.inputs

    def readline(self, *args):
        return self._stringio.readline(*args)

    def readlines(self, *args):
        return self.inputs.split("\n")

    def __getattr__(self, name):
        return getattr(self._stringio, name)


def _lcb_load():
    """compile_code + get_function: the callable each test runs. A failure here is the
    program's loading error (LiveCodeBench's "Error during testing: ...")."""
    module = _lcb_types.ModuleType("tmp_sol", "")
    exec(_LCB_CODE, module.__dict__)
    compiled = module.Solution() if "class Solution" in _LCB_CODE else module
    method = getattr(compiled, _LCB_FUNC or "wrapped_function", None)
    if method is None:
        # what LiveCodeBench reports when get_function finds nothing (it unpacks None)
        raise TypeError("cannot unpack non-iterable NoneType object")
    return method


def _lcb_call_stdin(method, inputs):
    """call_method: stdin, `open` and the stdin readers patched as LiveCodeBench patches them
    (the decorators apply innermost first, so the last three patch the stdin in place before
    the mock replaces it)."""
    lines = iter(inputs.split("\n"))

    @_lcb_patch("builtins.open", _lcb_mock_open(read_data=inputs))
    @_lcb_patch("sys.stdin", _LcbMockStdin(inputs))
    @_lcb_patch("sys.stdin.readline", lambda *args: next(lines))
    @_lcb_patch("sys.stdin.readlines", lambda *args: inputs.split("\n"))
    @_lcb_patch("sys.stdin.read", lambda *args: inputs)
    def inner(_method):
        try:
            return _method()
        except SystemExit:
            pass

    return inner(method)


def _lcb_run(test_input):
    """One test: ["ok", stdout text or return value] or ["error", repr of the exception]."""
    method = _lcb_method  # noqa: F821 - set by the line the host appends
    if _LCB_FUNC is None:
        captured = _lcb_io.StringIO()
        captured.close = lambda x: 1  # Capturing: closing stdout is a no-op
        saved = _lcb_sys.stdout
        _lcb_sys.stdout = captured
        try:
            _lcb_call_stdin(method, test_input)
        except Exception as error:
            return ["error", repr(error)]
        finally:
            _lcb_sys.stdout = saved
        return ["ok", captured.getvalue()]
    try:
        prediction = method(*test_input)
    except Exception as error:
        return ["error", repr(error)]
    if isinstance(prediction, tuple):  # "don't penalize model if it produces tuples"
        prediction = list(prediction)
    return ["ok", prediction]
