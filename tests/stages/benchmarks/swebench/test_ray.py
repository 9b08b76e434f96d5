"""SWE-bench through the `ray` backend on a real two-node Ray cluster started on this machine
(tests/stages/sandbox/ray_support.py): the small real repository of fixture.py, one instance in
a test environment built from its pins, one without, graded through Ray exactly as locally
(verdict, resolution and every test's status); the nodes read their own mirrors
(PASSBENCH_REPOS where they run) and their own environment cache; a node that lacks the base
commit and the environment stops the run before anything runs, naming itself and both."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.stages.sandbox.conftest import BWRAP
from tests.stages.sandbox.ray_support import RayCluster, ray_available, running_cluster

from passbench.core.errors import SandboxError
from passbench.core.settings import Paths
from passbench.stages.benchmarks.swebench.benchmark import ENVIRONMENT_CACHE
from passbench.stages.benchmarks.swebench.testenvs import ENV_DIR_VARIABLE, environments_folder
from passbench.stages.evaluate import EvaluateSettings, Evaluator
from passbench.stages.sandbox.host.workdirs import default_scratch_root
from passbench.stages.sandbox.remote.repositories import RepositoryRoots

from .fixture import SmallBench, make_small_bench
from .test_testenvs import CLI, INSTANCE, OTHER, PINS, PYTHON, export

pytestmark = [
    pytest.mark.bwrap,
    pytest.mark.slow,
    pytest.mark.skipif(not BWRAP, reason="bubblewrap cannot run"),
    pytest.mark.skipif(not ray_available(), reason="ray is not installed (the 'ray' extra)"),
]

#: Fixes add (FAIL_TO_PASS passes) and breaks sub (PASS_TO_PASS fails): not resolved.
FIX_AND_BREAK = (
    "diff --git a/calc/__init__.py b/calc/__init__.py\n--- a/calc/__init__.py\n"
    "+++ b/calc/__init__.py\n@@ -1,6 +1,6 @@\n def add(a, b):\n-    return a - b\n"
    "+    return a + b\n \n \n def sub(a, b):\n-    return a - b\n+    return b - a\n"
)
#: Verdict fields the benchmark judges from the raw data a node sends back.
JUDGED = (
    "status",
    "resolution",
    "fail_to_pass",
    "pass_to_pass",
    "channel",
    "parser_disagrees",
    "machinery_restored",
    "environment",
    "environment_lock",
)


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> SmallBench:
    """Two instances of one history; an official export (pytest's pins) for the first."""
    import gzip

    bench = make_small_bench(tmp_path_factory.mktemp("swebench"), ("octo/calc", "octo/other"))
    rows = [{"instance_id": INSTANCE, "environment_yml": export(PYTHON, PINS)}]
    text = "".join(json.dumps(row) + "\n" for row in rows).encode()
    target = bench.data_dir / "swebench" / "swebench-verified-environments.jsonl.gz"
    target.write_bytes(gzip.compress(text, mtime=0))
    return bench


@pytest.fixture(scope="module")
def building(small: SmallBench) -> Iterator[tuple[Path, subprocess.Popen[str]]]:
    """The first instance's environment being built (not under /tmp, which the sandbox
    replaces), while the cluster starts."""
    parent = default_scratch_root().parent / "test-venvs"
    parent.mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix="swebench-ray-envs-", dir=parent))
    environ = {
        **os.environ,
        "PASSBENCH_DATA_DIR": str(small.data_dir),
        ENV_DIR_VARIABLE: str(folder),
    }
    command = [*CLI, "env", "create", "swebench-verified", "--tasks", INSTANCE]
    process = subprocess.Popen(
        command, env=environ, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    try:
        yield folder, process
    finally:
        process.kill()
        process.communicate()
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="module")
def envs(building: tuple[Path, subprocess.Popen[str]], cluster: RayCluster) -> Path:
    """The environment cache, once the build is done."""
    folder, process = building
    output, _ = process.communicate(timeout=600)
    assert process.returncode == 0, output
    return folder


def _mirror_copies(source: Path, dest: Path) -> Path:
    dest.mkdir(parents=True)
    for mirror in sorted(source.iterdir()):
        subprocess.run(
            ["git", "clone", "-q", "--mirror", str(mirror), str(dest / mirror.name)], check=True
        )
    return dest


@pytest.fixture(scope="module")
def cluster(
    small: SmallBench,
    building: tuple[Path, subprocess.Popen[str]],
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[RayCluster]:
    """Two nodes, each reading its own copy of the mirrors (PASSBENCH_REPOS) and the
    environment cache (PASSBENCH_SWEBENCH_ENV_DIR), as `ray start` on a machine would."""
    node = tmp_path_factory.mktemp("node")
    env = {
        "PASSBENCH_REPOS": str(_mirror_copies(small.repos_dir, node / "repos")),
        "PASSBENCH_CACHE_DIR": str(node / "cache"),
        ENV_DIR_VARIABLE: str(building[0]),
    }
    with running_cluster(nodes=2, cpus_per_node=1, env=env) as started:
        yield started


def _evaluate(
    small: SmallBench, out: Path, predictions: dict[str, str], **settings: object
) -> dict[str, dict[str, object]]:
    out.mkdir(parents=True, exist_ok=True)
    path = out / "preds.json"
    path.write_text(
        json.dumps(
            {key: {"model_name_or_path": "m", "model_patch": p} for key, p in predictions.items()}
        )
    )
    chosen = EvaluateSettings(
        benchmark="swebench-verified",
        workers=2,
        check_ground_truth=False,
        **settings,  # type: ignore[arg-type]
    )
    paths = Paths(cache_dir=out / "cache", data_dir=small.data_dir, repos_dir=small.repos_dir)
    outcome = Evaluator(chosen, paths).evaluate_samples(path, out / "results")
    data = json.loads(outcome.eval_results_path.read_text())
    entries = {task: dict(found[0]) for task, found in data["eval"].items()}
    entries["backend"] = dict(data["passbench"]["backend"])
    return entries


def test_graded_through_ray_as_graded_locally(
    small: SmallBench,
    envs: Path,
    cluster: RayCluster,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(ENV_DIR_VARIABLE, str(envs))
    predictions = {INSTANCE: small.gold_patch, OTHER: FIX_AND_BREAK}
    local = _evaluate(small, tmp_path / "local", predictions)
    ray = _evaluate(
        small, tmp_path / "ray", predictions, backend="ray", ray_address=cluster.address
    )
    assert ray["backend"]["name"] == "ray" and local["backend"]["name"] == "local"
    for task in (INSTANCE, OTHER):
        assert {k: ray[task].get(k) for k in JUDGED} == {k: local[task].get(k) for k in JUDGED}
    # and those verdicts are the expected ones: the gold patch in the official environment,
    # the other patch not (its PASS_TO_PASS test broken), from the pytest channel
    mine, other = ray[INSTANCE], ray[OTHER]
    assert mine["status"] == "pass" and mine["resolution"] == "RESOLVED_FULL", mine
    assert mine["environment"] == "official" and mine["channel"] == "pytest"
    assert other["status"] == "fail" and other["resolution"] == "RESOLVED_NO", other
    assert other["pass_to_pass"] == {"success": [], "failure": ["tests/test_calc.py::test_sub"]}
    assert other["fail_to_pass"] == {"success": ["tests/test_calc.py::test_add"], "failure": []}
    # the node ran the environment's pytest, as the local run did
    (log,) = (tmp_path / "ray").rglob(f"{INSTANCE}/test_output.txt")
    assert "pytest-8.3.3" in log.read_text()


def test_a_node_without_the_commit_or_the_environment_is_named(
    small: SmallBench,
    envs: Path,
    cluster: RayCluster,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(ENV_DIR_VARIABLE, str(envs))
    # mirrors of another history under the same names: the base commit is not in them
    unrelated = make_small_bench(tmp_path / "unrelated", ("octo/calc", "octo/other"))
    (tmp_path / "no-envs").mkdir()
    bare = cluster.add_node(
        cpus=1,
        env={
            "PASSBENCH_REPOS": str(unrelated.repos_dir),
            "PASSBENCH_CACHE_DIR": str(tmp_path / "node-cache"),
            ENV_DIR_VARIABLE: str(tmp_path / "no-envs"),
        },
    )
    try:
        with pytest.raises(SandboxError) as refused:
            _evaluate(
                small,
                tmp_path / "out",
                {INSTANCE: small.gold_patch},
                backend="ray",
                ray_address=cluster.address,
            )
    finally:
        cluster.kill_node(bare)
    message = str(refused.value)
    assert f":{bare.node_manager_port} (" in message and "lacks:" in message, message
    assert f"no mirror of octo/calc with commit {small.base_commit[:12]}" in message
    assert f"in: {unrelated.repos_dir}" in message
    assert "no 'swebench' environment of lock" in message and str(tmp_path / "no-envs") in message
    assert "\n" not in message
    # only the node that lacks them is named: the module's two have both
    assert message.count("lacks:") == 1
    assert not list((tmp_path / "out" / "results").rglob("test_output.txt"))


def test_a_node_finds_the_environment_cache_where_the_benchmark_puts_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV_DIR_VARIABLE, str(tmp_path / "envs"))
    roots = RepositoryRoots.here()
    assert roots.env_folder(ENVIRONMENT_CACHE) == environments_folder() == tmp_path / "envs"
    monkeypatch.delenv(ENV_DIR_VARIABLE)
    assert RepositoryRoots.here().env_folder(ENVIRONMENT_CACHE) == environments_folder()
    assert os.environ.get(ENV_DIR_VARIABLE) is None
