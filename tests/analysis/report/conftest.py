"""Fixtures: the result files in data/ (documented format, hand-made) and the real task data."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tests.analysis.report.result_files import OFFICIAL, OURS
from tests.analysis.report.stability_runs import measure

from passbench.stages.benchmarks import DataSettings
from passbench.stages.results import RunResults, load_results
from passbench.stages.results.taskinfo import TaskCatalog, load_catalog


@pytest.fixture(scope="session")
def catalog(data_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> TaskCatalog:
    settings = DataSettings(data_dir=data_dir, cache_dir=tmp_path_factory.mktemp("cache"))
    loaded = load_catalog("bigcodebench", "v0.1.4", settings)
    assert loaded.tasks, loaded.note
    return loaded


@pytest.fixture(scope="session")
def official_run() -> RunResults:
    return load_results(OFFICIAL)


@pytest.fixture(scope="session")
def our_run() -> RunResults:
    return load_results(OURS)


@pytest.fixture(scope="session")
def measured(data_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Result files of a ground-truth stability run and an evaluation with --runs and --epochs
    (stability_runs.py; executes in the sandbox, so its tests are marked bwrap)."""
    return measure(data_dir, tmp_path_factory.mktemp("measured"))
