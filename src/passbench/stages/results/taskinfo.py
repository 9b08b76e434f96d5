"""The benchmark tasks a result file is about: libraries, canonical solution, test code, Hard ids.

Reports use them for the per-library / per-domain breakdowns and the per-task detail. They come
from the benchmark registry, never from the network (inspecting stored results stays offline:
the data is found in the data folder or passbench's cache, where `evaluate` put it). Reports
work without tasks too: they then leave out what needs them and say why.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from passbench.core.errors import DatasetError, UnknownNameError
from passbench.core.records import Task
from passbench.stages.benchmarks import DataSettings, benchmark_names, get_benchmark


@dataclass(frozen=True)
class TaskCatalog:
    """Tasks by id, the ids of the Hard subset, and where they came from."""

    tasks: Mapping[str, Task] = field(default_factory=dict)
    hard_ids: frozenset[str] = frozenset()
    canonical: Mapping[str, str] = field(default_factory=dict)  # task id -> whole program
    version: str | None = None
    sha256: str | None = None  # of the task file, to check against the run's dataset_sha256
    source: str = ""  # the task file, or "" when nothing could be loaded
    note: str = ""  # why tasks are missing, for the report to say


def load_catalog(
    benchmark: str | None, version: str | None, data: DataSettings | None = None
) -> TaskCatalog:
    """Load `benchmark`'s tasks (`version` None: its default), without downloading anything."""
    if benchmark is None:
        return TaskCatalog(
            note="unknown benchmark: task ids are neither BigCodeBench nor HumanEval"
        )
    if benchmark not in benchmark_names():
        return TaskCatalog(note=f"no benchmark named {benchmark!r} is registered")
    data = replace(data or DataSettings(), download=False)
    loader = get_benchmark(benchmark)
    try:
        loaded = loader.load(version, "full", data=data)
        hard: frozenset[str] = frozenset()
        if "hard" in loader.info.subsets:
            hard = frozenset(task.task_id for task in loader.load(version, "hard", data=data))
    except (DatasetError, UnknownNameError) as error:
        return TaskCatalog(note=f"{benchmark} {version or ''} data not available offline ({error})")
    return TaskCatalog(
        tasks={task.task_id: task for task in loaded},
        hard_ids=hard,
        # MultiPL-E and LiveCodeBench have no reference solutions: nothing to show
        canonical=(
            {task.task_id: loader.canonical_code(task) for task in loaded}
            if loader.info.has_reference
            else {}
        ),
        version=loaded.version,
        sha256=loaded.sha256,
        source=str(loaded.source.path),
    )
