"""Where the benchmark contract suite gets each benchmark's test data.

Most benchmarks load from the shared data folder (PASSBENCH_DATA_DIR) with downloads off. A
benchmark whose data is not there registers a provider here: a function from the shared folder
and a private temporary folder to the `DataSettings` that load its data (e.g. a fixture file it
writes into the temporary folder). A benchmark with neither fails the suite, naming this file:
nothing is skipped.
"""

from __future__ import annotations

import atexit
import json
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

from passbench.stages.benchmarks import DataSettings

DataProvider = Callable[[Path, Path], DataSettings]
"""(shared data folder, a private temporary folder) -> the data settings to load with."""


def shared_folder(data_dir: Path, tmp: Path) -> DataSettings:
    """The shared data folder only: an empty private cache and no downloads."""
    return DataSettings(data_dir=data_dir, cache_dir=tmp / "cache", download=False)


#: benchmark name -> provider, for the benchmarks the shared folder does not serve.
PROVIDERS: dict[str, DataProvider] = {}

#: BigCodeBench+ is the real release in the shared folder, like BigCodeBench beside it (its Hard
#: subset reads BigCodeBench's hard-task-ids.json there); named so that no one looks for it.
PROVIDERS["bigcodebench-plus"] = shared_folder


def provider_for(name: str) -> DataProvider:
    return PROVIDERS.get(name, shared_folder)


def livecodebench_release(data_dir: Path, tmp: Path) -> DataSettings:
    """LiveCodeBench's tests live only on the Hugging Face hub: a release written in the hub's
    layout."""
    from passbench.stages.benchmarks.livecodebench.benchmark import (
        RELEASE_FILES,
        encode_private_tests,
    )

    def row(question_id: str, test: dict[str, str], meta: dict[str, str]) -> dict[str, str]:
        return {
            "question_title": question_id,
            "question_content": f"Solve {question_id}.",
            "platform": "leetcode" if meta else "atcoder",
            "question_id": question_id,
            "contest_id": question_id.split("_")[0],
            "contest_date": "2024-03-02T00:00:00",
            "starter_code": "class Solution:\n    def add(self, a: int) -> int:\n" if meta else "",
            "difficulty": "easy",
            "public_test_cases": json.dumps([test]),
            "private_test_cases": encode_private_tests([test]),
            "metadata": json.dumps(meta),
        }

    folder = tmp / "data" / "livecodebench" / "code_generation_lite"
    folder.mkdir(parents=True)
    # one problem per increment of the default release, the two styles in turn
    for number, name in enumerate(RELEASE_FILES["release_v5"], start=1):
        if number % 2:
            test = {"input": f"{number} 2\n", "output": f"{number + 2}\n", "testtype": "stdin"}
            problem = row(f"abc30{number}_a", test, {})
        else:
            test = {"input": str(number), "output": str(number + 1), "testtype": "functional"}
            problem = row(f"273{number}", test, {"func_name": "add"})
        (folder / name).write_text(json.dumps(problem) + "\n")
    return DataSettings(data_dir=tmp / "data", cache_dir=tmp / "cache", download=False)


PROVIDERS["livecodebench"] = livecodebench_release


#: One repository per subset of SWE-bench Verified and Lite (each a copy of the small one).
SWEBENCH_REPOSITORIES = (
    "astropy/astropy",
    "django/django",
    "pallets/flask",
    "matplotlib/matplotlib",
    "pylint-dev/pylint",
    "pytest-dev/pytest",
    "psf/requests",
    "scikit-learn/scikit-learn",
    "mwaskom/seaborn",
    "sphinx-doc/sphinx",
    "sympy/sympy",
    "pydata/xarray",
)


_SWEBENCH_ROOTS: list[Path] = []


def swebench_small(data_dir: Path, tmp: Path) -> DataSettings:
    """SWE-bench's repositories are not in the shared folder (they are code): a small real
    repository and its mirrors, one instance per repository (tests/stages/benchmarks/swebench/
    fixture.py)."""
    from tests.stages.benchmarks.swebench.fixture import make_small_bench

    # one bench per test process, read by every test and subset: the suite caches loaded task
    # sets across tests, and a bench made again a second later has other commit ids (its
    # commits carry the time), so a subset would not be the full set's tasks
    if not _SWEBENCH_ROOTS:
        made = Path(tempfile.mkdtemp(prefix="passbench-contract-swebench-"))
        atexit.register(shutil.rmtree, made, ignore_errors=True)
        make_small_bench(made / "swebench", SWEBENCH_REPOSITORIES)
        _SWEBENCH_ROOTS.append(made / "swebench")
    root = _SWEBENCH_ROOTS[0]
    return DataSettings(
        data_dir=root / "data", cache_dir=tmp / "cache", download=False, repos_dir=root / "repos"
    )


PROVIDERS["swebench-verified"] = swebench_small
PROVIDERS["swebench-lite"] = swebench_small
