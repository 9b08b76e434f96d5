"""The naive way to test an Aider polyglot exercise, for perf/polyglot_speed.py's baseline: the
commands passbench's test script runs (aider_polyglot/toolchains.py), each as one fresh process
per exercise per step, with nothing warm and nothing shared: no warm sandbox worker, an empty Go
build cache, Catch2's main compiled by every C++ exercise, a Jest cache and a Cargo target
folder of the exercise's own.

Each step runs either in a fresh bubblewrap sandbox of its own (`bwrap`: the read-only system
view passbench's sandbox shows, no network, the exercise's folder as /tmp, passbench's default
rlimits, and run by root the sandbox user is host `nobody` as in passbench's sandbox) or as a
plain process (`none`); no cgroup and no /tmp quota (passbench's other limits). The verdict:
pass when every step exits 0 within Aider's 180 s.
"""

from __future__ import annotations

import os
import resource
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from passbench.core.records import Task
from passbench.stages.benchmarks.aider_polyglot.benchmark import exercise_files
from passbench.stages.benchmarks.aider_polyglot.toolchains import (
    ASSERTJ,
    CARGO_REGISTRY,
    JS_MODULES,
    JUNIT_CONSOLE,
    TEST_TIMEOUT_S,
)
from passbench.stages.sandbox.base import Limits
from passbench.stages.sandbox.host.launch import (
    SANDBOX_HOST_UID,
    SANDBOX_UID,
    system_view,
    user_namespace_fd,
    write_identity_files,
)

SANDBOXES = ("bwrap", "none")
_CLASSPATH = f"{JUNIT_CONSOLE}:{ASSERTJ}"
_CARGO_CONFIG = f"""[source.crates-io]
replace-with = "debian"
[source.debian]
directory = "{CARGO_REGISTRY}"
[net]
offline = true
"""


@dataclass(frozen=True)
class Step:
    """One command of an exercise's test, run by `sh -c` in `folder` (relative to the
    exercise); `kind` is "build" or "test"."""

    kind: str
    command: str
    folder: str = "."


@dataclass(frozen=True)
class StepTime:
    kind: str
    command: str
    seconds: float
    exit_code: int | None  # None: timed out
    output_tail: str


@dataclass(frozen=True)
class NaiveResult:
    task_id: str
    language: str
    steps: tuple[StepTime, ...]

    @property
    def passed(self) -> bool:
        return bool(self.steps) and all(step.exit_code == 0 for step in self.steps)

    def seconds(self, kind: str | None = None) -> float:
        return sum(s.seconds for s in self.steps if kind is None or s.kind == kind)


def steps(language: str, exercise: str) -> tuple[Step, ...]:
    """The commands of the exercise's test, as toolchains.py's script runs them (a drift test
    checks each is in the script), split into build and test where the language has both. C++
    runs `make <exercise>` (build) before `make` (the tests, which the CMakeLists runs as part
    of the build), so that its build and test times show apart."""
    if language == "python":
        return (Step("test", "/usr/bin/python3 -m pytest"),)
    if language == "go":
        return (Step("test", "go test ./..."),)
    if language == "rust":
        return (Step("test", "cargo test --offline -- --include-ignored"),)
    if language == "javascript":
        return (Step("test", "node node_modules/jest/bin/jest.js ./*"),)
    if language == "cpp":
        return (
            Step("build", 'cmake -DEXERCISM_RUN_ALL_TESTS=1 -G "Unix Makefiles" ..', "build"),
            Step("build", f"make {exercise}", "build"),
            Step("test", "make", "build"),
        )
    if language == "java":
        return (
            Step(
                "build",
                "javac -J-Xmx1g -encoding UTF-8 -d build/classes -cp "
                f"{_CLASSPATH} $(find src -name '*.java')",
            ),
            Step(
                "test",
                f"java -Xmx1g -XX:+UseSerialGC -XX:-UsePerfData -jar {JUNIT_CONSOLE} -cp "
                f"build/classes:{_CLASSPATH} --scan-class-path --disable-banner "
                "--disable-ansi-colors --details=tree --fail-if-no-tests",
            ),
        )
    raise ValueError(f"unknown language {language!r}")


def _prepare(language: str, folder: Path) -> None:
    """What the script does before its commands (not timed: file writes and a link)."""
    if language == "rust":
        (folder / ".cargo-home").mkdir()
        (folder / ".cargo-home" / "config.toml").write_text(_CARGO_CONFIG)
    elif language == "javascript":
        (folder / "node_modules").symlink_to(JS_MODULES)
    elif language == "cpp":
        (folder / "build").mkdir()
    elif language == "java":
        (folder / "build" / "classes").mkdir(parents=True)


def _environment(language: str, root: str, exercise: str) -> dict[str, str]:
    """The environment of every step: fresh, nothing from the host, every cache in `root`
    (the folder that holds the exercise, as the step sees it)."""
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": f"{root}/.home",
        "TMPDIR": f"{root}/.tmp",  # Jest's cache goes there: empty for each exercise
        "LANG": "C.UTF-8",
        "TZ": "UTC",
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    here = f"{root}/{exercise}"
    if language == "go":  # an empty build cache: the standard packages vetted anew
        env.update(
            GOCACHE=f"{root}/.gocache",
            GOPATH=f"{root}/.gopath",
            GOPROXY="off",
            GOTOOLCHAIN="local",
            GOFLAGS="-mod=mod",
            GOENV="off",
            GO111MODULE="on",
        )
    elif language == "rust":
        env.update(CARGO_HOME=f"{here}/.cargo-home", HOME=f"{here}/.cargo-home")
    return env


def _limit(limits: Limits) -> None:
    """passbench's default per-sample rlimits (in the child, before exec)."""
    memory = limits.memory_mb * 1024 * 1024
    for kind, value in (
        (resource.RLIMIT_AS, memory),
        (resource.RLIMIT_DATA, memory),
        (resource.RLIMIT_STACK, limits.stack_mb * 1024 * 1024),
        (resource.RLIMIT_FSIZE, limits.file_size_mb * 1024 * 1024),
        (resource.RLIMIT_NOFILE, limits.open_files),
        (resource.RLIMIT_NPROC, limits.processes),
    ):
        resource.setrlimit(kind, (value, value))
    os.setsid()


def _argv(
    sandbox: str, command: str, root: Path, cwd: str, identity: Path, userns: int | None
) -> list[str]:
    if sandbox == "none":
        return ["sh", "-c", "exec 2>&1\n" + command]
    bwrap = shutil.which("bwrap") or "bwrap"
    # as passbench's sandbox: run by root, the sample is host `nobody` in a namespace made
    # beforehand (so RLIMIT_NPROC holds); otherwise uid 1000 in bubblewrap's own namespace
    uid = str(SANDBOX_UID)
    user = ["--userns", str(userns)] if userns is not None else ["--unshare-user"]
    if userns is None:
        user += ["--uid", uid, "--gid", uid]
    # in root's namespace the step starts as namespace root and gives it up, as passbench's
    # runner does
    drop = ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups"]
    return [
        bwrap,
        *user,
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-net",
        "--unshare-cgroup-try",
        "--die-with-parent",
        "--new-session",
        *system_view(identity),
        "--tmpfs",
        "/run",
        "--bind",
        str(root),
        "/tmp",
        "--chdir",
        cwd,
        "--",
        *(drop if userns is not None else []),
        "sh",
        "-c",
        "exec 2>&1\n" + command,
    ]


def _run_step(
    argv: list[str], env: Mapping[str, str], cwd: Path, timeout_s: float, fds: tuple[int, ...]
) -> tuple[float, int | None, str]:
    """(seconds, exit code or None on a timeout, the output's end)."""
    limits = Limits()
    started = time.perf_counter()
    process = subprocess.Popen(
        argv,
        cwd=cwd,
        env=dict(env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        pass_fds=fds,
        preexec_fn=lambda: _limit(limits),
    )
    for fd in fds:
        os.close(fd)
    try:
        output, _ = process.communicate(timeout=timeout_s)
        code: int | None = process.returncode
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        output, _ = process.communicate()
        code = None
    seconds = time.perf_counter() - started
    return seconds, code, output.decode("utf-8", "replace")[-2000:]


def run_exercise(
    task: Task, code: str, sandbox: str = "bwrap", timeout_s: float = TEST_TIMEOUT_S
) -> NaiveResult:
    """Test `code` (a solution as aider-polyglot takes it) on the task's exercise the naive
    way, in a temporary folder removed afterwards."""
    if sandbox not in SANDBOXES:
        raise ValueError(f"sandbox must be one of {SANDBOXES}")
    language = str(task.metadata["language"])
    exercise = str(task.metadata["exercise"])
    times: list[StepTime] = []
    with tempfile.TemporaryDirectory(prefix="naive-polyglot-") as scratch:
        root = Path(scratch) / "root"
        folder = root / exercise
        for path, text in exercise_files(task, code).items():
            target = folder / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
        for cache in (".home", ".tmp"):
            (root / cache).mkdir()
        _prepare(language, folder)
        identity = Path(scratch) / "identity"
        identity.mkdir()
        write_identity_files(identity)
        as_nobody = sandbox == "bwrap" and os.geteuid() == 0
        if as_nobody:  # the sandbox user, host `nobody`, owns the exercise's folder
            os.chmod(scratch, 0o755)
            for path in (root, *root.rglob("*")):
                os.lchown(path, SANDBOX_HOST_UID, SANDBOX_HOST_UID)
        inside = "/tmp" if sandbox == "bwrap" else str(root)
        env = _environment(language, inside, exercise)
        for step in steps(language, exercise):
            cwd = f"{inside}/{exercise}" + ("" if step.folder == "." else f"/{step.folder}")
            userns = user_namespace_fd() if as_nobody else None
            argv = _argv(sandbox, step.command, root, cwd, identity, userns)
            fds = (userns,) if userns is not None else ()
            seconds, code, tail = _run_step(argv, env, folder / step.folder, timeout_s, fds)
            times.append(StepTime(step.kind, step.command, seconds, code, tail))
            if code != 0:
                break
    return NaiveResult(task.task_id, language, tuple(times))
