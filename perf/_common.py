"""Shared plumbing for the speed scripts: the dataset, timed runs, machine facts, result files.

The scripts treat both evaluators as black boxes: each is run as a command, timed from launch to
exit, and read back through the files it writes. Only the standard library is used, so the
scripts run under passbench's own virtual environment without pulling in the benchmark's
libraries.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import platform
import re
import resource
import signal
import subprocess
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent
RESULTS_DIR = BENCH_DIR / "results"
DATASET_VERSION = "v0.1.4"


def data_dir() -> Path:
    """PASSBENCH_DATA_DIR, defaulting to the shared datasets beside the repository."""
    return Path(os.environ.get("PASSBENCH_DATA_DIR", REPO_ROOT.parent / "shared" / "datasets"))


def dataset_gz(version: str = DATASET_VERSION) -> Path:
    return data_dir() / "bigcodebench" / f"BigCodeBench-{version}.jsonl.gz"


def load_dataset(version: str = DATASET_VERSION) -> dict[str, dict[str, Any]]:
    """task id -> BigCodeBench row, in dataset order."""
    with gzip.open(dataset_gz(version), "rt", encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle if line.strip()]
    return {row["task_id"]: row for row in rows}


def uncompressed_dataset(version: str = DATASET_VERSION) -> Path:
    """The dataset as plain JSONL, which the official evaluator's override path needs.

    Written once under perf/results/ (git-ignored); the shared data stays read-only.
    """
    target = RESULTS_DIR / "cache" / f"BigCodeBench-{version}.jsonl"
    if not target.is_file():
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_suffix(".partial")
        with gzip.open(dataset_gz(version), "rb") as source:
            partial.write_bytes(source.read())
        partial.replace(target)
    return target


def parse_task_ids(spec: str | None, known: Sequence[str]) -> list[str]:
    """`--tasks` values: comma-separated full ids or numbers, and `a-b` number ranges.

    Returns full ids in dataset order; all of `known` when `spec` is empty.
    """
    if not spec:
        return list(known)
    wanted: set[str] = set()
    for part in (piece.strip() for piece in spec.split(",")):
        if not part:
            continue
        match = re.fullmatch(r"(\d+)-(\d+)", part)
        if match:
            first, last = int(match.group(1)), int(match.group(2))
            wanted.update(f"BigCodeBench/{number}" for number in range(first, last + 1))
        elif part.isdigit():
            wanted.add(f"BigCodeBench/{part}")
        else:
            wanted.add(part)
    unknown = sorted(wanted - set(known))
    if unknown:
        raise SystemExit(f"--tasks: unknown task ids: {', '.join(unknown[:10])}")
    return [task_id for task_id in known if task_id in wanted]


def task_number(task_id: str) -> int:
    return int(task_id.rsplit("/", 1)[1])


# ---------------------------------------------------------------- machine and load


def _busy_and_total_jiffies() -> tuple[int, int]:
    """System-wide CPU time from /proc/stat: (busy, total), in clock ticks."""
    with open("/proc/stat", encoding="ascii") as handle:
        fields = [int(value) for value in handle.readline().split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
    return sum(fields) - idle, sum(fields)


def machine_facts() -> dict[str, Any]:
    cpu_model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                cpu_model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    memory_gib = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return {
        "date_utc": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M:%S"),
        "hostname": platform.node(),
        "cpu_count": os.cpu_count(),
        "cpu_model": cpu_model,
        "memory_gib": round(memory_gib, 1),
        "kernel": platform.release(),
        "loadavg_at_start": list(os.getloadavg()),
    }


# ---------------------------------------------------------------- timed commands


@dataclass
class TimedRun:
    """One command, timed from launch to exit, with the CPU it and its descendants used."""

    name: str
    argv: list[str]
    returncode: int
    wall_s: float
    cpu_s: float  # user + system of the command and all its descendants (see _CpuAccount)
    other_load_cores: float  # average cores busy with work outside this command during the run
    loadavg_before: list[float]
    leaked_processes: int  # descendants still alive after the command exited (killed by pid)
    log_path: str
    extra: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _session_members(session_id: int) -> list[int]:
    """Processes in a session (the command was started as that session's leader)."""
    members: list[int] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text(encoding="ascii", errors="replace")
        except OSError:
            continue
        # fields after the parenthesised command name: state ppid pgrp session ...
        after = stat.rsplit(")", 1)[1].split()
        if len(after) > 3 and int(after[3]) == session_id:
            members.append(int(entry.name))
    return members


CPUACCT_ROOT = Path("/sys/fs/cgroup/cpuacct")


class _CpuAccount:
    """CPU time of a command and everything it starts, however it starts it.

    getrusage(RUSAGE_CHILDREN) only sees descendants that were waited for all the way up; a
    sandbox whose inner processes are killed rather than reaped (bubblewrap's pid 1, say) drops
    their CPU time. A cgroup-v1 `cpuacct` group (pure accounting: no limits, no scheduling
    change) that the command joins before exec counts every descendant. Where no such hierarchy
    is writable, the rusage figure is used and the run says so.
    """

    def __init__(self) -> None:
        self.group: Path | None = None
        if (CPUACCT_ROOT / "cgroup.procs").is_file():
            candidate = CPUACCT_ROOT / f"passbench-bench-{os.getpid()}-{time.monotonic_ns()}"
            try:
                candidate.mkdir()
                self.group = candidate
            except OSError:
                self.group = None
        self._rusage = resource.getrusage(resource.RUSAGE_CHILDREN)

    @property
    def method(self) -> str:
        return "cgroup cpuacct" if self.group else "rusage of waited-for children"

    def join(self) -> None:
        """Runs in the child between fork and exec."""
        if self.group is not None:
            (self.group / "cgroup.procs").write_text(str(os.getpid()), encoding="ascii")

    def members(self) -> list[int]:
        if self.group is None:
            return []
        text = (self.group / "cgroup.procs").read_text(encoding="ascii")
        return [int(line) for line in text.split()]

    def cpu_s(self) -> float:
        if self.group is not None:
            return int((self.group / "cpuacct.usage").read_text(encoding="ascii")) / 1e9
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        return (after.ru_utime - self._rusage.ru_utime) + (after.ru_stime - self._rusage.ru_stime)

    def close(self) -> None:
        if self.group is None:
            return
        for _ in range(50):  # killed members take a moment to leave
            try:
                self.group.rmdir()
                return
            except OSError:
                time.sleep(0.1)


def run_timed(
    name: str,
    argv: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    log_path: Path,
    timeout_s: float | None = None,
) -> TimedRun:
    """Run `argv` in its own session with output to `log_path`; time it; reap what it leaves.

    Output goes to a file, not a pipe, because the official evaluator leaves pool workers behind
    that would hold a pipe open. Descendants still alive after the command exits (same session
    or same accounting cgroup: they are ours) are counted and killed one by one by pid.
    """
    log_path.parent.mkdir(parents=True, exist_ok=True)
    account = _CpuAccount()
    busy_before, total_before = _busy_and_total_jiffies()
    loadavg = list(os.getloadavg())
    started = time.perf_counter()
    try:
        with open(log_path, "wb") as log:
            process = subprocess.Popen(
                list(argv),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=dict(env) if env is not None else None,
                cwd=cwd,
                start_new_session=True,
                preexec_fn=account.join,
            )
            try:
                returncode = process.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                returncode = process.wait()
        wall = time.perf_counter() - started
        busy_after, total_after = _busy_and_total_jiffies()
        leaked = sorted(set(_session_members(process.pid)) | set(account.members()))
        for pid in leaked:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        cpu = account.cpu_s()
    finally:
        account.close()
    ticks = os.sysconf("SC_CLK_TCK")
    cores = os.cpu_count() or 1
    # /proc/stat sums all cores; total/cores ticks elapse per second of wall time
    busy_s = (busy_after - busy_before) / ticks
    elapsed_s = (total_after - total_before) / ticks / cores
    other = max(0.0, busy_s - cpu) / elapsed_s if elapsed_s > 0 else 0.0
    return TimedRun(
        name=name,
        argv=list(argv),
        returncode=returncode,
        wall_s=round(wall, 3),
        cpu_s=round(cpu, 3),
        other_load_cores=round(other, 2),
        loadavg_before=loadavg,
        leaked_processes=len(leaked),
        log_path=str(log_path),
        extra={"cpu_accounting": account.method},
    )


def tail(path: str | Path, lines: int = 15) -> str:
    text = Path(path).read_text(encoding="utf-8", errors="replace")
    return "\n".join(text.splitlines()[-lines:])


# ---------------------------------------------------------------- results


def run_dir(prefix: str) -> Path:
    """A fresh folder for one benchmark run's inputs, logs and outputs."""
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    path = RESULTS_DIR / "runs" / f"{prefix}-{stamp}"
    path.mkdir(parents=True, exist_ok=False)
    return path


def write_result(name: str, payload: Mapping[str, Any]) -> Path:
    """perf/results/<name>.json (latest) and a dated copy beside it."""
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    text = json.dumps(payload, indent=2, sort_keys=False) + "\n"
    latest = RESULTS_DIR / f"{name}.json"
    latest.write_text(text, encoding="utf-8")
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    (RESULTS_DIR / f"{name}-{stamp}.json").write_text(text, encoding="utf-8")
    return latest


def write_jsonl(path: Path, rows: Iterable[Mapping[str, Any]]) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row) + "\n")


def ratio(numerator: float | None, denominator: float | None) -> float | None:
    if numerator is None or denominator is None or denominator <= 0:
        return None
    return round(numerator / denominator, 2)


def harness_cost(
    run: TimedRun, n_samples: int, test_seconds: float, parallelism: int
) -> dict[str, Any]:
    """A run's throughput and its own cost per sample, beyond the tests' own run time.

    overhead_wall_ms: (wall x parallelism - sum of tests' own time) / samples, i.e. worker-time
      per sample not spent inside the tests (startup, process creation, imports, IPC, teardown);
      parallelism = worker processes, capped at the machine's cores.
    overhead_cpu_ms: (CPU of the whole process tree - sum of tests' own time) / samples; immune
      to other load on the machine, but it misses time spent waiting (sleeps, polling, I/O).
    """
    effective = max(1, min(parallelism, os.cpu_count() or 1))
    per_sample = max(n_samples, 1)
    return {
        "samples": n_samples,
        "wall_s": run.wall_s,
        "samples_per_s": round(n_samples / run.wall_s, 2) if run.wall_s > 0 else None,
        "workers": parallelism,
        "effective_parallelism": effective,
        "tests_own_time_s": round(test_seconds, 3),
        "overhead_wall_ms": round((run.wall_s * effective - test_seconds) / per_sample * 1000, 1),
        "cpu_s": run.cpu_s,
        "overhead_cpu_ms": round((run.cpu_s - test_seconds) / per_sample * 1000, 1),
        "other_load_cores": run.other_load_cores,
        "leaked_processes": run.leaked_processes,
        "returncode": run.returncode,
        "cpu_accounting": run.extra.get("cpu_accounting"),
    }


def marginal_cost(full: Mapping[str, Any], small: Mapping[str, Any]) -> dict[str, Any]:
    """Cost per extra sample, from a full run and a tiny run of the same kind: the fixed part
    (interpreter start, imports, worker warm-up, writing results) cancels out."""
    extra_samples = full["samples"] - small["samples"]
    if extra_samples <= 0:
        return {}
    extra_wall = full["wall_s"] - small["wall_s"]
    extra_tests = full["tests_own_time_s"] - small["tests_own_time_s"]
    extra_cpu = full["cpu_s"] - small["cpu_s"]
    parallelism = full["effective_parallelism"]
    return {
        "fixed_startup_wall_s": small["wall_s"],
        "marginal_samples_per_s": round(extra_samples / extra_wall, 2) if extra_wall > 0 else None,
        "marginal_overhead_wall_ms": round(
            (extra_wall * parallelism - extra_tests) / extra_samples * 1000, 1
        ),
        "marginal_overhead_cpu_ms": round((extra_cpu - extra_tests) / extra_samples * 1000, 1),
    }
