"""The Sandbox contract, run against every backend: the same verdicts as the local sandbox on a
fixed set of ordinary and hostile programs (all in one run per backend), and on BigCodeBench-Hard
ground truth through a whole evaluation (described target, results recording the backend).

The Hard run takes the tasks that together import every library Hard uses (about 40 of 148;
three slow ones left out), all run by the local sandbox (the reference). The backends that
run this machine's environment (remote, ray, e2b) share them out: each runs the first few and
a third of the rest, so every library still goes through a backend and every backend through a
whole evaluation, in a third of the time (what a backend can get wrong is the transport and the
isolation, which the first tasks and the conformance programs above exercise; the libraries are
the environment's, the same for all three). The tasks that load NLTK data (two) go first, so
every backend runs them: their data files are the environment's own copy, which a backend must
make reachable where the code runs (on Ray this was also tests/stages/sandbox/test_ray.py's own
ground-truth test, merged here). PASSBENCH_TESTS_FULL_HARD=1 runs all 148 through every backend.

Each backend is opened once for this module (contracts/backends.py), its tests grouped by it.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from tests.contracts.backends import OPENERS, BackendUnderTest, Unavailable
from tests.contracts.programs import CONFORMANCE, NEVER_PASS
from tests.stages.sandbox.conftest import BWRAP
from tests.stages.sandbox.helpers import TEST_LIMITS

from passbench.core.records import Program, Task
from passbench.core.settings import Paths
from passbench.stages.benchmarks import DataSettings, get_benchmark
from passbench.stages.evaluate import EvaluateSettings, Evaluator
from passbench.stages.sandbox import Sandbox, SandboxConfig, open_sandbox
from passbench.stages.sandbox.base import EnvironmentRef

pytestmark = [pytest.mark.bwrap, pytest.mark.skipif(not BWRAP, reason="bubblewrap cannot run")]

HOST = EnvironmentRef("host")


@pytest.fixture(scope="module", params=sorted(OPENERS))
def backend(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[BackendUnderTest]:
    root = tmp_path_factory.mktemp(f"backend-{request.param}")
    try:
        opened = OPENERS[request.param](root)
        under_test = opened.__enter__()
    except Unavailable as why:
        pytest.skip(f"{request.param}: {why}")
    try:
        yield under_test
    finally:
        opened.__exit__(None, None, None)


def _verdicts(sandbox: Sandbox, programs: list[Program]) -> dict[str, tuple[str, object]]:
    return {result.key: (result.status, result.category) for result in sandbox.run(programs)}


@pytest.fixture(scope="module")
def local_verdicts() -> dict[str, tuple[str, object]]:
    config = SandboxConfig(python=Path(sys.executable), workers=2, limits=TEST_LIMITS)
    with open_sandbox(config) as local:
        verdicts = _verdicts(local, list(CONFORMANCE.values()))
    # the reference itself: what a sandbox must say about these
    assert verdicts["pass"] == ("pass", None)
    assert verdicts["infinite-loop"][0] == "timeout"
    assert all(verdicts[key][0] != "pass" for key in NEVER_PASS)
    assert verdicts["tamper-unittest"][0] != "pass"
    return verdicts


@pytest.mark.hostile
def test_ordinary_and_hostile_programs_get_the_local_verdicts(
    backend: BackendUnderTest, local_verdicts: dict[str, tuple[str, object]]
) -> None:
    base = SandboxConfig(
        python=Path(sys.executable), workers=2, limits=TEST_LIMITS, environment=HOST
    )
    with open_sandbox(backend.config(base), backend=backend.name) as sandbox:
        assert _verdicts(sandbox, list(CONFORMANCE.values())) == local_verdicts


# ------------------------------------------------------------------ Hard ground truth, end to end


def _statuses(ground_truth_file: Path) -> dict[str, str]:
    tasks = json.loads(ground_truth_file.read_text())["tasks"]
    return {task: entry["status"] for task, entry in tasks.items()}


#: Hard tasks left out unless PASSBENCH_TESTS_FULL_HARD=1: two whose canonical solutions mostly
#: wait (BigCodeBench/461: ~156 s on subprocesses, 1040: ~60 s on a socket server;
#: ../shared/BASELINE.md), whose only libraries of their own are the standard library's `queue`
#: and `select`; and 417, which trains a Keras model (163 to 205 s measured here beside other
#: work, against its 240 s limit: load alone decided its verdict, and it took two thirds of the
#: local reference run; its one library of its own, keras, is tensorflow's, which 418 loads).
SLOW_TASKS = frozenset(("BigCodeBench/461", "BigCodeBench/1040", "BigCodeBench/417"))


def covering_tasks(tasks: list[Task]) -> tuple[str, ...]:
    """Tasks that together import every library the (not slow) tasks import: a greedy set
    cover, most new libraries first, ties to the earlier task; in dataset order."""
    candidates = [task for task in tasks if task.task_id not in SLOW_TASKS]
    uncovered = {lib for task in candidates for lib in task.libs}
    chosen: list[Task] = []
    while uncovered:
        best = max(candidates, key=lambda task: len(uncovered.intersection(task.libs)))
        chosen.append(best)
        uncovered.difference_update(best.libs)
    return tuple(task.task_id for task in tasks if task in chosen)


@pytest.fixture(scope="module")
def hard_tasks(data_dir: Path) -> tuple[str, ...]:
    loaded = get_benchmark("bigcodebench").load(
        subset="hard", data=DataSettings(data_dir=data_dir, download=False)
    )
    every = tuple(task.task_id for task in loaded.tasks)
    assert len(every) == 148
    if os.environ.get("PASSBENCH_TESTS_FULL_HARD") == "1":
        return every
    chosen = covering_tasks(list(loaded.tasks))
    libraries = {lib for task in loaded.tasks if task.task_id in chosen for lib in task.libs}
    fast = [task for task in loaded.tasks if task.task_id not in SLOW_TASKS]
    assert libraries == {lib for task in fast for lib in task.libs} and len(chosen) < 50
    nltk = tuple(
        task.task_id for task in loaded.tasks if task.task_id in chosen and "nltk" in task.libs
    )
    assert 0 < len(nltk) <= EVERY_BACKEND
    return nltk + tuple(task for task in chosen if task not in nltk)  # nltk: in every share


#: Backends that run this machine's BigCodeBench environment, each given a share of the tasks.
SHARING = ("e2b", "ray", "remote")
#: Tasks every backend runs, before the shares.
EVERY_BACKEND = 4


def backend_share(tasks: tuple[str, ...], backend: str) -> tuple[str, ...]:
    """The first EVERY_BACKEND tasks, then every len(SHARING)-th of the rest from the
    backend's position; a backend outside SHARING (a container with its own image) runs all."""
    if backend not in SHARING or os.environ.get("PASSBENCH_TESTS_FULL_HARD") == "1":
        return tasks
    position = SHARING.index(backend)
    rest = tasks[EVERY_BACKEND:]
    return tasks[:EVERY_BACKEND] + rest[position :: len(SHARING)]


def test_the_shares_cover_every_task_once_beyond_the_common_ones() -> None:
    tasks = tuple(f"BigCodeBench/{n}" for n in range(41))
    shares = [backend_share(tasks, name) for name in SHARING]
    assert all(share[:EVERY_BACKEND] == tasks[:EVERY_BACKEND] for share in shares)
    rest = [task for share in shares for task in share[EVERY_BACKEND:]]
    assert sorted(rest) == sorted(tasks[EVERY_BACKEND:]) and len(rest) == len(set(rest))
    assert backend_share(tasks, "podman") == tasks


def _hard_settings(**fields: Any) -> EvaluateSettings:
    return EvaluateSettings(benchmark="bigcodebench", subset="hard", workers=2, **fields)


@pytest.fixture(scope="module")
def local_hard(
    tmp_path_factory: pytest.TempPathFactory, data_dir: Path, hard_tasks: tuple[str, ...]
) -> dict[str, str]:
    root = tmp_path_factory.mktemp("local-hard")
    settings = _hard_settings(task_ids=hard_tasks)
    evaluator = Evaluator(settings, Paths(cache_dir=root / "cache", data_dir=data_dir))
    outcome = evaluator.run_ground_truth(root / "out")
    statuses = _statuses(outcome.path)
    # the reference itself: the ground truth passes (bar what this machine lacks: network for
    # a few tasks, NLTK packages that could not be downloaded), so equal verdicts mean something
    assert sum(status == "pass" for status in statuses.values()) >= 0.9 * len(statuses), statuses
    return statuses


def _ground_truth(
    settings: EvaluateSettings, root: Path, data_dir: Path
) -> tuple[dict[str, str], dict[str, Any]]:
    evaluator = Evaluator(settings, Paths(cache_dir=root / "cache", data_dir=data_dir))
    outcome = evaluator.run_ground_truth(root / "out")
    document = json.loads(outcome.path.read_text())
    return _statuses(outcome.path), document


@pytest.mark.evalenv
@pytest.mark.slow
def test_hard_ground_truth_through_the_backend_is_the_local_one(
    backend: BackendUnderTest,
    request: pytest.FixtureRequest,
    tmp_path: Path,
    data_dir: Path,
) -> None:
    if backend.no_bigcodebench:
        pytest.skip(
            f"not applicable: {backend.name} here has no BigCodeBench environment: "
            f"{backend.no_bigcodebench}"
        )
    local_hard: dict[str, str] = request.getfixturevalue("local_hard")  # only when it runs
    hard_tasks: tuple[str, ...] = request.getfixturevalue("hard_tasks")
    share = backend_share(hard_tasks, backend.name)
    settings = _hard_settings(backend=backend.name, task_ids=share, **backend.fields)
    statuses, document = _ground_truth(settings, tmp_path / "run", data_dir)
    assert set(local_hard) == set(hard_tasks) and set(statuses) == set(share)
    differing = sorted(task for task in statuses if statuses[task] != local_hard[task])
    if differing:
        # A task whose canonical solution is flaky here (timing, randomness) may differ between
        # any two runs; it counts against the backend only when a second run of both sides
        # agrees with itself and still differs.
        again_local, _ = _ground_truth(
            _hard_settings(task_ids=tuple(differing)), tmp_path / "l2", data_dir
        )
        again, _ = _ground_truth(
            replace(settings, task_ids=tuple(differing)), tmp_path / "b2", data_dir
        )
        stable = [
            task
            for task in differing
            if again_local[task] == local_hard[task] and again[task] == statuses[task]
        ]
        assert not stable, {task: (local_hard[task], statuses[task]) for task in stable}
    recorded = document["passbench"]["backend"]
    assert isinstance(recorded, dict) and recorded["name"] == backend.name
    assert recorded["location"] and recorded["isolation"]
