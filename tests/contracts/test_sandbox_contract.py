"""The Sandbox contract, run against every backend: the same verdicts as the local sandbox on a
fixed set of ordinary and hostile programs, and on the ground truth of BigCodeBench-Hard through
a whole evaluation (described target, results recording the backend, resume from the journal).

Each backend is opened once for this module (contracts/backends.py), its tests grouped by it.
"""

from __future__ import annotations

import json
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

from passbench.core.records import Program
from passbench.core.settings import Paths
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


def _hard_settings(**fields: Any) -> EvaluateSettings:
    return EvaluateSettings(benchmark="bigcodebench", subset="hard", workers=2, **fields)


@pytest.fixture(scope="module")
def local_hard(tmp_path_factory: pytest.TempPathFactory, data_dir: Path) -> dict[str, str]:
    root = tmp_path_factory.mktemp("local-hard")
    evaluator = Evaluator(_hard_settings(), Paths(cache_dir=root / "cache", data_dir=data_dir))
    outcome = evaluator.run_ground_truth(root / "out")
    return _statuses(outcome.path)


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
    settings = _hard_settings(backend=backend.name, **backend.fields)
    statuses, document = _ground_truth(settings, tmp_path / "run", data_dir)
    assert set(statuses) == set(local_hard) and len(statuses) == 148
    differing = sorted(task for task in statuses if statuses[task] != local_hard[task])
    if differing:
        # A task whose canonical solution is flaky here (timing, randomness) may differ between
        # any two runs; it counts against the backend only when a second run of both sides
        # agrees with itself and still differs.
        again_local, _ = _ground_truth(
            replace(_hard_settings(), task_ids=tuple(differing)), tmp_path / "l2", data_dir
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
