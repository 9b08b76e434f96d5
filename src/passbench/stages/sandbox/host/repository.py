"""One run of a repository's test command in bubblewrap, for SWE-bench and the like.

The warm-worker sandbox (``launch.py``, ``worker.py``) runs many small Python programs; a
repository-level benchmark runs one shell command in one working copy and reads its output.
``run_repository`` does that once, with the same isolation pieces (docs/sandbox.md):

- bubblewrap with new user, pid, ipc, uts and (unless ``network``) network namespaces; the
  system folders read-only, the sandbox's own ``passwd``/``group``, a fresh ``/proc``, ``/dev``
  and 64 MiB ``/dev/shm``; the working copy read-write at ``/testbed`` (the official images'
  path, and the command's working directory); ``read_only`` host folders (a virtual environment
  and the interpreter it points to) at their own paths; ``writable`` ones (an install prefix)
  read-write at their own paths; ``files`` read-only in ``/run/passbench/files``; a fresh folder
  on disk as ``/tmp`` (and ``/var/tmp``, ``HOME``).
  Nothing else: not the host's home, ``/work``, passbench, other working copies.
- The command runs as uid 1000 without capabilities. As root, the sandbox user is host
  ``nobody`` (``launch.user_namespace_fd``), bubblewrap keeps namespace root for its setup and
  ``setpriv`` drops it before anything of the repository runs; the working copy and the writable
  folders are handed to ``nobody`` for the run, and left so. Without root, bubblewrap maps uid
  1000 to the calling user, who must own them. A hard-linked file in them is refused: the run
  could change the file it shares its data with (a local ``git clone`` links the mirror's).
- After the run the working copy is untrusted: the tests may have planted git hooks,
  ``core.fsmonitor`` or filter commands in ``.git/config``, or symbolic links to host files.
  Never run git (or anything else) in it on the host, nor follow its links; read what you need
  and delete it. Owned by ``nobody``, host git run by root refuses it anyway ("dubious
  ownership"); run by another user, nothing stops it, so this rule is the caller's.
- Limits: the wall clock (``timeout_s``, the official per-instance 1,800 s by default); a cgroup
  (``cgroups.py``) caps memory (no swap) and processes of the whole run where the host gives
  one; ``prlimit`` sets RLIMIT_NPROC (and, without a cgroup, RLIMIT_DATA per process: not
  RLIMIT_AS, which counts address space that numerical libraries and thread arenas reserve but
  never use) and no core files. The disk is not capped: the working copy and ``/tmp`` take what
  the tests write, as in the official containers.
- Nothing is left running: bubblewrap's own init is pid 1 of the run's pid namespace and exits
  when the command does, and the kernel then kills every process in the namespace, however it
  detached (background jobs, ``setsid``, double forks). At the deadline passbench kills
  bubblewrap (``--die-with-parent`` takes pid 1 with it) and every process in the cgroup.
- Output: stdout and stderr share one pipe, so they interleave as in the official
  ``test_output.txt``, decoded as UTF-8 with replacement characters as the official harness does.
  Past ``output_cap`` bytes the middle goes: the first and last halves are kept, cut at line
  ends, with one line saying how much was left out. The end holds pytest's summary and the
  beginning the setup's trace; a test's status line in the middle of a huge log is lost, which
  the channel (next) does not depend on.
- The channel: unless ``channel=False``, the run's pytest loads ``inside/_pytest_channel.py``
  (its docstring says how, and what it cannot prevent), which writes one record per test report
  to a pipe only this function reads. ``RepositoryResult.channel`` holds them: verdicts that
  printing fake ``PASSED`` lines or end markers cannot change. Tests absent from it did not
  report, and count as not passed.

- The network stand-ins (root only: they need a second user and namespace root for a moment).
  ``services`` are started before the command on 127.0.0.1 of the run's own network namespace,
  each as SERVICE_UID without capabilities, from read-only host folders, with an empty
  environment and ``/`` as its working directory: the tests (SANDBOX_UID) cannot signal,
  trace or replace it, nor put code on its path; the command starts once each port accepts
  connections (or says that it did not). ``tarpit`` adds a veth pair whose far end drops
  everything and routes every IPv4 address there except loopback and the host's nameservers
  (left unreachable, so that a name lookup fails at once as before): a connect to an address
  nothing answers waits for its timeout, as on a networked machine, and nothing leaves the
  namespace. Both are set up by ``launch.sh``, run as namespace root, which then drops root
  and capabilities exactly as below before it execs the command; the services die with the
  run's pid namespace. bubblewrap run by root keeps only root's own capabilities, so it is
  asked for the tarpit's CAP_NET_ADMIN (which root lacks in a container of the docker and
  podman backends): held in the run's user namespace, it reaches the run's own network
  namespace only. The probe before the run sets the tarpit up once in its own namespace: one
  that cannot be set up here refuses the run (``SandboxError`` with ip's message) rather than
  let connect-timeout tests fail with "Network is unreachable". A run that shares the host's
  network gets no tarpit.

Where bubblewrap cannot isolate (not installed, no user namespaces) the run is refused with a
``SandboxError`` saying why and how to fix it; there is no unsandboxed fallback here, because
the verdicts are meant to be the official ones and a repository's tests run arbitrary code.
"""

from __future__ import annotations

import collections
import contextlib
import json
import os
import re
import secrets
import selectors
import shlex
import shutil
import signal
import stat
import subprocess
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from passbench.core.errors import HostUnfit, SandboxError
from passbench.core.records import Isolation, LoopbackService
from passbench.stages.sandbox.host import cgroups
from passbench.stages.sandbox.host.isolation import bubblewrap_missing, refusal
from passbench.stages.sandbox.host.launch import (
    SANDBOX_HOST_UID,
    SANDBOX_UID,
    SERVICE_UID,
    SHM_MB,
    SYSTEM_DIRS,
    refuse_hidden,
    ro_bind,
    system_view,
    under_any,
    user_namespace_fd,
    write_identity_files,
)
from passbench.stages.sandbox.host.workdirs import ScratchFolders

#: Where the working copy is, inside (the official images' path).
TESTBED = "/testbed"
#: Where `RepositoryRun.files` are, inside (read-only).
FILES_DIR = "/run/passbench/files"
#: The official harness's per-instance limit (run_evaluation.py --timeout).
OFFICIAL_TIMEOUT_S = 1800.0
#: The pytest plugin shipped into the run.
CHANNEL_PLUGIN = Path(__file__).parents[1] / "inside" / "_pytest_channel.py"
CHANNEL_VARIABLE = "PASSBENCH_PYTEST_CHANNEL"

_INSIDE = "/run/passbench"  # the run's own read-only files: the command, its files, the plugin
_COMMAND = f"{_INSIDE}/command.sh"
_LAUNCHER = f"{_INSIDE}/launch.sh"  # runs as namespace root first where the run has services
_CHANNEL_DIR = f"{_INSIDE}/channel"
_FILE_NAME = re.compile(r"[A-Za-z0-9._-]{1,128}")
_BASH = "/bin/bash"
_TOOL_PATH = "/usr/bin:/bin:/usr/sbin:/sbin"
_CHANNEL_CAP = 64 * 1024 * 1024  # a channel longer than this was not written by the plugin
_READ_SIZE = 65536
_DRAIN_S = 5.0  # after bubblewrap exits, how long its pipes may take to close
_PROBE_TIMEOUT_S = 60
_EXTRA_PIDS = 8  # sh, bubblewrap and its init besides the command's own processes
_WORD = re.compile(r"[a-z_]{1,32}")
_PHASES = ("setup", "call", "teardown")


@dataclass(frozen=True)
class RepositoryRun:
    """What to run, where, and within which limits."""

    # on the host, read-write at /testbed (the command's working directory); its own files (no
    # hard links into a mirror: `git clone --no-hardlinks`), never used on the host after the run
    working_copy: Path
    command: str  # a bash script (the official eval.sh, or one test command)
    # (name, text): read-only files at /run/passbench/files/<name> (patches the script applies)
    files: tuple[tuple[str, str], ...] = ()
    read_only: tuple[Path, ...] = ()  # host folders visible read-only at their own path
    writable: tuple[Path, ...] = ()  # host folders visible read-write at their own path
    # (host folder, path inside): read-write over a path of a read-only folder (an install
    # prefix inside a read-only test environment)
    writable_at: tuple[tuple[Path, str], ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)  # over a minimal base (below)
    timeout_s: float = OFFICIAL_TIMEOUT_S
    memory_mb: int = 8192  # the whole run (cgroup); per process without a cgroup
    max_processes: int = 512  # processes and threads of the whole run
    network: bool = False  # True shares the host's network (never for official numbers)
    output_cap: int = 32 * 1024 * 1024  # bytes of output kept: first and last halves
    # load the pytest channel plugin; False for commands that run no pytest (sympy's bin/test,
    # django's runtests.py) or whose Python ignores PYTHONPATH (-E, -I: pytest could not load it)
    channel: bool = True
    scratch_dir: Path | None = None  # where /tmp's folder lives (default: passbench's cache)
    # started on 127.0.0.1 before the command, as a user of their own (SERVICE_UID); root only
    services: tuple[LoopbackService, ...] = ()
    # connects to addresses nothing answers time out instead of failing at once; root only
    tarpit: bool = False


@dataclass(frozen=True)
class ChannelReport:
    """One report pytest logged: a test's setup, call or teardown, or a collector."""

    nodeid: str
    when: str  # "setup", "call", "teardown", or "collect" for a collector's report
    outcome: str  # as logged: "passed", "failed", "skipped" (plugins add others: "rerun")
    made: str | None  # as pytest's own hooks made it, before later hook wrappers; None: unknown
    xfail: bool  # the test was expected to fail (pytest's `wasxfail`)

    @property
    def rewritten(self) -> bool:
        """Made failed or skipped, logged as passed: a hook wrapper rewrote it (pytest's own
        handling never turns anything into a pass)."""
        return self.outcome == "passed" and self.made is not None and self.made != "passed"

    @property
    def status(self) -> str | None:
        """The official log parsers' word for it (PASSED, FAILED, SKIPPED, ERROR, XFAIL, XPASS),
        as pytest's summary counts reports: a passing setup or teardown is no status of its
        own, so a test whose call never reported (the process died) has none."""
        if self.outcome == "passed":
            if self.when != "call":
                return None
            return "XPASS" if self.xfail else "PASSED"
        if self.outcome == "skipped":
            return "XFAIL" if self.xfail else "SKIPPED"
        if self.when == "call":
            return "FAILED"
        return "ERROR"  # setup, teardown, a collector, or a plugin's outcome


# The order of pytest's -rA summary (pytest >= 6: "PpsxXEf"): the official parser keeps the
# last line it reads for a test, so a later letter wins.
_SUMMARY_ORDER = ("PASSED", "SKIPPED", "XFAIL", "XPASS", "ERROR", "FAILED")


@dataclass(frozen=True)
class ChannelSession:
    """One pytest session that loaded the plugin."""

    pytest_version: str
    python_version: str
    exitstatus: int | None  # None: it never finished (killed, crashed, os._exit)


@dataclass(frozen=True)
class Channel:
    """What the run's pytest reported on the channel."""

    reports: tuple[ChannelReport, ...] = ()
    sessions: tuple[ChannelSession, ...] = ()
    foreign_lines: int = 0  # lines without this run's nonce or not in the plugin's format
    truncated: bool = False  # ended mid-line (killed while writing) or went past its cap

    @property
    def tampered(self) -> bool:
        """Someone else wrote to the channel, took the nonce, or rewrote a report."""
        return self.foreign_lines > 0 or any(report.rewritten for report in self.reports)

    def statuses(self) -> dict[str, str]:
        """Test id -> status in the official parsers' words, one per test as pytest's -rA
        summary would leave it to the official pytest parser (a failed call beats an error in
        teardown, which beats a pass). Tests that never reported are absent."""
        found: dict[str, str] = {}
        for report in self.reports:
            status = report.status
            if status is None:
                continue
            earlier = found.get(report.nodeid)
            if earlier is None or _SUMMARY_ORDER.index(status) > _SUMMARY_ORDER.index(earlier):
                found[report.nodeid] = status
        return found


@dataclass(frozen=True)
class RepositoryResult:
    """How the run ended, what it printed, and what its pytest reported on the channel."""

    exit_code: int | None  # the command's (128 + signal if killed); None when timed out
    output: str  # stdout and stderr interleaved, at most `output_cap` bytes of it
    timed_out: bool
    duration_s: float
    channel: Channel
    omitted_bytes: int  # output left out in the middle (0: complete)
    out_of_memory: bool  # the kernel killed a process of the run for lack of memory (cgroup)
    isolation: Isolation
    cgroup: str  # "v2", "v1" or "none" (rlimits only)
    network: bool


def run_repository(run: RepositoryRun) -> RepositoryResult:
    """Run `run.command` with bash in the sandbox, wait for it (at most `run.timeout_s`), and
    leave nothing of it running. Raises SandboxError when the sandbox cannot be made; a
    failing, crashing or hanging command is a result, not an error."""
    missing = bubblewrap_missing()
    if missing is not None:
        raise HostUnfit(refusal(missing, "repository tests", fallback=False))
    _check_paths(run)
    if run.network and run.tarpit:
        # the run shares the host's network namespace: no namespace of its own to route into
        # the tarpit, and none that the setup may touch
        run = replace(run, tarpit=False)
    as_root = os.geteuid() == 0
    if (run.services or run.tarpit) and not as_root:
        raise HostUnfit(
            "loopback services and the tarpit need passbench run as root (a second user and "
            "namespace root for the network setup inside the sandbox)"
        )
    tools = _tools(network_setup=run.tarpit)
    support = cgroups.detect()
    cgroups.sweep(support)
    private = Path(tempfile.mkdtemp(prefix="passbench-repo-"))
    scratch = ScratchFolders(run.scratch_dir)
    userns = -1
    try:
        if as_root:
            userns = user_namespace_fd(service_user=bool(run.services))
        tmp = scratch.for_worker(0, mode=0o1777, owner=SANDBOX_HOST_UID if as_root else None)
        plugin = _prepare_private(private, run, tools, support.kind == "none")
        mounts = _arguments(run, private, tmp)
        _prepare_folders(run, as_root)
        _probe(tools, mounts, userns, support.kind == "none", run)
        return _execute(run, tools, mounts, userns, support, plugin)
    finally:
        if userns >= 0:
            os.close(userns)
        # what the run wrote in /tmp goes while the next run starts (the run is over: nothing
        # of it is left to write there)
        scratch.close_in_background()
        shutil.rmtree(private, ignore_errors=True)


# --------------------------------------------------------------------------- preparing


def _check_paths(run: RepositoryRun) -> None:
    if not run.working_copy.is_dir():
        raise SandboxError(f"the working copy {run.working_copy} is not a folder")
    service_paths = tuple(Path(path) for service in run.services for path in service.read_only)
    for kind, paths in (
        ("read-only", (*run.read_only, *service_paths)),
        ("writable", run.writable),
    ):
        resolved = [str(Path(path).resolve()) for path in paths]
        for path in resolved:
            if not os.path.exists(path):
                raise SandboxError(f"the {kind} folder {path} does not exist")
            if path == "/":
                raise SandboxError(f"the {kind} folder cannot be / (it would show everything)")
        refuse_hidden(resolved, f"the {kind} folder")
    # shown at another path, which must be a folder of a read-only one (its mount point)
    for host, inside in run.writable_at:
        if not host.is_dir():
            raise SandboxError(f"the writable folder {host} does not exist")
        if not any(under_any(inside, [str(Path(p).resolve())]) for p in run.read_only):
            raise SandboxError(f"{inside} is not inside a read-only folder of the run")
        refuse_hidden([inside], "the writable folder")


@dataclass(frozen=True)
class _Tools:
    """Host programs that set up the command inside; under /usr, so visible there too."""

    bwrap: str
    setpriv: str
    prlimit: str
    ip: str = ""  # iproute2's, for the tarpit


def _tools(*, network_setup: bool = False) -> _Tools:
    found = {}
    for name in ("bwrap", "setpriv", "prlimit"):
        path = shutil.which(name, path=_TOOL_PATH) or shutil.which(name)
        if path is None or (name != "bwrap" and not under_any(path, SYSTEM_DIRS)):
            raise HostUnfit(
                f"repository runs need '{name}' under /usr (util-linux, installed on every "
                f"Debian, Ubuntu and Fedora system; apt-get install util-linux)"
            )
        found[name] = path
    if network_setup:
        ip = shutil.which("ip", path=_TOOL_PATH)
        if ip is None or not under_any(ip, SYSTEM_DIRS):
            raise HostUnfit("the tarpit needs iproute2's 'ip' (apt-get install iproute2)")
        found["ip"] = ip
    return _Tools(**found)


@dataclass(frozen=True)
class _Plugin:
    name: str  # the module name pytest imports, random for each run
    nonce: str


def _prepare_private(private: Path, run: RepositoryRun, tools: _Tools, no_cgroup: bool) -> _Plugin:
    """The run's own files: identity files, and (shown read-only at /run/passbench) the command,
    `run.files` in files/ and the plugin, under its name for this run, alone in channel/ (the
    folder put on PYTHONPATH)."""
    write_identity_files(private)
    inside = private / "inside"
    folders = [inside, inside / "files", inside / "channel"]
    for folder in folders:
        folder.mkdir(mode=0o755)
        folder.chmod(0o755)
    (inside / "command.sh").write_text(run.command)
    if run.services or run.tarpit:
        (inside / "launch.sh").write_text(_launcher(run, tools, no_cgroup))
    for name, text in run.files:
        if not _FILE_NAME.fullmatch(name) or name in (".", ".."):
            raise SandboxError(f"a run's file name must be a plain file name, not {name!r}")
        (inside / "files" / name).write_text(text)
    plugin = _Plugin(f"_passbench_channel_{secrets.token_hex(8)}", secrets.token_hex(16))
    if run.channel:
        shutil.copyfile(CHANNEL_PLUGIN, inside / "channel" / f"{plugin.name}.py")
    for entry in [*private.iterdir(), *(e for folder in folders for e in folder.iterdir())]:
        if entry.is_file():
            entry.chmod(0o644)
    return plugin


def _arguments(run: RepositoryRun, private: Path, tmp: Path) -> list[str]:
    """The bubblewrap options of this run, without the user namespace part."""
    args = [
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--die-with-parent",
        "--new-session",
        "--hostname",
        "sandbox",
    ]
    if not run.network:
        args.append("--unshare-net")
    args += system_view(private)
    args += ["--perms", "1777", "--size", str(SHM_MB * 1024 * 1024), "--tmpfs", "/dev/shm"]
    args += ["--tmpfs", "/run", "--perms", "0755", "--dir", _INSIDE]
    args += ["--ro-bind", str(private / "inside"), _INSIDE]
    shown = [str(Path(p).resolve()) for p in run.read_only]
    shown += [str(Path(p).resolve()) for service in run.services for p in service.read_only]
    binds = [(path, False, "") for path in dict.fromkeys(shown)]
    binds += [(str(Path(p).resolve()), True, "") for p in run.writable]
    binds += [(str(Path(p).resolve()), True, inside) for p, inside in run.writable_at]
    # outer folders first, so that one inside another is mounted on top of it
    for path, writable, inside in sorted(binds, key=lambda bind: (bind[2] or bind[0]).count("/")):
        if inside:
            args += ["--bind", path, inside]
            continue
        if under_any(path, SYSTEM_DIRS) and not writable:
            continue  # visible already
        bind = ro_bind(path)
        if writable:
            bind[-3] = "--bind"
        args += bind
    args += ["--bind", str(run.working_copy.resolve()), TESTBED]
    args += ["--bind", str(tmp), "/tmp", "--dir", "/var", "--symlink", "/tmp", "/var/tmp"]
    return [*args, "--chdir", TESTBED]


def _inner(tools: _Tools, as_root: bool, no_cgroup: bool, run: RepositoryRun) -> list[str]:
    """What bubblewrap starts: (as root) drop namespace root, set the rlimits, run bash."""
    drop = [
        tools.setpriv,
        f"--reuid={SANDBOX_UID}",
        f"--regid={SANDBOX_UID}",
        "--clear-groups",
        "--inh-caps=-all",
        "--bounding-set=-all",
        "--no-new-privs",
        "--",
    ]
    limits = [tools.prlimit, f"--nproc={run.max_processes}", "--core=0"]
    if no_cgroup:
        limits.append(f"--data={run.memory_mb * 1024 * 1024}")
    return [*(drop if as_root else []), *limits, "--"]


# The tarpit's link: addresses from 198.18.0.0/15 (RFC 2544, benchmarking: never on the
# internet), a next hop whose MAC address nothing has, so its frames are dropped by the far end.
TARPIT_LINK = "pbtarpit"
_TARPIT_SINK = "pbsink"
_TARPIT_SOURCE = "198.18.0.1"
_TARPIT_HOP = "198.18.0.2"
_TARPIT_MAC = "02:00:00:00:00:02"
#: The line a sandbox prints where the tarpit could not be set up.
TARPIT_FAILED = "passbench: the tarpit could not be set up"
#: What the launcher's namespace root is given beyond what root has outside. bubblewrap run by
#: root keeps only root's own capabilities, and in a container of the docker and podman
#: backends root has only a few (remote/container.py ROOT_CAPABILITIES), not CAP_NET_ADMIN,
#: which the tarpit's veth pair and routes need. Given here, it holds in the run's own user
#: namespace only, over the network namespace that namespace owns (nothing but its loopback and
#: the tarpit): what any user has after `unshare -rn`. setpriv drops it before the command runs.
_TARPIT_CAPABILITIES = ("CAP_NET_ADMIN",)
_NAMESERVER = re.compile(r"^\s*nameserver\s+(\d{1,3}(?:\.\d{1,3}){3})\s*$", re.MULTILINE)


def _tarpit_lines(ip: str, resolv_conf: Path = Path("/etc/resolv.conf")) -> list[str]:
    """The namespace's routes: everything IPv4 into the tarpit link, but the nameservers the
    sandbox's /etc/resolv.conf names (no reply would only slow each lookup down)."""
    run = shlex.quote(ip)
    lines = [
        f"{run} link add {TARPIT_LINK} type veth peer name {_TARPIT_SINK}",
        f"{run} link set {_TARPIT_SINK} up",
        f"{run} link set {TARPIT_LINK} up",
        f"{run} addr add {_TARPIT_SOURCE}/32 dev {TARPIT_LINK}",
        f"{run} route add {_TARPIT_HOP}/32 dev {TARPIT_LINK}",
        f"{run} neigh replace {_TARPIT_HOP} lladdr {_TARPIT_MAC} dev {TARPIT_LINK} nud permanent",
        f"{run} route add default via {_TARPIT_HOP} dev {TARPIT_LINK} src {_TARPIT_SOURCE}",
    ]
    try:
        servers = _NAMESERVER.findall(resolv_conf.read_text(errors="replace"))
    except OSError:
        servers = []
    for server in dict.fromkeys(servers):
        if not server.startswith("127."):
            lines.append(f"{run} route add unreachable {server}/32")
    return lines


def _tarpit_script(ip: str) -> str:
    """Shell: set up the tarpit; where it fails, one line saying so with ip's own message
    (TARPIT_FAILED: ...) and a nonzero status."""
    setup = " && ".join(_tarpit_lines(ip))
    newline = "$'\\n'"
    return (
        f"why=$({{ {setup}; }} 2>&1) || "
        f'{{ echo "{TARPIT_FAILED}: ${{why//{newline}/; }}"; false; }}'
    )


def _launcher(run: RepositoryRun, tools: _Tools, no_cgroup: bool) -> str:
    """launch.sh: as namespace root, the tarpit's routes and the services (each as
    SERVICE_UID, without capabilities), a wait for their ports, then the command exactly as
    without them (root and capabilities dropped, the limits set)."""
    lines = ["set -u"]
    if run.tarpit:
        # _probe set up the same tarpit in this sandbox a moment ago, so this fails only by
        # accident; the line then lands in the run's output before the eval script's
        lines.append(_tarpit_script(tools.ip))
    for service in run.services:
        user = [
            tools.setpriv,
            f"--reuid={SERVICE_UID}",
            f"--regid={SERVICE_UID}",
            "--clear-groups",
            "--inh-caps=-all",
            "--bounding-set=-all",
            "--no-new-privs",
            "--",
            tools.prlimit,
            f"--nproc={run.max_processes}",
            "--core=0",
            *([f"--data={run.memory_mb * 1024 * 1024}"] if no_cgroup else []),
            "--",
            "/usr/bin/env",
            "-i",
            "PATH=/usr/bin:/bin",
            "HOME=/nonexistent",
            "LANG=C.UTF-8",
            "TZ=Etc/UTC",
            *service.argv,
            str(service.port),
        ]
        # in a subshell, so that the service is bubblewrap's init's child, not the command's
        lines.append(f"( cd / && exec {shlex.join(user)} </dev/null >/dev/null 2>&1 & )")
    for service in run.services:
        tries = max(1, int(service.start_timeout_s * 10))
        probe = f"(exec 3<>/dev/tcp/127.0.0.1/{service.port}) 2>/dev/null"
        lines.append(
            f"for _ in $(seq {tries}); do {probe} && break; sleep 0.1; done; {probe} || "
            f"echo {shlex.quote(f'passbench: the loopback service {service.name} did not start')}"
        )
    inner = _inner(tools, True, no_cgroup, run)
    lines.append(f"exec {shlex.join([*inner, _BASH, _COMMAND])}")
    return "\n".join(lines) + "\n"


def _bwrap(tools: _Tools, mounts: list[str], userns: int, *, tarpit: bool = False) -> list[str]:
    """bubblewrap with `mounts` (`tarpit`, as root: with what its setup needs)."""
    if userns >= 0:
        caps = [arg for cap in _TARPIT_CAPABILITIES for arg in ("--cap-add", cap)]
        return [tools.bwrap, "--userns", str(userns), *(caps if tarpit else []), *mounts, "--"]
    user = ["--unshare-user", "--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID)]
    return [tools.bwrap, *user, "--cap-drop", "ALL", *mounts, "--"]


def _probe(
    tools: _Tools, mounts: list[str], userns: int, no_cgroup: bool, run: RepositoryRun
) -> None:
    """Start this very sandbox once with bash doing nothing (after setting up the tarpit, as
    the launcher will): a sandbox that cannot start, or a tarpit that cannot be set up here, is
    an error, never a failing test."""
    inner = [*_inner(tools, userns >= 0, no_cgroup, run), _BASH, "-c", ":"]
    if run.tarpit:
        # in the probe's own network namespace, gone with it
        script = f"{_tarpit_script(tools.ip)} >&2 && exec {shlex.join(inner)}"
        argv = [*_bwrap(tools, mounts, userns, tarpit=True), _BASH, "-c", script]
    else:
        argv = [*_bwrap(tools, mounts, userns), *inner]
    try:
        done = subprocess.run(
            argv,
            pass_fds=(userns,) if userns >= 0 else (),
            capture_output=True,
            text=True,
            timeout=_PROBE_TIMEOUT_S,
            env={"PATH": _TOOL_PATH},
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        problem = f"bubblewrap could not start a sandbox here: {error}"
        raise SandboxError(refusal(problem, "repository tests", fallback=False)) from error
    if done.returncode != 0:
        failed = [line for line in done.stderr.splitlines() if line.startswith(TARPIT_FAILED)]
        if failed:
            raise HostUnfit(
                f"{failed[0][:500]} (it makes a connect to an address nothing answers time out; "
                f"without it such tests fail at once, so the run is refused)"
            )
        found = " ".join((done.stderr or f"exit code {done.returncode}").split())[-500:]
        problem = f"bubblewrap could not start a sandbox here: {found}"
        raise SandboxError(refusal(problem, "repository tests", fallback=False))


def _environment(run: RepositoryRun, plugin: _Plugin, fds: tuple[int, int]) -> dict[str, str]:
    """Nothing from the host: a minimal base, the run's own variables, the channel's."""
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": "/tmp",
        "TMPDIR": "/tmp",
        "USER": "sandbox",
        "LOGNAME": "sandbox",
        "LANG": "C.UTF-8",
        "TZ": "Etc/UTC",  # as the official images
    }
    env.update(run.env)
    for service in run.services:
        for name, value in service.variables:
            env[name] = value.replace("{port}", str(service.port))
    if run.channel:
        options = env.get("PYTEST_ADDOPTS", "")
        env["PYTEST_ADDOPTS"] = f"-p {plugin.name} {options}".strip()
        path = env.get("PYTHONPATH", "")
        env["PYTHONPATH"] = f"{_CHANNEL_DIR}:{path}" if path else _CHANNEL_DIR
        env[CHANNEL_VARIABLE] = f"{fds[0]},{fds[1]}"
    else:
        env.pop(CHANNEL_VARIABLE, None)
    return env


def _prepare_folders(run: RepositoryRun, as_root: bool) -> None:
    """Check the folders the run may write, and (as root) give them to the sandbox user.

    A file there that shares its data with another (a hard link: a local `git clone` links the
    mirror's object files) would let the run change that other file too: refused. As root the
    folders become host nobody's, so that the run can write them, and stay so: what the run
    left there is untrusted (git hooks, `core.fsmonitor` in .git/config, symbolic links to host
    files), and host git refuses to work in a repository another user owns ("dubious
    ownership")."""
    writable = [*run.writable, *(host for host, _ in run.writable_at)]
    for folder in [run.working_copy.resolve(), *(Path(p).resolve() for p in writable)]:
        try:
            _walk_tree(folder, SANDBOX_HOST_UID if as_root else None)
        except OSError as error:
            raise SandboxError(f"cannot prepare {folder} for the run: {error}") from error


def _walk_tree(top: Path, owner: int | None) -> None:
    """Refuse hard-linked files below `top`; lchown every entry to `owner` when given (never
    following a link; chown clears set-id bits)."""
    if owner is not None:
        os.lchown(top, owner, owner)
    for root, dirs, files in os.walk(top):
        for name in files:
            path = os.path.join(root, name)
            info = os.lstat(path)
            if stat.S_ISREG(info.st_mode) and info.st_nlink > 1:
                raise SandboxError(
                    f"{path} is a hard link (shares its data with another file, which the run "
                    f"could then change): make the working copy with `git clone --no-hardlinks`"
                    f" or copy it"
                )
        if owner is not None:
            for name in [*dirs, *files]:
                os.lchown(os.path.join(root, name), owner, owner)


# --------------------------------------------------------------------------- running


def _execute(
    run: RepositoryRun,
    tools: _Tools,
    mounts: list[str],
    userns: int,
    support: cgroups.CgroupSupport,
    plugin: _Plugin,
) -> RepositoryResult:
    no_cgroup = support.kind == "none"
    if run.services or run.tarpit:
        argv = [*_bwrap(tools, mounts, userns, tarpit=run.tarpit), _BASH, _LAUNCHER]
    else:
        argv = [*_bwrap(tools, mounts, userns), *_inner(tools, userns >= 0, no_cgroup, run)]
        argv += [_BASH, _COMMAND]
    cgroup = None
    if not no_cgroup:
        name = f"passbench-{os.getpid()}-{secrets.token_hex(6)}-repo"
        try:
            cgroup = cgroups.WorkerCgroup(
                support, name, run.memory_mb, run.max_processes + _EXTRA_PIDS
            )
        except OSError as error:
            raise SandboxError(f"cannot create the run's cgroup: {error}") from error
        argv = cgroup.wrap(argv)
    out_r, out_w = os.pipe()
    chan_r, chan_w, nonce_r = -1, -1, -1
    if run.channel:
        chan_r, chan_w = os.pipe()
        nonce_r, nonce_w = os.pipe()
        os.write(nonce_w, plugin.nonce.encode("ascii"))
        os.close(nonce_w)  # the first reader takes it; then the pipe is empty
    passed = [fd for fd in (chan_w, nonce_r, userns) if fd >= 0]
    output = _Capture(run.output_cap)
    channel = _ChannelBuffer()
    try:
        started = time.monotonic()
        process = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=out_w,
            stderr=out_w,
            pass_fds=passed,
            env=_environment(run, plugin, (chan_w, nonce_r)),
            start_new_session=True,
        )
    except OSError as error:
        for fd in (out_r, out_w, chan_r, *passed):
            with contextlib.suppress(OSError):
                os.close(fd)
        if cgroup is not None:
            cgroup.remove()
        raise SandboxError(f"cannot start bubblewrap: {error}") from error
    for fd in (out_w, chan_w, nonce_r):  # the sandbox has its copies
        if fd >= 0:
            os.close(fd)
    try:
        timed_out = _collect(process, started + run.timeout_s, out_r, chan_r, output, channel)
        duration = time.monotonic() - started
    finally:
        _kill(process)
        out_of_memory = cgroup is not None and cgroup.oom_kills() > 0
        if cgroup is not None:
            cgroup.remove()  # kills whatever is left in it, then removes it
        for fd in (out_r, chan_r):
            if fd >= 0:
                os.close(fd)
    text, omitted = output.result()
    return RepositoryResult(
        exit_code=None if timed_out else process.returncode,
        output=text,
        timed_out=timed_out,
        duration_s=duration,
        channel=parse_channel(bytes(channel.data), plugin.nonce, channel.overflowed),
        omitted_bytes=omitted,
        out_of_memory=out_of_memory,
        isolation=Isolation.BUBBLEWRAP,
        cgroup=support.kind,
        network=run.network,
    )


def _collect(
    process: subprocess.Popen[bytes],
    deadline: float,
    out_r: int,
    chan_r: int,
    output: _Capture,
    channel: _ChannelBuffer,
) -> bool:
    """Read both pipes until they close, killing the run at `deadline`; whether it timed out."""
    sinks = {out_r: output.add, chan_r: channel.add}
    selector = selectors.DefaultSelector()
    for fd in (out_r, chan_r):
        if fd >= 0:
            os.set_blocking(fd, False)
            selector.register(fd, selectors.EVENT_READ)
    timed_out = False
    ended: float | None = None  # when bubblewrap exited (or was killed)
    with selector:
        while selector.get_map():
            now = time.monotonic()
            if ended is None and process.poll() is not None:
                ended = now
            if ended is None and now >= deadline:
                timed_out = True
                _kill(process)
                ended = now
            if ended is not None and now - ended > _DRAIN_S:
                break  # nothing in the sandbox is alive; a pipe still open is not ours to wait on
            wait = 0.2 if ended is not None else min(0.5, max(deadline - now, 0.0))
            for key, _events in selector.select(timeout=wait):
                try:
                    chunk = os.read(key.fd, _READ_SIZE)
                except BlockingIOError:
                    continue
                if chunk:
                    sinks[key.fd](chunk)
                else:
                    selector.unregister(key.fd)
    process.wait()
    return timed_out


def _kill(process: subprocess.Popen[bytes]) -> None:
    """Kill bubblewrap (its init dies with it, and with the init every process of the run)."""
    if process.poll() is None:
        with contextlib.suppress(OSError):
            os.killpg(process.pid, signal.SIGKILL)
        with contextlib.suppress(OSError):
            process.kill()
    process.wait()


class _Capture:
    """The output: all of it up to `cap` bytes, else the first and last halves."""

    def __init__(self, cap: int) -> None:
        self.head_cap = cap // 2
        self.tail_cap = cap - self.head_cap
        self.head = bytearray()
        self.tail: collections.deque[bytes] = collections.deque()
        self.tail_size = 0
        self.total = 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self.head_cap - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if not chunk:
            return
        self.tail.append(chunk)
        self.tail_size += len(chunk)
        while self.tail and self.tail_size - len(self.tail[0]) >= self.tail_cap:
            self.tail_size -= len(self.tail.popleft())

    def result(self) -> tuple[str, int]:
        """The text, and how many bytes were left out of its middle."""
        tail = b"".join(self.tail)[-self.tail_cap :] if self.tail_cap else b""
        head = bytes(self.head)
        if self.total == len(head) + len(tail):
            return (head + tail).decode("utf-8", "replace"), 0
        # cut at line ends, so that no line is made of two halves
        head = head[: head.rfind(b"\n") + 1]
        newline = tail.find(b"\n")
        tail = tail[newline + 1 :] if newline >= 0 else b""
        omitted = self.total - len(head) - len(tail)
        marker = f"[passbench: {omitted} bytes of output left out here]\n".encode()
        return (head + marker + tail).decode("utf-8", "replace"), omitted


class _ChannelBuffer:
    def __init__(self) -> None:
        self.data = bytearray()
        self.overflowed = False

    def add(self, chunk: bytes) -> None:
        if len(self.data) + len(chunk) > _CHANNEL_CAP:
            self.overflowed = True
            return
        self.data += chunk


# --------------------------------------------------------------------------- the channel


def parse_channel(data: bytes, nonce: str, overflowed: bool = False) -> Channel:
    """The records in what the plugin wrote (`<nonce> <json>` lines). A line without `nonce`,
    or not in the plugin's format, counts as foreign; a last line cut short is dropped."""
    prefix = nonce.encode("ascii") + b" "
    lines = data.split(b"\n")
    partial = lines.pop()  # b"" when the stream ended with a full line
    reports: list[ChannelReport] = []
    sessions: list[dict[str, Any]] = []
    foreign = 0
    for line in lines:
        record = _record(line, prefix)
        if record is None or not _take(record, reports, sessions):
            foreign += 1
    return Channel(
        reports=tuple(reports),
        sessions=tuple(
            ChannelSession(s["pytest"], s["python"], s.get("exitstatus")) for s in sessions
        ),
        foreign_lines=foreign,
        truncated=overflowed or bool(partial),
    )


def _record(line: bytes, prefix: bytes) -> dict[str, Any] | None:
    if not line.startswith(prefix):
        return None
    try:
        record = json.loads(line[len(prefix) :])
    except ValueError:
        return None
    return record if isinstance(record, dict) else None


def _take(
    record: dict[str, Any], reports: list[ChannelReport], sessions: list[dict[str, Any]]
) -> bool:
    """Add one record; False when it is not one the plugin writes (in that place)."""
    event = record.get("event")
    if event == "start":
        if not (isinstance(record.get("pytest"), str) and isinstance(record.get("python"), str)):
            return False
        sessions.append({"pytest": record["pytest"], "python": record["python"]})
        return True
    if not sessions or "exitstatus" in sessions[-1]:
        return False  # nothing is reported before a session starts or after it finished
    if event == "finish":
        status = record.get("exitstatus")
        if not isinstance(status, int) or isinstance(status, bool):
            return False
        sessions[-1]["exitstatus"] = status
        return True
    report = _report(record, event)
    if report is None:
        return False
    reports.append(report)
    return True


def _report(record: dict[str, Any], event: object) -> ChannelReport | None:
    nodeid, outcome = record.get("nodeid"), record.get("outcome")
    if not isinstance(nodeid, str) or not isinstance(outcome, str) or not _WORD.fullmatch(outcome):
        return None
    if event == "collect":
        return ChannelReport(nodeid, "collect", outcome, None, False)
    when, made, xfail = record.get("when"), record.get("made"), record.get("xfail")
    if (
        event != "report"
        or when not in ("setup", "call", "teardown")
        or not isinstance(xfail, bool)
    ):
        return None
    if made is not None and not (isinstance(made, str) and _WORD.fullmatch(made)):
        return None
    return ChannelReport(nodeid, when, outcome, made, xfail)


__all__ = [
    "CHANNEL_PLUGIN",
    "FILES_DIR",
    "OFFICIAL_TIMEOUT_S",
    "TESTBED",
    "Channel",
    "ChannelReport",
    "ChannelSession",
    "RepositoryResult",
    "RepositoryRun",
    "parse_channel",
    "run_repository",
]
