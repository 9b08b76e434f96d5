"""The host's handle on one warm worker: start it, send it work, read its messages, kill it.

Messages are length-prefixed JSON frames over two pipes (see _runner.py). Reading is
non-blocking, so one selector loop can watch every worker at once.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from passbench.core.errors import SandboxError
from passbench.stages.sandbox.host.cgroups import WorkerCgroup
from passbench.stages.sandbox.host.launch import Launcher
from passbench.stages.sandbox.inside import _frames


class WorkerHandle:
    """One worker process. States: starting -> idle <-> busy -> dead; busy -> spent (served
    its share of programs, local.py's recycle_after: idle, but given nothing more) -> dead."""

    def __init__(
        self,
        launcher: Launcher,
        slot: int,
        preload: tuple[str, ...],
        log_dir: Path,
        make_cgroup: Callable[[int], WorkerCgroup] | None = None,
    ):
        self.launcher = launcher
        self.make_cgroup = make_cgroup  # each start gets a fresh cgroup, when there are any
        self.cgroup: WorkerCgroup | None = None
        self.oom_seen = 0  # the cgroup's OOM kills already accounted for
        self.slot = slot
        self.preload = preload
        self.log_path = log_dir / f"worker-{slot}.log"
        self.state = "dead"
        self.served = 0
        self.ready_info: dict[str, Any] = {}
        self.process: subprocess.Popen[bytes] | None = None
        self.cmd_w = -1
        self.msg_r = -1
        self._frames = _frames.FrameReader()
        self.started_at = 0.0

    def start(self) -> None:
        cmd_r, cmd_w = os.pipe()
        msg_r, msg_w = os.pipe()
        launch = self.launcher.launch(cmd_r, msg_w, self.slot)
        argv = launch.argv
        self.oom_seen = 0
        if self.make_cgroup is not None:
            try:
                self.cgroup = self.make_cgroup(self.slot)
            except OSError as error:
                for fd in (cmd_r, cmd_w, msg_r, msg_w):
                    os.close(fd)
                launch.started()
                raise SandboxError(f"cannot create a worker's cgroup: {error}") from error
            argv = self.cgroup.wrap(argv)
        with open(self.log_path, "ab") as log:
            try:
                self.process = subprocess.Popen(
                    argv,
                    env=launch.env,
                    cwd=launch.cwd,
                    pass_fds=launch.pass_fds,
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    stderr=log,
                    start_new_session=True,
                )
            except OSError as error:
                for fd in (cmd_r, cmd_w, msg_r, msg_w):
                    os.close(fd)
                launch.started()
                raise SandboxError(f"cannot start a sandbox worker: {error}") from error
        launch.started()
        os.close(cmd_r)
        os.close(msg_w)
        os.set_blocking(msg_r, False)
        self.cmd_w, self.msg_r = cmd_w, msg_r
        self._frames = _frames.FrameReader()
        self.served = 0
        self.state = "starting"
        self.started_at = time.monotonic()
        self.send(
            {
                "type": "init",
                "namespaced": launch.namespaced,
                "scratch": list(launch.scratch),
                "measured": list(launch.measured),
                "preload": list(self.preload),
            }
        )

    def send(self, message: dict[str, Any]) -> None:
        payload = memoryview(_frames.encode(message))
        try:
            # Blocking is fine: an idle worker is always reading its command pipe.
            while payload:
                payload = payload[os.write(self.cmd_w, payload) :]
        except OSError:
            # the worker is gone; its message pipe reports that (EOF) to the selector loop,
            # which handles the death in one place
            pass

    def fileno(self) -> int:
        return self.msg_r

    def receive(self) -> tuple[list[dict[str, Any]], bool]:
        """Messages that have arrived, and whether the worker's end is closed."""
        closed = False
        received = bytearray()
        while True:
            try:
                chunk = os.read(self.msg_r, 1 << 20)
            except BlockingIOError:
                break
            except OSError:
                closed = True
                break
            if not chunk:
                closed = True
                break
            received += chunk
        try:
            messages = self._frames.feed(bytes(received))
        except ValueError:  # not frames of JSON objects: the worker is broken, treat it as gone
            messages, closed = [], True
        return messages, closed

    def log_tail(self, limit: int = 2000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-limit:].strip()
        except OSError:
            return ""

    def stop(self, wait_s: float = 2.0) -> None:
        """Ask the worker to exit, then make sure it (and its whole sandbox) is gone."""
        # a spent worker (served its share of programs, local.py) is idle as well
        idle = self.state in ("idle", "spent")
        if self.process is not None and self.process.poll() is None and idle:
            self.send({"type": "exit"})
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(wait_s)
        self.kill()

    def kill(self) -> None:
        if self.process is not None:
            if self.process.poll() is None:
                for pid in _descendants(self.process.pid):
                    # what a fallback sample started, even detached from the worker's session
                    # (inside bubblewrap the pid namespace dies with the worker anyway)
                    with contextlib.suppress(OSError):
                        os.kill(pid, 9)
                # the worker's own session: bwrap (and with it the whole pid namespace), or the
                # fallback worker and what is left in its process group
                with contextlib.suppress(OSError):
                    os.killpg(self.process.pid, 9)
                with contextlib.suppress(OSError):
                    self.process.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(5)
        for fd in (self.cmd_w, self.msg_r):
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self.cmd_w = self.msg_r = -1
        self.process = None
        self.state = "dead"
        if self.cgroup is not None:
            self.cgroup.remove()
            self.cgroup = None

    def new_oom_kills(self) -> int:
        """OOM kills in this worker's cgroup since the last call (0 without a cgroup)."""
        if self.cgroup is None:
            return 0
        count = self.cgroup.oom_kills()
        new, self.oom_seen = count - self.oom_seen, count
        return new


def _descendants(root: int) -> list[int]:
    """Every process below `root` in the host's process tree."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as f:
                    ppid = int(f.read().rsplit(b")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry))
    found: list[int] = []
    todo = list(children.get(root, []))
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, []))
    return found
