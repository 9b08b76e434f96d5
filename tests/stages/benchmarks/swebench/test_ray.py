"""SWE-bench through the `ray` backend on a real two-node Ray cluster started on this machine
(tests/stages/sandbox/ray_support.py): the small real repository of fixture.py, one instance in
a test environment built from its pins, one without, graded through Ray exactly as locally
(verdict, resolution and every test's status); so are the extras (elsewhere.py: an instance
whose tests talk to the loopback httpbin, attacked by a patch, and one with a git submodule);
the nodes read their own mirrors (PASSBENCH_REPOS where they run) and their own environment
cache; a node that lacks the base commit and the environment, or the submodule's mirror and the
httpbin's tool environment, stops the run before anything runs, naming itself and them. The
bench and the environment build are conftest.py's, shared with test_testenvs.py and
test_remote.py."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.stages.sandbox.conftest import BWRAP
from tests.stages.sandbox.ray_support import RayCluster, ray_available, running_cluster

from passbench.core.errors import SandboxError
from passbench.stages.benchmarks.swebench.environments import ENVIRONMENT_CACHE
from passbench.stages.benchmarks.swebench.services import open_httpbin
from passbench.stages.benchmarks.swebench.testenvs import ENV_DIR_VARIABLE, environments_folder
from passbench.stages.evalenv.manifest import verify_manifest
from passbench.stages.sandbox.remote.repositories import RepositoryRoots

from .conftest import EnvironmentBuilds
from .elsewhere import (
    FIX_AND_BREAK,
    HOSTILE,
    HTTPBIN_TEST,
    INSTANCE,
    JUDGED,
    NESTED,
    OTHER,
    SERVED,
    SUBMODULE_MIRROR,
    ExtrasBench,
    evaluate,
    mirror_copies,
)
from .fixture import SmallBench, make_small_bench

pytestmark = [
    pytest.mark.bwrap,
    pytest.mark.slow,
    pytest.mark.skipif(not BWRAP, reason="bubblewrap cannot run"),
    pytest.mark.skipif(not ray_available(), reason="ray is not installed (the 'ray' extra)"),
]


@pytest.fixture(scope="module")
def node_repos(small: SmallBench, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The nodes' own mirrors (PASSBENCH_REPOS where they run): copies of the caller's."""
    return mirror_copies(small.repos_dir, tmp_path_factory.mktemp("node") / "repos")


@pytest.fixture(scope="module")
def node_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The nodes' cache folder (PASSBENCH_CACHE_DIR where they run)."""
    return tmp_path_factory.mktemp("node-cache")


@pytest.fixture(scope="module")
def cluster(
    node_repos: Path, node_cache: Path, env_builds: EnvironmentBuilds
) -> Iterator[RayCluster]:
    """Two nodes, each reading its own copy of the mirrors (PASSBENCH_REPOS) and the
    environment cache (PASSBENCH_SWEBENCH_ENV_DIR), as `ray start` on a machine would; started
    while the environment is being built."""
    env = {
        "PASSBENCH_REPOS": str(node_repos),
        "PASSBENCH_CACHE_DIR": str(node_cache),
        ENV_DIR_VARIABLE: str(env_builds.folder),
    }
    with running_cluster(nodes=2, cpus_per_node=1, env=env) as started:
        yield started


@pytest.fixture(scope="module")
def envs(env_builds: EnvironmentBuilds, cluster: RayCluster) -> Path:
    """The environment cache, once the build is done (after the cluster started)."""
    return env_builds.instance_built()


@pytest.fixture(scope="module")
def nodes_have_extras(extras: ExtrasBench, node_repos: Path, httpbin_envs: Path) -> ExtrasBench:
    """The extras' mirrors in the nodes' folder (the submodule's too), and the loopback
    httpbin's tool environment in their (shared) cache."""
    mirror_copies(extras.repos_dir, node_repos)
    return extras


def _evaluate(
    small: SmallBench, out: Path, predictions: dict[str, str], **settings: object
) -> dict[str, dict[str, object]]:
    return evaluate(small.data_dir, small.repos_dir, out, predictions, **settings)


def test_graded_through_ray_as_graded_locally(
    small: SmallBench,
    envs: Path,
    cluster: RayCluster,
    node_repos: Path,
    node_cache: Path,
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
    # the working copies were made with a history cache of the node's own mirror, kept in the
    # node's cache folder for the next run, as a local evaluation keeps one in its own
    stamps = sorted((node_cache / "git-histories").glob("*/stamp.json"))
    made_from = {Path(json.loads(stamp.read_text())["git_dir"]) for stamp in stamps}
    assert made_from and {git_dir.parent for git_dir in made_from} == {node_repos.resolve()}


def test_the_loopback_httpbin_and_a_submodule_are_found_on_the_nodes(
    nodes_have_extras: ExtrasBench,
    envs: Path,
    cluster: RayCluster,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A requests-style instance whose tests talk to the loopback httpbin (the nodes run their
    own build of its tool environment, found by its lock), the same instance with a patch that
    tries to kill, overwrite and displace the service, and an instance whose setup bootstraps a
    git submodule (checked out from the nodes' own mirror of it): graded as locally."""
    extras = nodes_have_extras
    monkeypatch.setenv(ENV_DIR_VARIABLE, str(envs))
    local = evaluate(extras.data_dir, extras.repos_dir, tmp_path / "local", extras.predictions)
    ray = evaluate(
        extras.data_dir,
        extras.repos_dir,
        tmp_path / "ray",
        extras.predictions,
        backend="ray",
        ray_address=cluster.address,
    )
    assert ray["backend"]["name"] == "ray"
    for task in (SERVED, HOSTILE, NESTED):
        assert {k: ray[task].get(k) for k in JUDGED} == {k: local[task].get(k) for k in JUDGED}
        # the httpbin answered (and was still httpbin under attack); the submodule was there
        assert ray[task]["status"] == "pass", (task, ray[task]["reason"])
    assert HTTPBIN_TEST in ray[SERVED]["pass_to_pass"]["success"]  # type: ignore[index]
    # the attack changed nothing of the service's environment
    built = open_httpbin(envs)
    assert built is not None and verify_manifest(built.root, full=True).intact


def test_a_node_without_the_commit_or_the_environment_is_named(
    small: SmallBench,
    envs: Path,
    cluster: RayCluster,
    nodes_have_extras: ExtrasBench,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(ENV_DIR_VARIABLE, str(envs))
    # mirrors of another history under the same names: the base commit is not in them; and
    # the extras' repositories, but not their submodule's
    unrelated = make_small_bench(tmp_path / "unrelated", ("octo/calc", "octo/other"))
    partial = mirror_copies(
        nodes_have_extras.repos_dir,
        tmp_path / "partial",
        tuple(p.name for p in nodes_have_extras.repos_dir.iterdir() if p.name != SUBMODULE_MIRROR),
    )
    (tmp_path / "no-envs").mkdir()
    bare = cluster.add_node(
        cpus=1,
        env={
            "PASSBENCH_REPOS": f"{unrelated.repos_dir}:{partial}",
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
        with pytest.raises(SandboxError) as extras_refused:
            evaluate(
                nodes_have_extras.data_dir,
                nodes_have_extras.repos_dir,
                tmp_path / "out-extras",
                nodes_have_extras.predictions,
                backend="ray",
                ray_address=cluster.address,
            )
    finally:
        cluster.kill_node(bare)
    message = str(refused.value)
    assert f":{bare.node_manager_port} (" in message and "lacks:" in message, message
    assert f"no mirror of octo/calc with commit {small.base_commit[:12]}" in message
    assert f"in: {unrelated.repos_dir}, {partial}" in message
    assert "no 'swebench' environment of lock" in message and str(tmp_path / "no-envs") in message
    assert "\n" not in message
    # only the node that lacks them is named: the module's two have both
    assert message.count("lacks:") == 1
    assert not list((tmp_path / "out" / "results").rglob("test_output.txt"))
    # the extras: the submodule's mirror and the httpbin's tool environment, nothing else
    message = str(extras_refused.value)
    assert message.count("lacks:") == 1 and f":{bare.node_manager_port} (" in message, message
    commit = nodes_have_extras.submodule_commit
    assert (
        f"no mirror of octo/helpers (the submodule astropy_helpers) with commit {commit[:12]}"
        in message
    )
    httpbin = open_httpbin(envs)
    assert httpbin is not None
    assert f"no 'swebench' environment of lock {httpbin.lock_sha256[:12]}" in message
    assert "no mirror of psf/requests" not in message and "no mirror of octo/astro" not in message
    assert "\n" not in message
    assert not list((tmp_path / "out-extras" / "results").rglob("test_output.txt"))


def test_a_node_finds_the_environment_cache_where_the_benchmark_puts_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV_DIR_VARIABLE, str(tmp_path / "envs"))
    roots = RepositoryRoots.here()
    assert roots.env_folder(ENVIRONMENT_CACHE) == environments_folder() == tmp_path / "envs"
    monkeypatch.delenv(ENV_DIR_VARIABLE)
    assert RepositoryRoots.here().env_folder(ENVIRONMENT_CACHE) == environments_folder()
    assert os.environ.get(ENV_DIR_VARIABLE) is None
