"""The `local` sandbox backend: warm workers in bubblewrap on this machine.

Scheduling: the slowest programs (by expected duration) start first; a new sample is admitted
while fewer than `cores` running samples are actually using CPU (measured by the workers from
/proc), so tests that sleep or wait overlap with ones that compute, up to a cap on concurrent
samples derived from the cores and the memory limits. Where an earlier run says how much CPU
a program uses (`Program.expected_cpu_share`, from the ground truth), more rules (`pick`): with
automatic workers, programs known to wait get a waiting room of slots of their own beyond the
concurrency (`waiting_room`), so they overlap the computing work without taking its slots;
otherwise a program known to wait takes a free slot even while the cores are busy. Long
computing programs are spread: one is not started while those already running would fill the
cores with it (a shorter program goes ahead of it), so they do not all start at once and
stretch each other.
"""

from __future__ import annotations

import os
import secrets
import select
import shutil
import tempfile
import threading
import time
import warnings
import weakref
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from passbench.core.errors import SandboxError
from passbench.core.records import ErrorCategory, ExecResult, Isolation, Program
from passbench.stages.sandbox import verdict
from passbench.stages.sandbox.base import (
    WAITING_CPU_SHARE,
    Limits,
    SandboxConfig,
    expected_to_wait,
)
from passbench.stages.sandbox.host import cgroups
from passbench.stages.sandbox.host.isolation import choose_launcher
from passbench.stages.sandbox.host.launch import SHM_MB
from passbench.stages.sandbox.host.repositories import run_repository_program
from passbench.stages.sandbox.host.workdirs import ScratchFolders
from passbench.stages.sandbox.host.worker import WorkerHandle

WarnCallback = Callable[[str], None]

GRACE_S = 1.0  # the official evaluator joins the process `timeout + 1` seconds
HOST_GRACE_S = 15.0  # beyond that a worker that does not answer is killed
START_TIMEOUT_S = 300.0  # preloading tensorflow on a busy machine is slow
_BUSY_CPU_FRACTION = WAITING_CPU_SHARE  # a sample using at least this much of a core computes
#: a program expected to use this many CPU seconds or more is long computing work, spread
#: over the run (shorter ones are hidden by the ordinary spread of programs over the workers)
LONG_CPU_S = 8.0
_MEMORY_SHARE = 0.8  # share of the host's memory the concurrent samples may reserve
_UNITTEST_PRELOAD = ("matplotlib.pyplot",)  # the official harness imports it for every sample


def usable_cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def host_memory_mb() -> int:
    return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2**20)


def auto_concurrency(limits: Limits, cores: int, memory_mb: int) -> int:
    """Concurrent samples when `workers` is 0: twice the cores (half of them may be waiting),
    but never more than the host's memory can hold if every sample used its whole limit."""
    per_sample = limits.memory_mb + limits.tmp_mb + SHM_MB
    by_memory = int(memory_mb * _MEMORY_SHARE) // max(1, per_sample)
    return max(1, min(2 * cores, by_memory))


def schedule(programs: Iterable[Program]) -> list[Program]:
    """Slowest first (by expected duration); programs without an estimate keep their order
    after those with one."""
    listed = list(programs)
    return sorted(listed, key=lambda p: -(p.expected_duration_s or 0.0))


def long_computing(program: Program) -> bool:
    """Known from an earlier run to compute (not wait), for LONG_CPU_S of one core or more."""
    share, duration = program.expected_cpu_share, program.expected_duration_s
    if share is None or duration is None or share < WAITING_CPU_SHARE:
        return False
    return min(share, 1.0) * duration >= LONG_CPU_S


def _cores_taken(program: Program, cores: int) -> float:
    return min(float(cores), program.expected_cpu_share or 1.0)


def pick(
    pending: Sequence[Program],
    running: Iterable[Program],
    cores: int,
    cores_busy: bool,
    *,
    concurrency: int | None = None,
    waiting_room: int = 0,
) -> int | None:
    """The index in `pending` (longest first) of the program to start in a free slot, or None.

    - `waiting_room` slots beyond the `concurrency` ones (None: no cap) are kept for programs
      known to wait: while one is free, the longest such program takes it. Those programs do
      not then take the other slots while anything else is pending, so a run's many waiting
      test methods (BigCodeBench/461, 1104, 1040, 195) cannot fill every slot and leave the
      cores idle.
    - The cores busy: only a program known to wait (the longest such), which overlaps its wait
      with the computing ones.
    - Else the first program, unless it is long computing work and the long computing programs
      running would, with it, need more than the cores (by their expected shares of a core,
      half a core of slack for the estimates): then the first program that is not, so long
      computing programs start one after another while the rest fill in around them."""
    running = list(running)
    waiting = sum(expected_to_wait(p) for p in running)
    first_waiting = next((i for i, p in enumerate(pending) if expected_to_wait(p)), None)
    if waiting < waiting_room and first_waiting is not None:
        return first_waiting
    if concurrency is not None and len(running) - min(waiting, waiting_room) >= concurrency:
        return None
    if waiting_room and all(expected_to_wait(p) for p in pending):
        return 0 if pending else None  # the end of the run: nothing else needs the slots
    if cores_busy:
        return None if waiting_room else first_waiting
    load = sum(_cores_taken(p, cores) for p in running if long_computing(p))
    for index, program in enumerate(pending):
        if waiting_room and expected_to_wait(program):
            continue  # it waits for a slot of the waiting room
        if not long_computing(program):
            return index
        if load == 0 or load + _cores_taken(program, cores) <= cores + WAITING_CPU_SHARE:
            return index
    return None


def waiting_room(programs: Sequence[Program], concurrency: int, workers: int) -> int:
    """Slots beyond the concurrency for the programs an earlier run measured waiting (the
    ground truth's; samples have no such measurement): as many as the concurrency, fewer if
    the run has fewer such programs, none when the workers were set by hand (they are then
    the whole count)."""
    if workers:
        return 0
    return min(concurrency, sum(expected_to_wait(p) for p in programs))


@dataclass
class _Job:
    program: Program
    dispatched: float
    cpu_at: float
    cpu_s: float = 0.0
    cpu_rate: float | None = None

    def computing(self) -> bool:
        if self.cpu_rate is None:  # not measured yet (the first report comes after 0.25 s)
            return not expected_to_wait(self.program)
        return self.cpu_rate >= _BUSY_CPU_FRACTION


class LocalSandbox:
    """Runs programs in warm workers on this machine (bubblewrap, or the rlimit fallback)."""

    def __init__(
        self,
        config: SandboxConfig,
        warn: WarnCallback | None = None,
        *,
        force_fallback: bool = False,
    ) -> None:
        self.config = config
        self._warn = warn or _warn_default
        self._private = Path(tempfile.mkdtemp(prefix="passbench-sandbox-"))
        # removed by close(); also when the sandbox is garbage-collected or Python exits unclosed
        self._cleanup = weakref.finalize(self, shutil.rmtree, self._private, ignore_errors=True)
        self._scratch = ScratchFolders(config.scratch_dir)
        try:
            self._launcher = choose_launcher(
                config, self._private, self._scratch, force_fallback, self._warn
            )
        except BaseException:
            self._scratch.close()
            shutil.rmtree(self._private, ignore_errors=True)
            raise
        # one cgroup per worker where the host allows it (cgroups.py); "none" otherwise
        self._cgroups = cgroups.detect()
        cgroups.sweep(self._cgroups)
        self.cores = usable_cores()
        self.concurrency = config.workers or auto_concurrency(
            config.limits, self.cores, host_memory_mb()
        )
        self._waiting_room = 0  # slots for programs known to wait, set per run (`waiting_room`)
        self._slots: list[WorkerHandle] = []
        self._preload: tuple[str, ...] = ()
        self._requested: set[str] = set()  # modules programs asked to preload
        self._warned: set[str] = set()
        # set from another thread to abandon a run at once (a server whose client went away)
        self._cancelled = threading.Event()

    @property
    def _network(self) -> bool:
        return self.config.limits.allow_network

    @property
    def isolation(self) -> Isolation:
        return self._launcher.isolation

    @property
    def cgroup(self) -> str:
        """How workers are capped as a whole: "v2", "v1" or "none" (rlimits only)."""
        return self._cgroups.kind

    def _cgroup_memory_mb(self) -> int:
        """memory.max of a worker: the sample's own limit, the worker's libraries, /dev/shm."""
        return self.config.limits.memory_mb + cgroups.WORKER_MEMORY_MB + SHM_MB

    def _make_cgroup(self, slot: int) -> cgroups.WorkerCgroup:
        return cgroups.WorkerCgroup(
            self._cgroups,
            # unique across this process's sandboxes; the pid lets `sweep` find leftovers
            f"passbench-{os.getpid()}-{secrets.token_hex(6)}-w{slot}",
            memory_mb=self._cgroup_memory_mb(),
            pids=self.config.limits.processes + cgroups.WORKER_PIDS,
        )

    def __enter__(self) -> LocalSandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def cancel(self) -> None:
        """Abandon the current run from another thread: within 0.05 s `run` stops, the samples
        it was running are killed with their sandboxes, and no more results come."""
        self._cancelled.set()

    def close(self) -> None:
        for slot in self._slots:
            slot.stop()
        self._slots.clear()
        self._scratch.close()
        self._cleanup()

    # ---- workers

    def _prepare(self, programs: list[Program]) -> None:
        wanted = set(self._preload)
        for program in programs:
            wanted.update(program.preload)
            self._requested.update(program.preload)
            if program.style == "unittest":
                wanted.update(_UNITTEST_PRELOAD)
        preload = tuple(sorted(wanted))
        self._waiting_room = (
            waiting_room(programs, self.concurrency, self.config.workers)
            if self.config.waiting_room
            else 0
        )
        count = min(self.concurrency + self._waiting_room, len(programs))
        if preload != self._preload:
            for slot in self._slots:  # new modules to preload: fresh workers
                slot.stop()
            self._slots.clear()
            self._preload = preload
        while len(self._slots) < count:
            self._slots.append(
                WorkerHandle(
                    self._launcher,
                    len(self._slots),
                    self._preload,
                    self._private,
                    self._make_cgroup if self._cgroups.kind != "none" else None,
                )
            )
        for slot in self._slots:
            if slot.state == "dead":
                slot.start()

    def _restart(self, slot: WorkerHandle) -> None:
        slot.kill()
        slot.start()

    # ---- running

    def run(self, programs: Iterable[Program]) -> Iterator[ExecResult]:
        listed = list(programs)
        repository = [program for program in listed if program.style == "repository"]
        queue = schedule(program for program in listed if program.style != "repository")
        if repository:
            yield from self._run_repositories(repository)
        if not queue:
            return
        self._prepare(queue)
        pending = deque(queue)
        jobs: dict[int, _Job] = {}
        try:
            while (pending or jobs) and not self._cancelled.is_set():
                self._admit(pending, jobs)
                finished = self._step(jobs)
                yield from finished
        finally:
            for slot_index in list(jobs):
                # abandoned mid-sample (the caller stopped iterating): that sandbox is discarded
                self._slots[slot_index].kill()

    def _run_repositories(self, programs: list[Program]) -> Iterator[ExecResult]:
        """Repository programs (SWE-bench), each a one-shot sandbox of its own, one per core
        at a time (their tests compute; their memory is capped per run)."""
        workers = max(1, min(self.cores, self.config.workers or self.cores, len(programs)))
        with ThreadPoolExecutor(workers, thread_name_prefix="passbench-repository") as pool:
            pending = {
                pool.submit(run_repository_program, program, self.config)
                for program in schedule(programs)
            }
            try:
                while pending and not self._cancelled.is_set():
                    done, pending = wait(pending, timeout=0.05, return_when=FIRST_COMPLETED)
                    for future in done:
                        yield future.result()
            finally:
                for future in pending:
                    future.cancel()

    def _admit(self, pending: deque[Program], jobs: dict[int, _Job]) -> None:
        self._replace_spent(len(pending))
        now = time.monotonic()
        computing = sum(job.computing() for job in jobs.values())
        for slot in self._slots:
            if not pending or len(jobs) >= self.concurrency + self._waiting_room:
                return
            if slot.state != "idle":
                continue
            running = [job.program for job in jobs.values()]
            index = pick(
                pending,
                running,
                self.cores,
                cores_busy=computing >= self.cores,
                concurrency=self.concurrency,
                waiting_room=self._waiting_room,
            )
            if index is None:
                return
            program = pending[index]
            del pending[index]
            slot.send(_run_message(program, self.config.limits))
            slot.state = "busy"
            job = jobs[slot.slot] = _Job(program, dispatched=now, cpu_at=now)
            computing += job.computing()

    def _replace_spent(self, pending: int) -> None:
        """Replace workers that served `recycle_after` programs only when programs are left
        for them: the ones still idle or starting take the first, so the last programs of a
        run restart no worker that nothing would use (a worker starting while the last
        programs run takes their CPU)."""
        ready = sum(slot.state in ("idle", "starting") for slot in self._slots)
        for slot in self._slots:
            if ready >= pending:
                return
            if slot.state == "spent":
                self._restart(slot)
                ready += 1

    def _step(self, jobs: dict[int, _Job]) -> list[ExecResult]:
        """Wait a little for worker messages; handle them and every deadline."""
        watched = [s for s in self._slots if s.state in ("starting", "idle", "busy", "spent")]
        if not watched:
            raise SandboxError("no sandbox worker is running")
        timeout = 0.05 if jobs else 0.5
        try:
            ready, _, _ = select.select(watched, [], [], timeout)
        except InterruptedError:  # pragma: no cover - PEP 475 retries; kept for old kernels
            ready = []
        results: list[ExecResult] = []
        for slot in ready:
            messages, closed = slot.receive()
            for message in messages:
                result = self._handle(slot, message, jobs)
                if result is not None:
                    results.append(result)
            if closed:
                results += self._worker_lost(slot, jobs)
        results += self._check_deadlines(jobs)
        return results

    def _handle(
        self, slot: WorkerHandle, message: dict[str, Any], jobs: dict[int, _Job]
    ) -> ExecResult | None:
        kind = message.get("type")
        now = time.monotonic()
        if kind == "ready":
            slot.state = "idle"
            slot.ready_info = message
            self._warn_failed_preloads(dict(message.get("failed") or {}))
            return None
        job = jobs.get(slot.slot)
        if job is None or message.get("key") != job.program.key:
            return None
        if kind == "cpu":
            cpu_s = float(message.get("cpu_s", 0.0))
            if now > job.cpu_at:
                job.cpu_rate = (cpu_s - job.cpu_s) / (now - job.cpu_at)
            job.cpu_at, job.cpu_s = now, cpu_s
            return None
        if kind != "result":
            return None
        del jobs[slot.slot]
        result = verdict.exec_result(
            job.program, message, self.isolation, now - job.dispatched, self._network
        )
        result = self._out_of_memory(slot, result)
        slot.served += 1
        # a worker that served its share runs nothing more; replaced when work is left for it
        slot.state = "spent" if slot.served >= self.config.recycle_after else "idle"
        return result

    def _out_of_memory(
        self, slot: WorkerHandle, result: ExecResult, ooms: int | None = None
    ) -> ExecResult:
        """A sample killed by the kernel because its worker's cgroup ran out of memory says
        so (a bare SIGKILL would read as "killed")."""
        new = slot.new_oom_kills() if ooms is None else ooms
        if not new or result.category is not ErrorCategory.KILLED:
            return result
        reason = (
            f"killed by the kernel: its processes together used up the worker's memory "
            f"(cgroup limit {self._cgroup_memory_mb()} MiB)"
        )
        return replace(result, category=ErrorCategory.OUT_OF_MEMORY, reason=reason)

    def _warn_failed_preloads(self, failed: dict[str, str]) -> None:
        """Say once which requested modules the evaluation environment cannot import: every
        sample that needs them will fail, so it is probably an incomplete environment."""
        for name, error in sorted(failed.items()):
            if name in self._requested and name not in self._warned:
                self._warned.add(name)
                self._warn(f"the evaluation environment cannot import {name}: {error}")

    def _worker_lost(self, slot: WorkerHandle, jobs: dict[int, _Job]) -> list[ExecResult]:
        state = slot.state
        log = slot.log_tail()
        ooms = slot.new_oom_kills()  # before its cgroup goes with it
        slot.kill()
        if state == "starting":
            raise SandboxError(
                f"a sandbox worker failed to start ({self.config.python}): {log or 'no output'}"
            )
        results = []
        job = jobs.pop(slot.slot, None)
        if job is not None:
            wall = time.monotonic() - job.dispatched
            lost = verdict.lost(
                job.program,
                self.isolation,
                wall,
                "the sandbox worker died while running this sample",
                ErrorCategory.KILLED,
                self._network,
            )
            results.append(self._out_of_memory(slot, lost, ooms))
        slot.start()
        return results

    def _check_deadlines(self, jobs: dict[int, _Job]) -> list[ExecResult]:
        now = time.monotonic()
        results = []
        for slot in self._slots:
            if slot.state == "starting" and now - slot.started_at > START_TIMEOUT_S:
                log = slot.log_tail()
                slot.kill()
                raise SandboxError(
                    f"a sandbox worker did not become ready in {START_TIMEOUT_S:g}s: {log}"
                )
            job = jobs.get(slot.slot)
            if job is None:
                continue
            limit = job.program.timeout_s + GRACE_S + HOST_GRACE_S
            if now - job.dispatched > limit:
                del jobs[slot.slot]
                self._restart(slot)
                results.append(
                    verdict.lost(
                        job.program,
                        self.isolation,
                        now - job.dispatched,
                        f"the sandbox stopped answering after {limit:g}s; killed",
                        ErrorCategory.TIMEOUT,
                        self._network,
                    )
                )
        return results


def _run_message(program: Program, limits: Limits) -> dict[str, Any]:
    message: dict[str, Any] = {
        "type": "run",
        "key": program.key,
        "source": program.source,
        "style": program.style,
        "test_class": program.test_class,
        "timeout_s": program.timeout_s,
        "grace_s": GRACE_S,
        "limits": asdict(limits),
    }
    if program.io is not None:
        message.update(
            entry_point=program.io.entry_point,
            inputs_json=program.io.inputs_json,
            time_limits=list(program.io.time_limits),
            want_values=list(program.io.want_values),
            guard=program.io.guard,
            reference=program.io.reference,
        )
    if program.process is not None:
        message["process"] = asdict(program.process)
    return message


def _warn_default(message: str) -> None:
    warnings.warn(message, RuntimeWarning, stacklevel=3)
