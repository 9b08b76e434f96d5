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

from passbench.core.errors import InputError
from passbench.core.progress import Progress
from passbench.core.records import Task
from passbench.stages.benchmarks.base import (
    Benchmark,
    BenchmarkBase,
    BenchmarkInfo,
    DifferentialBenchmark,
    LoadedBenchmark,
    Original,
    Phase,
    TaskEnvironments,
    TaskId,
    TestFeedback,
    ToolCheck,
    check_executable,
    check_split,
    check_subset,
    check_version,
    require_name,
)
from passbench.stages.benchmarks.data import DataSettings, ResolvedFile
from passbench.stages.benchmarks.prompting import PromptStyle
from passbench.stages.sandbox.remote.images import Toolchains

# registry name -> "module:class"; the class is instantiated with no arguments
_FACTORIES: dict[str, str] = {
    "bigcodebench": "passbench.stages.benchmarks.bigcodebench:BigCodeBench",
    "humaneval": "passbench.stages.benchmarks.humaneval:HumanEval",
    "humanevalplus": "passbench.stages.benchmarks.humaneval:HumanEvalPlus",
    "humaneval-openai": "passbench.stages.benchmarks.humaneval:HumanEvalOpenAI",
    # BigCodeBench+: a third-party correction of BigCodeBench's tasks, graded the same way
    "bigcodebench-plus": "passbench.stages.benchmarks.bigcodebench:BigCodeBenchPlus",
    # MultiPL-E: one name per language (benchmarks/multiple.py holds the language table)
    "multipl-e-js": "passbench.stages.benchmarks.multiple:MultiPLEJavaScript",
    "multipl-e-cpp": "passbench.stages.benchmarks.multiple:MultiPLECpp",
    "multipl-e-java": "passbench.stages.benchmarks.multiple:MultiPLEJava",
    "multipl-e-rs": "passbench.stages.benchmarks.multiple:MultiPLERust",
    "multipl-e-lua": "passbench.stages.benchmarks.multiple:MultiPLELua",
    "multipl-e-go": "passbench.stages.benchmarks.multiple:MultiPLEGo",
    "multipl-e-ts": "passbench.stages.benchmarks.multiple:MultiPLETypeScript",
    # HumanEval-X (CodeGeeX): one name per language, with reference solutions
    "humaneval-x-cpp": "passbench.stages.benchmarks.humanevalx:HumanEvalXCpp",
    "humaneval-x-go": "passbench.stages.benchmarks.humanevalx:HumanEvalXGo",
    "humaneval-x-java": "passbench.stages.benchmarks.humanevalx:HumanEvalXJava",
    "humaneval-x-js": "passbench.stages.benchmarks.humanevalx:HumanEvalXJavaScript",
    "humaneval-x-python": "passbench.stages.benchmarks.humanevalx:HumanEvalXPython",
    "humaneval-x-rust": "passbench.stages.benchmarks.humanevalx:HumanEvalXRust",
    "aider-polyglot": "passbench.stages.benchmarks.aider_polyglot.benchmark:AiderPolyglot",
    "mbpp": "passbench.stages.benchmarks.mbpp:Mbpp",
    "mbppplus": "passbench.stages.benchmarks.mbpp:MbppPlus",
    "livecodebench": "passbench.stages.benchmarks.livecodebench:LiveCodeBench",
    # prompt sets without tests, scored by `passbench security`
    "cyberseceval-instruct": "passbench.stages.benchmarks.cyberseceval:CyberSecEvalInstruct",
    "sallm": "passbench.stages.benchmarks.sallm:SALLM",
    "cweval": "passbench.stages.benchmarks.cweval:CWEval",
    # repository-level: a sample is a patch, graded as the official SWE-bench harness grades it
    "swebench-verified": "passbench.stages.benchmarks.swebench.benchmark:SWEBenchVerified",
    "swebench-lite": "passbench.stages.benchmarks.swebench.benchmark:SWEBenchLite",
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
    """The language a benchmark's programs are written in, as reports show it ("Python",
    "C++", ...: its `programming_language`); "Python" for a name that is not registered and
    for results that do not name their benchmark (every official file is Python's)."""
    if name is None or name not in benchmark_names():
        return "Python"
    return get_benchmark(name).info.programming_language


def task_language(task: Task) -> str:
    """The language of one task's code, as reports show it: the benchmark's `language_of(task)`
    (CyberSecEval's prompts differ; others give their `programming_language`)."""
    return get_benchmark(task.benchmark).language_of(task)


def environment_benchmarks() -> tuple[str, ...]:
    """The registered benchmarks that build test environments per task (`task_environments`),
    which `passbench env check/create` take by their own names."""
    return tuple(name for name in benchmark_names() if get_benchmark(name).task_environments())


def benchmark_toolchains() -> Toolchains:
    """Every registered benchmark's `toolchains()`, merged in registry order without repeats:
    what `passbench image build --with-multipl-e` adds to the runner image."""
    packages: dict[str, None] = {}
    tools: dict[str, None] = {}
    for name in benchmark_names():
        chains = get_benchmark(name).toolchains()
        if chains is not None:
            packages.update(dict.fromkeys(chains.packages))
            tools.update(dict.fromkeys(chains.tools))
    return Toolchains(tuple(packages), tuple(tools))


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
    # a plug-in written before the record (loose `name`, `versions`, ... attributes) is refused
    # here, in one line, rather than by an AttributeError wherever its data is first read
    if not isinstance(getattr(benchmark, "info", None), BenchmarkInfo):
        raise InputError(
            f"benchmark '{name}' ({target}) declares no `info = BenchmarkInfo(...)` "
            "(docs/writing-a-benchmark.md)",
            field="benchmark",
        )
    return benchmark


def benchmark_info(name: str) -> BenchmarkInfo:
    """The record of what the benchmark registered as `name` is (UnknownNameError otherwise)."""
    return BenchmarkInfo.of(get_benchmark(name))


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
    repos_dir: Path | None = None,
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
        repos_dir=repos_dir,
    )
    return get_benchmark(name).load(version, subset, data=data, progress=progress)


__all__ = [
    "DEFAULT_BENCHMARK",
    "ENTRY_POINT_GROUP",
    "Benchmark",
    "BenchmarkBase",
    "BenchmarkInfo",
    "DataSettings",
    "DifferentialBenchmark",
    "LoadedBenchmark",
    "Original",
    "Phase",
    "PromptStyle",
    "ResolvedFile",
    "TaskEnvironments",
    "TaskId",
    "TestFeedback",
    "ToolCheck",
    "benchmark_info",
    "benchmark_language",
    "benchmark_names",
    "benchmark_toolchains",
    "check_executable",
    "check_split",
    "check_subset",
    "check_version",
    "environment_benchmarks",
    "get_benchmark",
    "ignored_entry_points",
    "load_benchmark",
    "task_language",
]
