"""One cgroup per sandbox worker, capping what a sample can take from the host as a whole.

Resource limits (rlimits) are per process: a sample that forks can hold `processes` times its
address-space limit, and RLIMIT_NPROC does not bind root. A cgroup caps the worker and
everything below it together: `memory.max` (no swap) and `pids.max`. When the cgroup runs out
of memory the kernel's OOM killer ends a process inside it (samples raise their own
`oom_score_adj`, so it picks them before the worker), never one outside it.

What is available is detected once per sandbox, from /proc/self/cgroup and the mount table,
and proved by creating a probe cgroup and moving a process into it:

- "v2": the unified hierarchy offers the memory and pids controllers, and passbench may create
  cgroups where they apply: under its own cgroup when that already delegates them (or is the
  root of what this process sees), else beside it (its parent delegates them: root, or a
  delegated subtree such as `systemd-run --user -p Delegate=yes`).
- "v1": the legacy memory and pids hierarchies are mounted and writable (older hosts, and
  hybrid ones whose v2 hierarchy holds no controllers).
- "none": neither; samples are held by rlimits only (docs/sandbox.md says what that leaves).

A worker enters its cgroups before it starts: the command runs through `/bin/sh`, which writes
its own pid into each `cgroup.procs` and then execs the worker, so not even bubblewrap's first
fork happens outside.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

#: Memory a worker holds besides its sample: the interpreter and the preloaded libraries
#: (pandas, matplotlib, sklearn... about 120-400 MiB resident; pages a sample's fork copies
#: count against the same cgroup).
WORKER_MEMORY_MB = 1024
#: Processes (threads count) a worker needs besides its sample's: sh, bwrap, the worker.
WORKER_PIDS = 64
#: What the shell runs: join every cgroup listed before "--", then exec the command.
_JOIN = 'while [ "$1" != -- ]; do echo $$ > "$1" || exit 125; shift; done; shift; exec "$@"'
_CONTROLLERS = {"memory", "pids"}


@dataclass(frozen=True)
class CgroupSupport:
    """Where this process can put its workers' cgroups, and of which kind."""

    kind: str  # "v2", "v1" or "none"
    parents: tuple[Path, ...] = ()  # v2: (parent,); v1: (memory parent, pids parent)
    reason: str = ""  # why "none"


@dataclass(frozen=True)
class _Mount:
    point: str
    root: str
    fs_type: str
    options: frozenset[str]


def _mounts(mountinfo: str) -> list[_Mount]:
    mounts = []
    for line in mountinfo.splitlines():
        fields = line.split()
        if "-" not in fields:
            continue
        dash = fields.index("-")
        options = frozenset(fields[dash + 3].split(",")) if len(fields) > dash + 3 else frozenset()
        mounts.append(_Mount(fields[4], fields[3], fields[dash + 1], options))
    return mounts


def _memberships(cgroup_file: str) -> dict[str, str]:
    """controller (or "" for v2) -> this process's cgroup path in that hierarchy."""
    found: dict[str, str] = {}
    for line in cgroup_file.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, path = parts
        for controller in controllers.split(",") if controllers else [""]:
            found[controller] = path
    return found


def _folder(mount: _Mount, path: str) -> Path:
    """The folder of cgroup `path` under `mount` (whose root may be a subtree of the
    hierarchy, as in a container)."""
    root = mount.root.rstrip("/")
    if root and path.startswith(root + "/"):
        path = path[len(root) :]
    elif root and path == root:
        path = "/"
    return Path(mount.point) / path.lstrip("/")


def _words(path: Path) -> set[str]:
    try:
        return set(path.read_text().split())
    except OSError:
        return set()


def _v2_parent(mount: _Mount, path: str) -> tuple[Path | None, str]:
    own = _folder(mount, path)
    if not _CONTROLLERS.issubset(_words(own / "cgroup.controllers")):
        return None, "the cgroup v2 hierarchy here does not offer the memory and pids controllers"
    if _CONTROLLERS.issubset(_words(own / "cgroup.subtree_control")):
        return own, ""
    if own == Path(mount.point):
        # the root of what this process sees may enable them for its children (the real
        # root may always; a container's root only if no process sits in it)
        with contextlib.suppress(OSError):
            (own / "cgroup.subtree_control").write_text("+memory +pids")
            return own, ""
        return None, f"cannot enable the memory and pids controllers in {own}"
    parent = own.parent
    delegated = _CONTROLLERS.issubset(_words(parent / "cgroup.subtree_control"))
    if delegated and os.access(parent, os.W_OK):
        return parent, ""
    return None, f"no writable cgroup v2 folder delegates memory and pids near {own}"


def _joins(procs: list[Path]) -> bool:
    """Whether a process can be moved into these cgroups: the real test of permission."""
    try:
        done = subprocess.run(
            # nothing after "--": a bare `exec` succeeds without running anything (no PATH)
            ["/bin/sh", "-c", _JOIN, "sh", *map(str, procs), "--"],
            capture_output=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def _probe(parents: tuple[Path, ...], files: tuple[str, ...]) -> str:
    """ "" if worker cgroups can be made under `parents` (with `files` to set limits in) and
    joined; else why not."""
    made: list[Path] = []
    try:
        for parent, needed in zip(parents, files, strict=True):
            probe = parent / f"passbench-probe-{os.getpid()}"
            try:
                probe.mkdir(exist_ok=True)
            except OSError as error:
                return f"cannot create a cgroup under {parent}: {error.strerror}"
            made.append(probe)
            if not (probe / needed).exists():
                return f"{probe} has no {needed}"
        if not _joins([probe / "cgroup.procs" for probe in made]):
            return f"cannot move a process into {made[0]}"
        return ""
    finally:
        for probe in made:
            _rmdir(probe)


def detect(cgroup_file: str | None = None, mountinfo: str | None = None) -> CgroupSupport:
    """What this process can use (the arguments are for tests: the two /proc files' text)."""
    try:
        cgroup_text = (
            cgroup_file if cgroup_file is not None else Path("/proc/self/cgroup").read_text()
        )
        mount_text = (
            mountinfo if mountinfo is not None else Path("/proc/self/mountinfo").read_text()
        )
    except OSError as error:
        return CgroupSupport("none", reason=f"cannot read /proc: {error.strerror}")
    member = _memberships(cgroup_text)
    mounts = _mounts(mount_text)
    reasons = []
    unified = next((m for m in mounts if m.fs_type == "cgroup2"), None)
    if unified is not None and "" in member:
        parent, why = _v2_parent(unified, member[""])
        if parent is not None:
            why = _probe((parent,), ("memory.max",))
            if not why:
                return CgroupSupport("v2", (parent,))
        reasons.append(f"v2: {why}")
    legacy = {
        name: next((m for m in mounts if m.fs_type == "cgroup" and name in m.options), None)
        for name in ("memory", "pids")
    }
    memory, pids = legacy["memory"], legacy["pids"]
    if memory is not None and pids is not None and "memory" in member and "pids" in member:
        parents = (_folder(memory, member["memory"]), _folder(pids, member["pids"]))
        why = _probe(parents, ("memory.limit_in_bytes", "pids.max"))
        if not why:
            return CgroupSupport("v1", parents)
        reasons.append(f"v1: {why}")
    else:
        reasons.append("v1: the memory and pids hierarchies are not mounted")
    return CgroupSupport("none", reason="; ".join(reasons))


class WorkerCgroup:
    """The cgroup(s) of one worker: created with its limits, joined by the worker's command,
    emptied and removed with it."""

    def __init__(self, support: CgroupSupport, name: str, memory_mb: int, pids: int) -> None:
        self.kind = support.kind
        self.memory_mb = memory_mb
        self.folders = [parent / name for parent in support.parents]
        for folder in self.folders:
            folder.mkdir()  # never another worker's
        memory = str(memory_mb * 1024 * 1024)
        if self.kind == "v2":
            (folder,) = self.folders
            _write(folder / "memory.max", memory)
            _write(folder / "memory.swap.max", "0", optional=True)
            _write(folder / "pids.max", str(pids))
        else:
            memory_folder, pids_folder = self.folders
            _write(memory_folder / "memory.limit_in_bytes", memory)
            # memory + swap: the same, so no swap (the file exists only with swap accounting)
            _write(memory_folder / "memory.memsw.limit_in_bytes", memory, optional=True)
            _write(pids_folder / "pids.max", str(pids))

    def wrap(self, argv: list[str]) -> list[str]:
        """`argv`, run so that its first process is already in this cgroup."""
        procs = [str(folder / "cgroup.procs") for folder in self.folders]
        return ["/bin/sh", "-c", _JOIN, "sh", *procs, "--", *argv]

    def oom_kills(self) -> int:
        """How many processes the kernel killed in this cgroup for lack of memory."""
        events = "memory.events" if self.kind == "v2" else "memory.oom_control"
        try:
            lines = (self.folders[0] / events).read_text().splitlines()
        except OSError:
            return 0
        for line in lines:
            key, _, value = line.partition(" ")
            if key == "oom_kill":
                return int(value)
        return 0

    def remove(self) -> None:
        """Kill whatever is still inside (nothing should be: the worker's sandbox is gone),
        then remove the cgroup folders."""
        for _ in range(200):
            alive = False
            for folder in self.folders:
                for pid in _words(folder / "cgroup.procs"):
                    alive = True
                    with contextlib.suppress(OSError, ValueError):
                        os.kill(int(pid), signal.SIGKILL)
            if not alive:
                break
            time.sleep(0.005)
        for folder in self.folders:
            _rmdir(folder)


def _write(path: Path, value: str, optional: bool = False) -> None:
    try:
        path.write_text(value)
    except OSError:
        if not optional:
            raise


def _rmdir(folder: Path, attempts: int = 100) -> None:
    for _ in range(attempts):  # EBUSY until the last process has been reaped
        try:
            folder.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.01)


def sweep(support: CgroupSupport) -> None:
    """Remove the (empty) cgroups that workers of passbench processes which no longer exist
    left behind (killed with SIGKILL: nothing ran their cleanup)."""
    for parent in support.parents:
        with contextlib.suppress(OSError):
            for folder in parent.iterdir():
                owner = folder.name.split("-")
                ours = len(owner) > 2 and owner[0] == "passbench" and owner[1].isdigit()
                if ours and not _alive(int(owner[1])):
                    _rmdir(folder, attempts=1)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
