"""Benchmarks: the Benchmark protocol, a registry of lazy factories, and benchmark data.

    bench = get_benchmark("bigcodebench")
    loaded = bench.load("v0.1.4", "hard", data=DataSettings.from_env(os.environ))
    program = bench.program(task, bench.canonical_code(task), key="...", timeout_s=240)

or, in one call, `load_benchmark("bigcodebench", subset="hard", data_dir=...)`.
Each benchmark module is imported only when its name is asked for.

Third-party benchmarks register through the entry-point group `passbench.benchmarks`
(`name = "module:Class"`), read when the names are first needed and merged after the built-ins;
a third-party entry cannot replace a built-in name: the built-in wins, and a `UserWarning`
names the ignored entry point (so does `ignored_entry_points`). docs/writing-a-benchmark.md
says what such a class provides.
"""

from __future__ import annotations

import importlib
import warnings
from importlib.metadata import entry_points
from pathlib import Path

from passbench.core.progress import Progress
from passbench.core.records import Task
from passbench.stages.benchmarks.base import (
    Benchmark,
    BenchmarkBase,
    DifferentialBenchmark,
    LoadedBenchmark,
    Phase,
    TaskId,
    check_executable,
    check_split,
    check_subset,
    check_version,
    require_name,
)
from passbench.stages.benchmarks.data import DataSettings, ResolvedFile
from passbench.stages.benchmarks.prompting import PromptStyle

# registry name -> "module:class"; the class is instantiated with no arguments
_FACTORIES: dict[str, str] = {
    "bigcodebench": "passbench.stages.benchmarks.bigcodebench:BigCodeBench",
    "humaneval": "passbench.stages.benchmarks.humaneval:HumanEval",
    "humanevalplus": "passbench.stages.benchmarks.humaneval:HumanEvalPlus",
    "humaneval-openai": "passbench.stages.benchmarks.humaneval:HumanEvalOpenAI",
    # MultiPL-E: one name per language (benchmarks/multiple.py holds the language table)
    "multipl-e-js": "passbench.stages.benchmarks.multiple:MultiPLEJavaScript",
    "multipl-e-cpp": "passbench.stages.benchmarks.multiple:MultiPLECpp",
    "multipl-e-java": "passbench.stages.benchmarks.multiple:MultiPLEJava",
    "multipl-e-rs": "passbench.stages.benchmarks.multiple:MultiPLERust",
    "multipl-e-lua": "passbench.stages.benchmarks.multiple:MultiPLELua",
    "mbpp": "passbench.stages.benchmarks.mbpp:Mbpp",
    "mbppplus": "passbench.stages.benchmarks.mbpp:MbppPlus",
    "livecodebench": "passbench.stages.benchmarks.livecodebench:LiveCodeBench",
    # prompt sets without tests, scored by `passbench security`
    "cyberseceval-instruct": "passbench.stages.benchmarks.cyberseceval:CyberSecEvalInstruct",
    "sallm": "passbench.stages.benchmarks.sallm:SALLM",
    "cweval": "passbench.stages.benchmarks.cweval:CWEval",
}


#: The entry-point group third-party benchmarks register in (name -> "module:Class").
ENTRY_POINT_GROUP = "passbench.benchmarks"
#: The benchmark commands use when none is named: the first built-in.
DEFAULT_BENCHMARK = next(iter(_FACTORIES))


def _entry_points() -> list[tuple[str, str]]:
    """(name, "module:Class") of every installed `passbench.benchmarks` entry point, in the
    order importlib.metadata finds them (the first of two with one name wins)."""
    return [(point.name, point.value) for point in entry_points(group=ENTRY_POINT_GROUP)]


def _factories() -> dict[str, str]:
    """The built-ins, then the installed entry points whose names are not taken."""
    factories = dict(_FACTORIES)
    for name, target in _entry_points():
        if name in _FACTORIES:
            warnings.warn(
                f"entry point '{name} = {target}' ({ENTRY_POINT_GROUP}) ignored: '{name}' is a "
                "built-in benchmark; register it under another name",
                stacklevel=3,
            )
        factories.setdefault(name, target)
    return factories


def ignored_entry_points() -> tuple[str, ...]:
    """Entry points that name a built-in benchmark ("name = module:Class"): the built-in is
    used instead."""
    return tuple(f"{name} = {target}" for name, target in _entry_points() if name in _FACTORIES)


def benchmark_names() -> tuple[str, ...]:
    """Registry names: the built-ins in the order they are documented, then third-party ones."""
    return tuple(_factories())


def benchmark_language(name: str | None) -> str:
    """The language a benchmark's programs are written in, as reports show it: the MultiPL-E
    language's title ("JavaScript", "C++", ...) for `multipl-e-*`, "Python" for the others
    (and for results that do not name their benchmark: every official file is Python's)."""
    if name and name.startswith("multipl-e-"):
        from passbench.stages.benchmarks.multiple import LANGUAGES

        language = LANGUAGES.get(name.removeprefix("multipl-e-"))
        if language is not None:
            return language.title
    return "Python"


def task_language(task: Task) -> str:
    """The language of one task's code, as reports show it: the benchmark's `language_of(task)`
    where its tasks differ (CyberSecEval's prompts), else `benchmark_language`."""
    language_of = getattr(get_benchmark(task.benchmark), "language_of", None)
    if language_of is not None:
        return str(language_of(task))
    return benchmark_language(task.benchmark)


def get_benchmark(name: str) -> Benchmark:
    """The benchmark registered as `name`; UnknownNameError listing the valid names otherwise."""
    target = _FACTORIES.get(name)  # a built-in needs no look at the installed packages
    if target is None:
        factories = _factories()
        require_name("benchmark", name, tuple(factories), field="benchmark")
        target = factories[name]
    module_name, _, attribute = target.partition(":")
    factory = getattr(importlib.import_module(module_name), attribute)
    benchmark: Benchmark = factory()
    return benchmark


def load_benchmark(
    name: str,
    *,
    version: str | None = None,
    subset: str = "full",
    dataset_path: Path | None = None,
    data_dir: Path | None = None,
    cache_dir: Path | None = None,
    mirror: str | None = None,
    download: bool = True,
    progress: Progress | None = None,
) -> LoadedBenchmark:
    """`get_benchmark(name).load(version, subset)` with the data settings spelled out.

    `cache_dir` is passbench's cache folder (data goes in its `datasets/`); None: the user
    cache. See `DataSettings` for the other fields and `data.resolve` for the search order.
    """
    data = DataSettings(
        dataset_path=dataset_path,
        data_dir=data_dir,
        cache_dir=cache_dir,
        mirror=mirror,
        download=download,
    )
    return get_benchmark(name).load(version, subset, data=data, progress=progress)


__all__ = [
    "DEFAULT_BENCHMARK",
    "ENTRY_POINT_GROUP",
    "Benchmark",
    "BenchmarkBase",
    "DataSettings",
    "DifferentialBenchmark",
    "LoadedBenchmark",
    "Phase",
    "PromptStyle",
    "ResolvedFile",
    "TaskId",
    "benchmark_language",
    "benchmark_names",
    "check_executable",
    "check_split",
    "check_subset",
    "check_version",
    "get_benchmark",
    "ignored_entry_points",
    "load_benchmark",
    "task_language",
]
