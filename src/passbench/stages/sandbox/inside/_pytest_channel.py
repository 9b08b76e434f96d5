"""A pytest plugin that reports every test's outcome to the host on a channel printing cannot reach.

The official SWE-bench harness decides outcomes by parsing the test command's output, so a patch
that prints ``PASSED tests/test_x.py::test_y`` or a second end marker changes the verdict. Here
the host (``host/repository.py``) loads this plugin into the run's pytest and reads the outcomes
it writes to a pipe, never to stdout or stderr.

How it is wired (the host does all of it; nothing here is configured by the repository):

- The file is mounted read-only inside the sandbox under a module name with a random part made
  for each run (``_passbench_channel_<hex>``), its folder is put first on ``PYTHONPATH`` and
  ``-p <that name>`` first in ``PYTEST_ADDOPTS``. pytest imports ``-p`` plugins before it reads
  any ``conftest.py``, before setuptools entry points and before collecting, so this module is
  loaded before any code of the repository that pytest itself loads. A patch cannot shadow it with
  a module of the same name (``python -m pytest`` puts the working copy first on ``sys.path``): it
  cannot know the name when it is written.
- ``PASSBENCH_PYTEST_CHANNEL=<write fd>,<nonce fd>`` names two inherited descriptors: the write
  end of the channel pipe, and the read end of a pipe holding this run's random nonce, which the
  host wrote and closed before the sandbox started. On import the plugin reads the nonce (the
  first reader takes it, later ones find the pipe empty), closes that descriptor, makes its copy
  of the channel descriptor non-inheritable, and removes its variable, its ``-p`` option and its
  folder from ``os.environ``: processes the tests start (``pytester``'s subprocess runs, xdist
  workers) neither load it nor inherit the channel. Without the variable (such a process, a
  nested in-process session) it does nothing.
- Every line is ``<nonce> <json>\\n``, JSON with ASCII only: ``{"event": "start", "pytest": ...,
  "python": ...}`` when the session is configured; ``{"event": "report", "nodeid", "when",
  "outcome", "made", "xfail"}`` for each test phase pytest logs; ``{"event": "collect", "nodeid",
  "outcome"}`` for a collector that failed or was skipped (an import error in a test module);
  ``{"event": "finish", "exitstatus"}`` when the session ends. A test that never reports is simply
  absent, which the grader treats as not passed. When the nonce pipe was empty (someone read it
  first) the lines carry ``-`` instead, which the host counts as foreign: the channel is then
  marked tampered, never trusted. So one pytest process per run reports: a second one started
  by the same command finds the nonce taken (SWE-bench's test commands run pytest once).
- ``made`` is the outcome when the report left pytest's own ``pytest_runtest_makereport``
  implementations: this plugin wraps that hook innermost (a ``trylast`` wrapper registered at
  configure time, after the conftests pytest loads first). ``outcome`` is what the session
  finally logged. A report that was made failed or skipped and logged as passed was rewritten by a
  hook wrapper (the public exploit of SWE-bench issue #631, a ``conftest.py`` that sets every
  report to passed); the host flags it. pytest's own xfail handling changes outcomes too, but
  only from failed to skipped or from passed to failed, never to passed.

What it cannot prevent, and why that is acceptable:

- Code that runs inside the pytest process (the repository's modules, its conftests, the tests)
  can do anything this plugin can: find the descriptor and the nonce in memory
  (``sys.modules``, ``gc``) and write forged lines, replace this plugin's methods, register its
  own hook implementation that returns a fabricated report before pytest makes one, swallow
  exceptions in ``pytest_runtest_call``, or end the process. Processes that run before pytest in
  the same command (an install step that runs a patched ``setup.py``) inherit the descriptors
  too: one can read the nonce, and because a pipe can be reopened for writing through
  ``/proc/self/fd``, even put it back. No in-process plugin can stop code in its own process;
  only running the tests in a process apart from the code under test could, and that would
  change what the tests observe. All of these need attack code written against passbench
  specifically (its variable, its line format), which is visible in the patch. What else guards
  the verdict: the sandbox (no network, nothing outside the working copy writable, nothing left
  running), the host restoring test machinery (conftest files, pytest configuration, plugins,
  ``sitecustomize``/``.pth`` files, the repository's own runner: ``host/machinery.py``) to their
  pre-patch state before the run and flagging patches that touch it, and the counting of
  verdicts that differ from what the official log parser alone would say.
- Text a patch prints still reaches the output, and the official log parsers still read it; only
  the channel is immune to it.

Runs under the repository's own Python and pytest, which may be old: Python 3.6 syntax, pytest
3.x hook signatures (old-style hook wrappers, ``pytest_sessionfinish(session, exitstatus)``), the
standard library and pytest only, type comments instead of annotations.
"""

import contextlib
import json
import os
import sys

import pytest

if False:  # for type comments only; never imported at run time
    from collections.abc import Generator  # noqa: F401
    from typing import Any, Optional  # noqa: F401

_VARIABLE = "PASSBENCH_PYTEST_CHANNEL"
_NONCE_BYTES = 64  # read at most this much of the nonce pipe (the nonce is 32 hex digits)
_MADE_KEPT = 10000  # reports made but not (yet) logged, kept for their "made" outcome


def _forget_self():
    # type: () -> None
    """Remove this plugin from what the tests' own processes inherit."""
    name = __name__.rpartition(".")[2]
    folder = os.path.dirname(os.path.abspath(__file__))
    options = os.environ.get("PYTEST_ADDOPTS")
    if options is not None:
        kept = options.replace("-p " + name, "", 1).strip()
        if kept:
            os.environ["PYTEST_ADDOPTS"] = kept
        else:
            del os.environ["PYTEST_ADDOPTS"]
    path = os.environ.get("PYTHONPATH")
    if path is not None:
        entries = [entry for entry in path.split(os.pathsep) if entry != folder]
        if entries:
            os.environ["PYTHONPATH"] = os.pathsep.join(entries)
        else:
            del os.environ["PYTHONPATH"]


def _read_nonce(fd):
    # type: (int) -> bytes
    try:
        # never wait: the host wrote it before the run and closed its end; a pipe that is
        # empty now was emptied by someone else (who may hold it open to make this read hang)
        os.set_blocking(fd, False)
        data = os.read(fd, _NONCE_BYTES)
    except OSError:
        data = b""
    with contextlib.suppress(OSError):
        os.close(fd)
    nonce = data.strip()
    # an empty pipe (the nonce was taken) or something that is not a nonce: say so on every line
    if not nonce or not all(c in b"0123456789abcdef" for c in bytearray(nonce)):
        return b"-"
    return nonce


def _take_settings():
    # type: () -> Optional[tuple[int, bytes]]
    """The channel descriptor and the nonce, or None where no channel was set up."""
    value = os.environ.pop(_VARIABLE, None)
    _forget_self()
    if not value:
        return None
    try:
        write_fd, nonce_fd = [int(part) for part in value.split(",")]
        nonce = _read_nonce(nonce_fd)
        os.set_inheritable(write_fd, False)
    except (ValueError, OSError):
        return None
    return write_fd, nonce


class _Channel:
    """The hook implementations, registered once on the session's own plugin manager."""

    def __init__(self, fd, nonce):
        # type: (int, bytes) -> None
        self._fd = fd  # type: Optional[int]
        self._prefix = nonce + b" "
        self._made = {}  # type: dict[int, tuple[Any, str]]
        self._write(
            {
                "event": "start",
                "pytest": str(getattr(pytest, "__version__", "")),
                "python": "{}.{}.{}".format(*sys.version_info[:3]),
            }
        )

    def _write(self, record):
        # type: (dict[str, Any]) -> None
        if self._fd is None:
            return
        data = self._prefix + json.dumps(record, sort_keys=True).encode("ascii") + b"\n"
        view = memoryview(data)
        try:
            while view:
                view = view[os.write(self._fd, view) :]
        except OSError:  # the host went away: nothing left to report to
            self._fd = None

    @pytest.hookimpl(hookwrapper=True, trylast=True)
    def pytest_runtest_makereport(self, item, call):
        # type: (Any, Any) -> Generator[None, Any, None]
        outcome = yield
        try:
            report = outcome.get_result()
            if len(self._made) >= _MADE_KEPT:
                self._made.clear()
            self._made[id(report)] = (report, str(report.outcome))
        except BaseException:  # a failing hook: pytest reports it itself
            pass

    def pytest_runtest_logreport(self, report):
        # type: (Any) -> None
        kept = self._made.pop(id(report), None)
        made = kept[1] if kept is not None and kept[0] is report else None
        self._write(
            {
                "event": "report",
                "nodeid": str(report.nodeid),
                "when": str(report.when),
                "outcome": str(report.outcome),
                "made": made,
                "xfail": hasattr(report, "wasxfail"),
            }
        )

    def pytest_collectreport(self, report):
        # type: (Any) -> None
        if report.outcome != "passed":
            self._write(
                {"event": "collect", "nodeid": str(report.nodeid), "outcome": str(report.outcome)}
            )

    def pytest_sessionfinish(self, session, exitstatus):
        # type: (Any, Any) -> None
        self._write({"event": "finish", "exitstatus": int(exitstatus)})


_SETTINGS = _take_settings()
_REGISTERED = []  # type: list[bool]


def pytest_configure(config):
    # type: (Any) -> None
    if _SETTINGS is None or _REGISTERED:
        return  # no channel here, or a nested session of the one already reporting
    _REGISTERED.append(True)
    fd, nonce = _SETTINGS
    config.pluginmanager.register(_Channel(fd, nonce), "passbench-channel")
