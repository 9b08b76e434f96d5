"""How a warm worker process is started: inside bubblewrap, or (fallback) as a plain process.

A launcher turns "start the runner with these two pipe ends" into a command line, an
environment and the file descriptors to pass. Everything that decides what a sample can see or
touch on the host is here, so it can be read in one place (docs/sandbox.md explains the why).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from passbench.core.errors import SandboxError
from passbench.core.records import Isolation
from passbench.stages.sandbox.base import SandboxConfig
from passbench.stages.sandbox.host.workdirs import ScratchFolders

# the runner and its modules live in inside/, the folder shipped into the sandbox
RUNNER = Path(__file__).parents[1] / "inside" / "_runner.py"
_INSIDE = "/run/passbench"
_RUNNER_INSIDE = f"{_INSIDE}/_runner.py"
#: The modules the runner imports, shipped beside it (standard library only, like the runner).
_MODULE_NAMES = (
    "_frames.py",
    "_guards.py",
    "_io_style.py",
    "_values.py",
    "_scratch.py",
    "_process_style.py",
)
RUNNER_MODULES = tuple(RUNNER.with_name(name) for name in _MODULE_NAMES)
SANDBOX_UID = 1000  # the unprivileged user samples run as inside the namespace
SANDBOX_HOST_UID = 65534  # who that user is on the host when passbench runs as root
# A second user, only in runs with loopback services (host/repository.py): the service runs as
# it, so that the tests (SANDBOX_UID) can neither signal nor trace it. On the host it is a user
# id nothing owns (65534 is nobody, 65533 is left free by Debian's and Fedora's allocations).
SERVICE_UID = 1001
SERVICE_HOST_UID = 65533
SHM_MB = 64  # size of the sample-writable /dev/shm

# System directories every interpreter needs; visible read-only, everything else is not.
SYSTEM_DIRS = ("/usr", "/etc", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/sys")
# Folders the sandbox replaces with its own (the sample's scratch folder, fresh /dev, /proc,
# /run): a host folder below one of them cannot be shown to samples at its own path.
REPLACED_DIRS = ("/tmp", "/var/tmp", "/dev", "/proc", "/run")

_USERNS_HELPER = (
    "import ctypes, os, sys\n"
    "if ctypes.CDLL(None, use_errno=True).unshare(0x10000000) != 0:\n"
    "    sys.exit(ctypes.get_errno() or 1)\n"
    "os.write(1, b'u')\n"
    "os.read(0, 1)\n"
)


@dataclass
class Launch:
    """One way to start one worker."""

    argv: list[str]
    env: dict[str, str]
    pass_fds: tuple[int, ...] = ()
    cwd: str | None = None
    scratch: tuple[str, ...] = ()  # directories the worker empties after every sample
    # the disk-backed ones among them, held to Limits.tmp_mb by the worker's measurements
    measured: tuple[str, ...] = ()
    namespaced: bool = False  # the worker is pid 1 of its own pid namespace
    _close_after_start: list[int] = field(default_factory=list)

    def started(self) -> None:
        """Close the host's copies of descriptors only the new process needed."""
        for fd in self._close_after_start:
            with contextlib.suppress(OSError):
                os.close(fd)
        self._close_after_start.clear()


class Launcher(Protocol):
    isolation: Isolation

    def launch(self, cmd_fd: int, msg_fd: int, slot: int) -> Launch: ...


def sample_environment(config: SandboxConfig, home: str, python: Path) -> dict[str, str]:
    """The whole environment a worker (and so every sample) sees: nothing from the host."""
    env = {
        "PATH": f"{python.parent}:/usr/local/bin:/usr/bin:/bin",
        "HOME": home,
        "TMPDIR": home,
        "USER": "sandbox",
        "LOGNAME": "sandbox",
        "LANG": "C.UTF-8",
        "TZ": "UTC",
        "MPLBACKEND": "Agg",
        "MPLCONFIGDIR": f"{home}/.config/matplotlib",
        "XDG_CONFIG_HOME": f"{home}/.config",
        "XDG_CACHE_HOME": f"{home}/.cache",
        # one thread per BLAS/OpenMP pool: several samples share the cores
        "OMP_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "TF_CPP_MIN_LOG_LEVEL": "3",
        "TF_ENABLE_ONEDNN_OPTS": "0",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONUNBUFFERED": "1",
    }
    env.update(dict(config.env))
    return env


@dataclass(frozen=True)
class Interpreter:
    """The evaluation interpreter as it reports itself."""

    executable: Path  # sys.executable: the real interpreter even when `python` is a wrapper
    paths: tuple[str, ...]  # host folders it needs: prefixes, extra sys.path entries


def inspect_interpreter(python: Path) -> Interpreter:
    script = (
        "import json, os, sys\n"
        "paths = [sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,\n"
        "         os.path.dirname(os.path.realpath(sys.executable))]\n"
        "paths += [p for p in sys.path if p and os.path.isdir(p)]\n"
        "print(json.dumps([sys.executable, [os.path.realpath(p) for p in paths]]))\n"
    )
    try:
        done = subprocess.run(
            [str(python), "-s", "-c", script],
            capture_output=True,
            text=True,
            timeout=60,
            env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"},
            cwd="/",
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise SandboxError(f"cannot run the evaluation interpreter {python}: {error}") from error
    if done.returncode != 0:
        raise SandboxError(
            f"the evaluation interpreter {python} failed to start: {done.stderr.strip()[-500:]}"
        )
    executable, reported = json.loads(done.stdout)
    paths = [os.path.dirname(executable), *reported]
    needed = outermost(p for p in paths if not under_any(p, SYSTEM_DIRS))
    return Interpreter(Path(executable), tuple(needed))


def under_any(path: str, roots: tuple[str, ...] | list[str]) -> bool:
    return any(path == root or path.startswith(root.rstrip("/") + "/") for root in roots)


def outermost(paths: object) -> list[str]:
    kept: list[str] = []
    for path in sorted(set(paths), key=len):  # type: ignore[call-overload]
        if not under_any(path, kept):
            kept.append(path)
    return kept


def refuse_hidden(paths: Sequence[str], what: str) -> None:
    """SandboxError when a folder samples need lies where the sandbox shows its own folder
    instead: there it would silently vanish (an interpreter that cannot start, NLTK data
    that is not found)."""
    for path in paths:
        for replaced in REPLACED_DIRS:
            if under_any(path, [replaced]):
                raise SandboxError(
                    f"{what} {path} is under {replaced}, which the sandbox replaces with its "
                    f"own, so samples could not see it; move it (or the virtual environment "
                    f"or clone it belongs to) out of {replaced}"
                )


def ro_bind(path: str) -> list[str]:
    """Arguments that show host `path` read-only at the same place.

    Parent folders bubblewrap creates itself are 0700 and owned by the namespace's root, which
    the sandbox user could not enter; create them 0755 first."""
    args: list[str] = []
    parent = Path(path).parent
    for ancestor in reversed([parent, *parent.parents]):
        if str(ancestor) != "/" and not under_any(str(ancestor), SYSTEM_DIRS):
            args += ["--perms", "0755", "--dir", str(ancestor)]
    return [*args, "--ro-bind", path, path]


def write_identity_files(folder: Path) -> None:
    """`passwd` and `group` files for the sandbox's /etc: getpass/pwd work for the sandbox user,
    host accounts stay hidden."""
    (folder / "passwd").write_text(
        "root:x:0:0:root:/root:/usr/sbin/nologin\n"
        f"sandbox:x:{SANDBOX_UID}:{SANDBOX_UID}:sandbox:/tmp:/bin/sh\n"
        "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"
    )
    (folder / "group").write_text(f"root:x:0:\nsandbox:x:{SANDBOX_UID}:\nnogroup:x:65534:\n")


def system_view(identity_dir: Path) -> list[str]:
    """bubblewrap arguments for what every sandbox sees of the system: the system folders
    read-only, the identity files of `write_identity_files(identity_dir)` as /etc/passwd and
    /etc/group, a fresh /proc and /dev."""
    args: list[str] = []
    for top in SYSTEM_DIRS:
        if os.path.islink(top):
            args += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            args += ["--ro-bind", top, top]
    for name in ("passwd", "group"):
        if os.path.isfile(f"/etc/{name}") and not os.path.islink(f"/etc/{name}"):
            args += ["--ro-bind", str(identity_dir / name), f"/etc/{name}"]
    return [*args, "--proc", "/proc", "--dev", "/dev"]


def user_namespace_fd(*, service_user: bool = False) -> int:
    """For root: a user namespace in which the sandbox user is `nobody` on the host (an
    O_CLOEXEC descriptor of it, for bubblewrap's `--userns`; pass it and close it after).

    bubblewrap run by root maps the sandbox user to host root, which can read every
    root-owned file that is visible (/etc/shadow...) and ignores RLIMIT_NPROC. So root makes
    the namespace itself: namespace root stays host root (bubblewrap needs it to set up the
    mounts, and what runs first inside gives it up at once), uid 1000 is host nobody.
    `service_user` maps SERVICE_UID too (to SERVICE_HOST_UID)."""
    helper = subprocess.Popen(
        [sys.executable, "-I", "-S", "-c", _USERNS_HELPER],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert helper.stdin is not None and helper.stdout is not None
    try:
        if helper.stdout.read(1) != b"u":
            raise SandboxError("cannot create a user namespace for the sandbox")
        mapping = f"0 0 1\n{SANDBOX_UID} {SANDBOX_HOST_UID} 1\n"
        if service_user:
            mapping += f"{SERVICE_UID} {SERVICE_HOST_UID} 1\n"
        Path(f"/proc/{helper.pid}/uid_map").write_text(mapping)
        Path(f"/proc/{helper.pid}/gid_map").write_text(mapping)
        return os.open(f"/proc/{helper.pid}/ns/user", os.O_RDONLY | os.O_CLOEXEC)
    except OSError as error:
        raise SandboxError(f"cannot set up the sandbox's user namespace: {error}") from error
    finally:
        with contextlib.suppress(OSError):
            helper.stdin.close()
        helper.wait()


class BubblewrapLauncher:
    """Workers inside bubblewrap: own user, pid, ipc, uts (and network) namespaces, a read-only
    view of the system and the interpreter only, the worker's own disk-backed scratch folder as
    /tmp, no host secrets."""

    isolation = Isolation.BUBBLEWRAP

    def __init__(
        self,
        config: SandboxConfig,
        private_dir: Path,
        scratch: ScratchFolders,
        bwrap: str = "bwrap",
    ) -> None:
        self.config = config
        self.private_dir = private_dir
        self.scratch = scratch
        self.bwrap = shutil.which(bwrap) or bwrap
        self.as_root = os.geteuid() == 0
        interpreter = inspect_interpreter(Path(os.path.abspath(config.python)))
        self.python = interpreter.executable
        self.paths = interpreter.paths
        refuse_hidden(interpreter.paths, "the evaluation interpreter's folder")
        refuse_hidden(
            [str(Path(p).resolve()) for p in config.read_only_paths], "the read-only folder"
        )
        write_identity_files(self.private_dir)

    def arguments(self) -> list[str]:
        """The bubblewrap options shared by every worker (without the user namespace part)."""
        limits = self.config.limits
        args = [
            "--unshare-pid",
            "--unshare-ipc",
            "--unshare-uts",
            "--unshare-cgroup-try",
            "--die-with-parent",
            "--new-session",
            "--as-pid-1",
            "--hostname",
            "sandbox",
        ]
        if not limits.allow_network:
            args.append("--unshare-net")
        args += system_view(self.private_dir)
        args += ["--perms", "1777", "--size", str(SHM_MB * 1024 * 1024), "--tmpfs", "/dev/shm"]
        args += ["--tmpfs", "/run", "--ro-bind", str(RUNNER), _RUNNER_INSIDE]
        for module in RUNNER_MODULES:
            args += ["--ro-bind", str(module), f"{_INSIDE}/{module.name}"]
        extra = [str(Path(p).resolve()) for p in self.config.read_only_paths]
        for path in outermost(p for p in [*self.paths, *extra] if not under_any(p, SYSTEM_DIRS)):
            args += ro_bind(path)
        return args

    def _tmp(self, slot: int) -> list[str]:
        """The worker's scratch folder on disk as /tmp (and /var/tmp), read-write; its size is
        held to Limits.tmp_mb by the worker, which measures it (a bind mount has no size)."""
        folder = self.scratch.for_worker(
            slot, mode=0o1777, owner=SANDBOX_HOST_UID if self.as_root else None
        )
        return [
            "--bind",
            str(folder),
            "/tmp",
            "--dir",
            "/var",
            "--symlink",
            "/tmp",
            "/var/tmp",
            "--chdir",
            "/tmp",
        ]

    def launch(self, cmd_fd: int, msg_fd: int, slot: int) -> Launch:
        command = [str(self.python), "-s", _RUNNER_INSIDE, str(cmd_fd), str(msg_fd)]
        env = sample_environment(self.config, "/tmp", self.python)
        if self.as_root:
            userns = user_namespace_fd()
            argv = [
                self.bwrap,
                "--userns",
                str(userns),
                *self.arguments(),
                *self._tmp(slot),
                "--",
                *command,
            ]
            return Launch(
                argv=argv,
                env=env,
                pass_fds=(cmd_fd, msg_fd, userns),
                scratch=("/tmp", "/dev/shm"),
                measured=("/tmp",),
                namespaced=True,
                _close_after_start=[userns],
            )
        argv = [
            self.bwrap,
            "--unshare-user",
            "--uid",
            str(SANDBOX_UID),
            "--gid",
            str(SANDBOX_UID),
            "--cap-drop",
            "ALL",
            *self.arguments(),
            *self._tmp(slot),
            "--",
            *command,
        ]
        return Launch(
            argv=argv,
            env=env,
            pass_fds=(cmd_fd, msg_fd),
            scratch=("/tmp", "/dev/shm"),
            measured=("/tmp",),
            namespaced=True,
        )

    def probe(self) -> str | None:
        """Start the real sandbox once with `python -c pass`; the error text, or None if fine."""
        r, w = os.pipe()
        try:
            launch = self.launch(r, w, slot=-1)
        except SandboxError as error:
            os.close(r)
            os.close(w)
            return str(error)
        bwrap_part = launch.argv[: launch.argv.index("--") + 1]
        argv = [*bwrap_part, str(self.python), "-s", "-c", "pass"]
        try:
            done = subprocess.run(
                argv,
                env=launch.env,
                pass_fds=launch.pass_fds,
                capture_output=True,
                text=True,
                timeout=60,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as error:
            return str(error)
        finally:
            launch.started()
            os.close(r)
            os.close(w)
        if done.returncode != 0:
            return (done.stderr or f"exit code {done.returncode}").strip()[-500:]
        return None


class RlimitLauncher:
    """Fallback: the worker is a plain process with resource limits, its own session and a
    private disk-backed scratch folder as HOME, TMPDIR and working directory. The sample can
    read and change whatever the host user can (the cache, journals, results included)."""

    isolation = Isolation.RLIMIT

    def __init__(self, config: SandboxConfig, private_dir: Path, scratch: ScratchFolders) -> None:
        self.config = config
        self.private_dir = private_dir
        self.scratch = scratch
        self.python = inspect_interpreter(Path(os.path.abspath(config.python))).executable

    def launch(self, cmd_fd: int, msg_fd: int, slot: int) -> Launch:
        home = self.scratch.for_worker(slot, mode=0o700)
        return Launch(
            argv=[str(self.python), "-s", str(RUNNER), str(cmd_fd), str(msg_fd)],
            env=sample_environment(self.config, str(home), self.python),
            pass_fds=(cmd_fd, msg_fd),
            cwd=str(home),
            scratch=(str(home),),
            measured=(str(home),),
            namespaced=False,
        )
