"""The "process" program style: a program in another language, built and run as subprocesses
of the sample's forked child. This file runs INSIDE the sandbox (imported by _runner.py):
standard library only, no passbench imports, Python 3.8+.

    worker ── fork ──► child (limits already set, its own session)
                         writes the source (and the spec's other files) to a fresh folder
                         under /tmp
                         each build command, then the run command: subprocesses in their own
                         process group, stdout/stderr kept up to `output_cap` bytes each,
                         killed with their group at their time limit
                         reports {status, exit_code, build_s, run_s, stdout, stderr}

The statuses and their rules are MultiPL-E's (evaluation/src/eval_*.py with its
safe_subprocess.run): a build command that fails is "SyntaxError", a run or build that
outlives its limit is "Timeout", a run that exits 0 is "OK", any other run is "Exception".
With pass_rule "silent" (HumanEval-X's JavaScript) a run is "OK" when it printed nothing on
either stream, whatever its exit code.
A build's limit is read as CPU work, not only as wall time: a build times out once it has run
its limit AND its processes have used at least half of it in CPU time (or after ten times the
limit in any case). On an idle machine that is MultiPL-E's rule (a compiler busy for 15 s has
used 15 s of CPU); on a loaded one a compiler that waited for a core is not timed out for the
waiting, so the verdict does not depend on the machine's load. Runs keep the wall-clock rule
(a program that sleeps past its limit times out, as officially).
Everything the subprocesses start stays inside the sample: the worker kills and reaps it all
after the verdict, as for every sample, and the subprocesses inherit the sample's rlimits.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import tempfile
import time
from typing import Any

_perf = time.perf_counter
_TICKS = os.sysconf("SC_CLK_TCK")
#: a build that is past its limit but has used less CPU than this share of it was waiting for
#: a core, not working: it goes on, up to _BUILD_WALL_CAP times its limit
_BUILD_CPU_SHARE = 0.5
_BUILD_WALL_CAP = 10.0


def session_cpu_s(session: int) -> float:
    """CPU seconds used by the live processes of `session` and the children they reaped."""
    total = 0
    try:
        names = os.listdir("/proc")
    except OSError:  # no /proc to read: the official wall-clock rule alone
        return float("inf")
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue  # gone meanwhile
        # after the command: state ppid pgrp session ... utime stime cutime cstime (3..)
        if int(fields[3]) == session:
            total += sum(int(value) for value in fields[11:15])
    return total / _TICKS


def _expand(argv: list[str], folder: str, filename: str) -> list[str]:
    stem = filename.rsplit(".", 1)[0]
    values = {"{dir}": folder, "{file}": os.path.join(folder, filename), "{stem}": stem}
    out = []
    for arg in argv:
        for key, value in values.items():
            arg = arg.replace(key, value)
        out.append(arg)
    return out


def _write_inside(folder: str, relative: str, text: str) -> None:
    """Write one of the program's files; a path that would leave its folder is refused."""
    target = os.path.realpath(os.path.join(folder, relative))
    if os.path.isabs(relative) or not target.startswith(os.path.realpath(folder) + os.sep):
        raise ValueError(f"file path outside the program's folder: {relative!r}")
    os.makedirs(os.path.dirname(target), exist_ok=True)
    with open(target, "w", encoding="utf-8") as f:
        f.write(text)


def run_command(
    argv: list[str], cwd: str, timeout_s: float, cap: int, *, build: bool = False
) -> dict[str, Any]:
    """Run argv in its own process group; kill the group at `timeout_s` (and once it ended, as
    MultiPL-E does, so nothing it started lingers). Keeps the first `cap` bytes of each stream.
    A `build` past `timeout_s` goes on while it has used less than half of it in CPU time."""
    started = _perf()
    try:
        process = subprocess.Popen(
            argv,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
    except OSError as error:  # the toolchain is missing or not executable here
        message = f"cannot start {argv[0]}: {error}"
        return {"timeout": False, "exit_code": 127, "stdout": "", "stderr": message, "s": 0.0}
    assert process.stdout is not None and process.stderr is not None
    out_fd, err_fd = process.stdout.fileno(), process.stderr.fileno()
    streams = {out_fd: bytearray(), err_fd: bytearray()}
    open_fds = set(streams)
    deadline = started + timeout_s
    timed_out = False
    exit_code = None
    while exit_code is None:
        now = _perf()
        if now >= deadline and (
            not build
            or now >= started + _BUILD_WALL_CAP * timeout_s
            or session_cpu_s(process.pid) >= _BUILD_CPU_SHARE * timeout_s
        ):
            timed_out = True
            break
        wait = max(0.0, min(deadline - now, 0.05)) if now < deadline else 0.05
        ready = select.select(list(open_fds), [], [], wait)[0] if open_fds else []
        if not open_fds:
            time.sleep(wait)
        for fd in ready:
            chunk = os.read(fd, 65536)
            if not chunk:
                open_fds.discard(fd)
            elif len(streams[fd]) < cap:
                streams[fd] += chunk[: cap - len(streams[fd])]
        exit_code = process.poll()
    elapsed = _perf() - started
    # what is left in the pipes now (a process it started may hold them open: no waiting)
    for fd in list(open_fds):
        for _ in range(64):
            if not select.select([fd], [], [], 0)[0]:
                break
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            if len(streams[fd]) < cap:
                streams[fd] += chunk[: cap - len(streams[fd])]
    with contextlib.suppress(OSError):
        os.killpg(process.pid, signal.SIGKILL)
    if exit_code is None:
        process.wait()
    process.stdout.close()
    process.stderr.close()
    return {
        "timeout": timed_out,
        "exit_code": -1 if timed_out else exit_code,
        "stdout": streams[out_fd].decode("utf-8", "ignore"),
        "stderr": streams[err_fd].decode("utf-8", "ignore"),
        "s": elapsed,
    }


def run_process(job: dict[str, Any], outcome: dict[str, Any]) -> None:
    """Build and run one program; its MultiPL-E status and evidence go into `outcome`."""
    spec = job["process"]
    folder = tempfile.mkdtemp()
    os.chdir(folder)
    filename = str(spec["filename"])
    with open(os.path.join(folder, filename), "w", encoding="utf-8") as f:
        f.write(job["source"])
    for relative, text in spec.get("files") or ():
        _write_inside(folder, str(relative), str(text))
    cap = int(spec["output_cap"])
    report: dict[str, Any] = {"build_s": 0.0, "run_s": None}
    outcome["process"] = report
    outcome["phase"] = "build"
    for argv in spec["build"]:
        result = run_command(
            _expand(list(argv), folder, filename),
            folder,
            float(spec["build_timeout_s"]),
            cap,
            build=True,
        )
        report["build_s"] += result["s"]
        if result["timeout"] or result["exit_code"] != 0:
            report.update(
                status="Timeout" if result["timeout"] else "SyntaxError",
                exit_code=result["exit_code"],
                stdout=result["stdout"],
                stderr=result["stderr"],
            )
            return
    outcome["phase"] = "run"
    result = run_command(
        _expand(list(spec["run"]), folder, filename), folder, float(spec["run_timeout_s"]), cap
    )
    silent = spec.get("pass_rule") == "silent"
    if result["timeout"]:
        status = "Timeout"
    elif (not result["stdout"] and not result["stderr"]) if silent else result["exit_code"] == 0:
        status = "OK"
    elif any(marker in result["stderr"] for marker in spec.get("syntax_markers") or ()):
        status = "SyntaxError"
    else:
        status = "Exception"
    report.update(
        status=status,
        exit_code=result["exit_code"],
        run_s=result["s"],
        stdout=result["stdout"],
        stderr=result["stderr"],
    )
    outcome["phase"] = "done"
