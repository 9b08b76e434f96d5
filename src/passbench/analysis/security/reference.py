"""The reference self-check: how much of a prompt set's known-insecure code the tools flag.

The security analogue of the ground-truth pass rate. A prompt set that ships insecure reference
code for each prompt (SALLM's `insecure_code`: the prompt completed with the weakness it
invites) offers it through its benchmark's `insecure_reference(task)`; scanning every reference
says how much of what the benchmark calls insecure these static rules can see at all, which is
the ceiling of any model's measured insecure rate on it:

    passbench security --references --benchmark sallm

`reference_samples` makes the samples (one per task, sample index 0, the benchmark's
`sample_fields` beside the code); `reference_check` reads the scan of them back into figures.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from passbench.analysis.security.scan import SampleScan
from passbench.core.errors import InputError
from passbench.core.records import Task
from passbench.stages.benchmarks import Benchmark, DataSettings, LoadedBenchmark, get_benchmark


def has_references(bench: Benchmark) -> bool:
    return bench.info.has_insecure_references


def reference_samples(bench: Benchmark, tasks: Iterable[Task]) -> list[dict[str, Any]]:
    """One samples-file row per task: its insecure reference as the solution."""
    if not has_references(bench):
        raise InputError(
            f"{bench.info.name} has no insecure references to check (only a prompt set that ships "
            "insecure code per prompt has: sallm)",
            field="benchmark",
        )
    rows = []
    for task in tasks:
        row: dict[str, Any] = {
            "task_id": task.task_id,
            "sample_index": 0,
            "solution": bench.insecure_reference(task) or "",
        }
        row.update(bench.sample_fields(task))
        rows.append(row)
    return rows


def load_references(
    name: str, data: DataSettings | None = None
) -> tuple[LoadedBenchmark, list[dict[str, Any]]]:
    """The benchmark's full task set and its reference samples."""
    bench = get_benchmark(name)
    if not has_references(bench):
        reference_samples(bench, ())  # raises, naming the benchmark
    loaded = bench.load(None, "full", data=data)
    return loaded, reference_samples(bench, loaded.tasks)


@dataclass(frozen=True)
class GroupFigure:
    name: str  # a subset of the benchmark ("tainted"), or "full"
    flagged: int
    total: int


@dataclass(frozen=True)
class ReferenceCheck:
    """How many references the tools flag: any tool, each tool, with the prompt's own CWE."""

    benchmark: str
    total: int
    flagged: int  # any finding of any tool
    by_tool: Mapping[str, int]  # references with a finding of that tool
    own_cwe: int  # references with a finding of the CWE the prompt names (cwe_identifier)
    by_subset: tuple[GroupFigure, ...]
    missed: tuple[str, ...]  # task ids no tool flags

    def to_json(self) -> dict[str, Any]:
        return {
            "benchmark": self.benchmark,
            "total": self.total,
            "flagged": self.flagged,
            "by_tool": dict(self.by_tool),
            "own_cwe": self.own_cwe,
            "by_subset": {g.name: {"flagged": g.flagged, "total": g.total} for g in self.by_subset},
            "missed": list(self.missed),
        }


def reference_check(
    bench: Benchmark,
    loaded: LoadedBenchmark,
    scans: Sequence[SampleScan],
    data: DataSettings | None = None,
) -> ReferenceCheck:
    """The figures of a scan of `reference_samples(bench, loaded.tasks)`."""
    by_id = {scan.task_id: scan for scan in scans}
    tasks = {task.task_id: task for task in loaded.tasks}
    missing = sorted(set(tasks) - set(by_id))
    if missing:
        raise InputError(
            f"the scan has no result for {len(missing)} references ({missing[0]}, ...)"
        )
    flagged = {task_id for task_id, scan in by_id.items() if scan.insecure and task_id in tasks}
    tools = sorted({finding.tool for scan in scans for finding in scan.findings})
    by_tool = {
        tool: sum(1 for t in tasks if any(f.tool == tool for f in by_id[t].findings))
        for tool in tools
    }
    own = sum(
        1
        for task_id, task in tasks.items()
        if any(f.cwe == task.metadata.get("cwe_identifier") for f in by_id[task_id].findings)
    )
    subsets = []
    for subset in bench.info.subsets:
        if subset == "full":
            continue
        ids = {task.task_id for task in bench.load(None, subset, data=data).tasks}
        subsets.append(GroupFigure(subset, len(ids & flagged), len(ids)))
    return ReferenceCheck(
        benchmark=bench.info.name,
        total=len(tasks),
        flagged=len(flagged),
        by_tool=by_tool,
        own_cwe=own,
        by_subset=tuple(subsets),
        missed=tuple(task_id for task_id in tasks if task_id not in flagged),
    )
