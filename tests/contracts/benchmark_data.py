"""Where the benchmark contract suite gets each benchmark's test data.

Most benchmarks load from the shared data folder (PASSBENCH_DATA_DIR) with downloads off. A
benchmark whose data is not there registers a provider here: a function from the shared folder
and a private temporary folder to the `DataSettings` that load its data (e.g. a fixture file it
writes into the temporary folder). A benchmark with neither fails the suite, naming this file:
nothing is skipped.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from passbench.benchmarks import DataSettings

DataProvider = Callable[[Path, Path], DataSettings]
"""(shared data folder, a private temporary folder) -> the data settings to load with."""


def shared_folder(data_dir: Path, tmp: Path) -> DataSettings:
    """The shared data folder only: an empty private cache and no downloads."""
    return DataSettings(data_dir=data_dir, cache_dir=tmp / "cache", download=False)


#: benchmark name -> provider, for the benchmarks the shared folder does not serve.
PROVIDERS: dict[str, DataProvider] = {}


def provider_for(name: str) -> DataProvider:
    return PROVIDERS.get(name, shared_folder)
