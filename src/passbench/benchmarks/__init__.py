"""Benchmarks: the Benchmark protocol, a registry of lazy factories, and benchmark data.

    bench = get_benchmark("bigcodebench")
    loaded = bench.load("v0.1.4", "hard", data=DataSettings.from_env(os.environ))
    program = bench.program(task, bench.canonical_code(task), key="...", timeout_s=240)

or, in one call, `load_benchmark("bigcodebench", subset="hard", data_dir=...)`.
Each benchmark module is imported only when its name is asked for.
"""

from __future__ import annotations

import importlib
from pathlib import Path

from passbench.benchmarks.base import (
    Benchmark,
    DifferentialBenchmark,
    LoadedBenchmark,
    Phase,
    check_split,
    check_subset,
    check_version,
    require_name,
)
from passbench.benchmarks.data import DataSettings, ResolvedFile
from passbench.progress import Progress

# registry name -> "module:class"; the class is instantiated with no arguments
_FACTORIES: dict[str, str] = {
    "bigcodebench": "passbench.benchmarks.bigcodebench:BigCodeBench",
    "humaneval": "passbench.benchmarks.humaneval:HumanEval",
    "humanevalplus": "passbench.benchmarks.humaneval:HumanEvalPlus",
    "humaneval-openai": "passbench.benchmarks.humaneval:HumanEvalOpenAI",
    # MultiPL-E: one name per language (benchmarks/multiple.py holds the language table)
    "multipl-e-js": "passbench.benchmarks.multiple:MultiPLEJavaScript",
    "multipl-e-cpp": "passbench.benchmarks.multiple:MultiPLECpp",
    "multipl-e-java": "passbench.benchmarks.multiple:MultiPLEJava",
    "multipl-e-rs": "passbench.benchmarks.multiple:MultiPLERust",
    "multipl-e-lua": "passbench.benchmarks.multiple:MultiPLELua",
    "mbpp": "passbench.benchmarks.mbpp:Mbpp",
    "mbppplus": "passbench.benchmarks.mbpp:MbppPlus",
}


def benchmark_names() -> tuple[str, ...]:
    """Registry names, in the order they are documented."""
    return tuple(_FACTORIES)


def benchmark_language(name: str | None) -> str:
    """The language a benchmark's programs are written in, as reports show it: the MultiPL-E
    language's title ("JavaScript", "C++", ...) for `multipl-e-*`, "Python" for the others
    (and for results that do not name their benchmark: every official file is Python's)."""
    if name and name.startswith("multipl-e-"):
        from passbench.benchmarks.multiple import LANGUAGES

        language = LANGUAGES.get(name.removeprefix("multipl-e-"))
        if language is not None:
            return language.title
    return "Python"


def get_benchmark(name: str) -> Benchmark:
    """The benchmark registered as `name`; UnknownNameError listing the valid names otherwise."""
    require_name("benchmark", name, benchmark_names(), field="benchmark")
    module_name, attribute = _FACTORIES[name].split(":")
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
    "Benchmark",
    "DataSettings",
    "DifferentialBenchmark",
    "LoadedBenchmark",
    "Phase",
    "ResolvedFile",
    "benchmark_language",
    "benchmark_names",
    "check_split",
    "check_subset",
    "check_version",
    "get_benchmark",
    "load_benchmark",
]
