"""Each worker in its own cgroup, where the host has one to give: a sample's processes together
cannot take more memory or processes than the cgroup allows, and nothing is left behind.

What this machine offers is detected (cgroups.detect); the limits are then proved from inside
a sample: a memory bomb spread over many processes (each under its own address-space limit)
and a process count that, for root in the rlimit fallback, only pids.max can stop."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from passbench.core.records import ErrorCategory, Isolation
from passbench.stages.sandbox import Sandbox, SandboxConfig, open_sandbox
from passbench.stages.sandbox.host.cgroups import (
    WORKER_MEMORY_MB,
    WORKER_PIDS,
    _folder,
    _mounts,
    _v2_parent,
    detect,
)
from passbench.stages.sandbox.host.launch import SHM_MB

from .helpers import PYTHON, TEST_LIMITS, checks_program, run_one

SUPPORT = detect()
needs_cgroups = pytest.mark.skipif(
    SUPPORT.kind == "none",
    reason=f"not applicable: no writable cgroup hierarchy here ({SUPPORT.reason})",
)
#: TEST_LIMITS: 1024 MiB of address space per process, 64 processes
MEMORY_MAX_MB = TEST_LIMITS.memory_mb + WORKER_MEMORY_MB + SHM_MB
PIDS_MAX = TEST_LIMITS.processes + WORKER_PIDS


def test_mount_table_and_membership_parsing() -> None:
    mountinfo = (
        "30 25 0:26 / /sys/fs/cgroup rw,nosuid shared:4 - cgroup2 cgroup2 rw,nsdelegate\n"
        "41 30 0:35 /docker/abc /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n"
    )
    v2, v1 = _mounts(mountinfo)
    assert (v2.point, v2.fs_type) == ("/sys/fs/cgroup", "cgroup2")
    assert "memory" in v1.options and v1.root == "/docker/abc"
    assert _folder(v2, "/user.slice/session-1.scope") == Path(
        "/sys/fs/cgroup/user.slice/session-1.scope"
    )
    # a container sees its own cgroup as the mount's root
    assert _folder(v1, "/docker/abc/inner") == Path("/sys/fs/cgroup/memory/inner")


def test_detection_says_what_it_found() -> None:
    assert SUPPORT.kind in {"v2", "v1", "none"}
    if SUPPORT.kind == "none":
        assert SUPPORT.reason
    else:
        assert all(parent.is_dir() for parent in SUPPORT.parents)


@needs_cgroups
def test_every_worker_has_its_limits_and_they_go_with_it(any_sandbox: Sandbox) -> None:
    assert any_sandbox.cgroup == SUPPORT.kind
    config = SandboxConfig(python=PYTHON, workers=2, limits=TEST_LIMITS)
    backend = "local" if any_sandbox.isolation == Isolation.BUBBLEWRAP else "local-rlimit"
    with open_sandbox(config, backend=backend, warn=lambda m: None) as sandbox:
        programs = [checks_program(f"c{i}", "pass") for i in range(4)]
        assert {r.status for r in sandbox.run(programs)} == {"pass"}
        groups = [slot.cgroup for slot in sandbox._slots]  # type: ignore[attr-defined]
        folders = [folder for group in groups for folder in group.folders]
        assert len({folder.name for folder in folders}) == len(groups) == 2
        memory_file = "memory.max" if SUPPORT.kind == "v2" else "memory.limit_in_bytes"
        for group in groups:
            assert int((group.folders[0] / memory_file).read_text()) == MEMORY_MAX_MB * 2**20
            assert int((group.folders[-1] / "pids.max").read_text()) == PIDS_MAX
            assert (group.folders[0] / "cgroup.procs").read_text().split()  # the worker is in
    assert not any(folder.exists() for folder in folders)


_MEMORY_BOMB = """
import os, signal, time
children = []
for _ in range(16):  # 16 x 200 MiB, over the worker's cgroup; each under its own rlimit
    ready_r, ready_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        block = bytearray(200 * 2**20)
        for i in range(0, len(block), 4096):
            block[i] = 1
        os.write(ready_w, b'1')
        time.sleep(60)
        os._exit(0)
    os.close(ready_w)
    children.append((pid, ready_r))
for pid, ready_r in children:
    os.read(ready_r, 1)  # ready, or died before it
for pid, _ in children:
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        pass
deaths = [os.waitpid(pid, 0)[1] for pid, _ in children]
oom_killed = [s for s in deaths if os.WIFSIGNALED(s) and os.WTERMSIG(s) == signal.SIGKILL]
self.assertGreater(len(oom_killed), 0)
"""


@needs_cgroups
@pytest.mark.hostile
@pytest.mark.slow
def test_a_memory_bomb_over_many_processes_is_held(any_sandbox: Sandbox) -> None:
    result = run_one(any_sandbox, checks_program("membomb", _MEMORY_BOMB, timeout_s=60.0))
    assert result.status == "pass", result.details or result.reason
    assert run_one(any_sandbox, checks_program("after", "pass")).status == "pass"


_MAIN_IS_BIGGEST = """
import os, time
go_r, go_w = os.pipe()
for _ in range(10):
    if os.fork() == 0:
        os.read(go_r, 1)
        block = bytearray(150 * 2**20)
        for i in range(0, len(block), 4096):
            block[i] = 1
        time.sleep(60)
        os._exit(0)
mine = bytearray(900 * 2**20)  # the biggest process: the kernel picks it
for i in range(0, len(mine), 4096):
    mine[i] = 1
os.write(go_w, b'x' * 10)
time.sleep(60)
"""


@needs_cgroups
@pytest.mark.hostile
@pytest.mark.slow
def test_a_sample_killed_by_its_cgroup_is_out_of_memory(any_sandbox: Sandbox) -> None:
    result = run_one(any_sandbox, checks_program("oom", _MAIN_IS_BIGGEST, timeout_s=60.0))
    assert result.status != "pass"
    assert result.category == ErrorCategory.OUT_OF_MEMORY, result.reason
    assert f"cgroup limit {MEMORY_MAX_MB} MiB" in result.reason
    assert result.wall_s < 30
    assert run_one(any_sandbox, checks_program("after", "pass")).status == "pass"


_COUNT_PROCESSES = """
import os, time
held = 0
try:
    for _ in range(1000):
        if os.fork() == 0:
            time.sleep(60)
            os._exit(0)
        held += 1
except OSError:
    pass
self.assertLess(held, {bound})
"""


@pytest.mark.hostile
def test_a_sample_cannot_hold_more_processes_than_its_limits(any_sandbox: Sandbox) -> None:
    root_fallback = any_sandbox.isolation == Isolation.RLIMIT and os.geteuid() == 0
    if root_fallback and SUPPORT.kind == "none":
        pytest.skip("not applicable as root without cgroups: RLIMIT_NPROC does not hold root")
    # RLIMIT_NPROC stops it at 64 inside bubblewrap; pids.max for root in the fallback
    body = _COUNT_PROCESSES.format(bound=PIDS_MAX)
    result = run_one(any_sandbox, checks_program("pids", body, timeout_s=30.0))
    assert result.status == "pass", result.details or result.reason
    assert run_one(any_sandbox, checks_program("after", "pass")).status == "pass"


def _fake_hierarchy(root: Path, layout: dict[str, tuple[str, str]]) -> None:
    """A folder tree shaped like a cgroup v2 mount: path -> (controllers, subtree_control)."""
    for path, (controllers, subtree) in layout.items():
        folder = root / path.lstrip("/")
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "cgroup.controllers").write_text(controllers + "\n")
        (folder / "cgroup.subtree_control").write_text(subtree + "\n")


@pytest.mark.parametrize(
    ("layout", "own", "chosen"),
    [
        # a delegated leaf (systemd-run --user -p Delegate=yes): beside it, in its parent
        (
            {"/": ("cpu memory pids", "memory pids"), "/app": ("memory pids", "")},
            "/app",
            "/",
        ),
        # the root of what this process sees (a VM, a container with its own namespace)
        ({"/": ("cpu memory pids", "")}, "/", "/"),
        # controllers already delegated below this process's own cgroup
        ({"/": ("memory pids", "memory pids"), "/a": ("memory pids", "memory pids")}, "/a", "/a"),
        # no memory controller in this hierarchy (a hybrid host's unified mount)
        ({"/": ("hugetlb", "")}, "/", None),
        # a leaf whose parent does not delegate memory and pids
        ({"/": ("memory pids", "cpu"), "/a": ("cpu", "")}, "/a", None),
    ],
    ids=["delegated-leaf", "root", "delegated", "no-controllers", "not-delegated"],
)
def test_where_v2_worker_cgroups_go(
    tmp_path: Path, layout: dict[str, tuple[str, str]], own: str, chosen: str | None
) -> None:
    # this machine may not have a writable v2 hierarchy: the choice of parent is checked on a
    # folder tree of the same shape (the limits themselves are proved above where it has one)
    _fake_hierarchy(tmp_path, layout)
    mount = _mounts(f"30 25 0:26 / {tmp_path} rw - cgroup2 cgroup2 rw\n")[0]
    parent, why = _v2_parent(mount, own)
    if chosen is None:
        assert parent is None and why
    else:
        assert parent == tmp_path / chosen.lstrip("/"), why
