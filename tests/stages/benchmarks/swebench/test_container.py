"""SWE-bench through the `podman` backend, in real containers of the tests' runner image
(tests/stages/sandbox/container_support.py, built once per source tree and shared with
tests/stages/sandbox/test_container.py): the small bench's instances (one in a test environment
built from its pins, one without) and the extras (elsewhere.py: the loopback httpbin, with the gold
and the hostile patch, the tarpit, and a git submodule), all in one evaluation, get the verdicts a
local evaluation gives (status, resolution, every test's bucket, channel, environment); the
container is shown this machine's mirrors, environment cache and interpreters read-only at their own
paths, and its agent finds and checks them as a Ray node does. A mirror without the commit, or an
environment that is not there, is named in one line before any container starts. The bench and the
environment builds are conftest.py's, shared with test_ray.py and test_remote.py."""

from __future__ import annotations

import gzip
import json
import subprocess
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from tests.stages.sandbox.conftest import BWRAP
from tests.stages.sandbox.container_support import container_backend

from passbench.core.errors import SandboxError
from passbench.core.records import Program, RepositoryEnvironment, RepositorySpec
from passbench.stages.benchmarks.swebench.environments import ENVIRONMENT_CACHE, RECORD_FILE
from passbench.stages.benchmarks.swebench.services import open_httpbin
from passbench.stages.benchmarks.swebench.testenvs import ENV_DIR_VARIABLE
from passbench.stages.evalenv.manifest import verify_manifest
from passbench.stages.sandbox.base import SandboxConfig
from passbench.stages.sandbox.remote.container import ContainerSandbox

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
    TARPIT_TEST,
    ExtrasBench,
    evaluate,
    mirror_copies,
)
from .fixture import SmallBench, make_small_bench

pytestmark = [
    pytest.mark.bwrap,
    pytest.mark.slow,
    pytest.mark.skipif(not BWRAP, reason="bubblewrap cannot run"),
]


@pytest.fixture(scope="module")
def podman(env_builds: EnvironmentBuilds) -> Iterator[SandboxConfig]:
    """The runner image's container config (the image built while the environment is)."""
    with container_backend() as (_, config):
        yield config


@pytest.fixture(scope="module")
def both(
    small: SmallBench, extras: ExtrasBench, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, Path]:
    """The small bench and the extras as one data folder and one mirror folder, so that one
    evaluation covers them all."""
    root = tmp_path_factory.mktemp("swebench-both")
    data = root / "data" / "swebench"
    data.mkdir(parents=True)
    for name in ("swebench-verified", "swebench-lite", "swebench-lite-dev"):
        rows = b"".join(
            gzip.decompress((bench / "swebench" / f"{name}.jsonl.gz").read_bytes())
            for bench in (small.data_dir, extras.data_dir)
        )
        (data / f"{name}.jsonl.gz").write_bytes(gzip.compress(rows, mtime=0))
    exports = small.data_dir / "swebench" / "swebench-verified-environments.jsonl.gz"
    (data / exports.name).write_bytes(exports.read_bytes())
    repos = mirror_copies(small.repos_dir, root / "repos")
    mirror_copies(extras.repos_dir, repos)
    return root / "data", repos


def test_graded_in_containers_as_graded_locally(
    small: SmallBench,
    extras: ExtrasBench,
    both: tuple[Path, Path],
    podman: SandboxConfig,
    envs: Path,
    httpbin_envs: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The gold patch in a built environment, a patch that breaks a PASS_TO_PASS test (no
    environment: the caller's interpreter, shown to the container), the loopback httpbin
    instance (its tarpit too) with the gold patch and with one that tries to kill, overwrite
    and displace the service, and the submodule instance: every verdict as locally."""
    monkeypatch.setenv(ENV_DIR_VARIABLE, str(envs))
    data, repos = both
    predictions = {INSTANCE: small.gold_patch, OTHER: FIX_AND_BREAK, **extras.predictions}
    local = evaluate(data, repos, tmp_path / "local", predictions)
    image = podman.backend_config.image  # type: ignore[union-attr]
    out = tmp_path / "podman"
    contained = evaluate(data, repos, out, predictions, backend="podman", image=image)
    assert local["backend"]["name"] == "local" and contained["backend"]["name"] == "podman"
    for task in (INSTANCE, OTHER, SERVED, HOSTILE, NESTED):
        assert {k: contained[task].get(k) for k in JUDGED} == {
            k: local[task].get(k) for k in JUDGED
        }, task
    # and those verdicts are the expected ones
    mine, other = contained[INSTANCE], contained[OTHER]
    assert mine["status"] == "pass" and mine["resolution"] == "RESOLVED_FULL", mine
    assert mine["environment"] == "official" and mine["channel"] == "pytest"
    assert other["status"] == "fail" and other["resolution"] == "RESOLVED_NO", other
    assert other["pass_to_pass"] == {"success": [], "failure": ["tests/test_calc.py::test_sub"]}
    assert other["fail_to_pass"] == {"success": ["tests/test_calc.py::test_add"], "failure": []}
    for task in (SERVED, HOSTILE, NESTED):
        # the httpbin answered (and was still httpbin under attack); the submodule was there
        assert contained[task]["status"] == "pass", (task, contained[task]["reason"])
    # and the tarpit was set up (root in the container lacks CAP_NET_ADMIN)
    for test in (HTTPBIN_TEST, TARPIT_TEST):
        assert test in contained[SERVED]["pass_to_pass"]["success"]  # type: ignore[index]
    (log,) = (tmp_path / "podman").rglob(f"{INSTANCE}/test_output.txt")
    assert "pytest-8.3.3" in log.read_text()  # the environment's pytest ran
    built = open_httpbin(httpbin_envs)
    assert built is not None and verify_manifest(built.root, full=True).intact
    left = subprocess.run(
        ["podman", "ps", "--all", "--quiet", "--filter", "label=org.passbench.agent=1"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert left.stdout.strip() == ""


def _environment_of(envs: Path) -> RepositoryEnvironment:
    for link in envs.iterdir():
        if len(link.name) == 64 and (link.resolve() / RECORD_FILE).is_file():
            record = json.loads((link.resolve() / RECORD_FILE).read_text())
            if record.get("repo") == "octo/calc":
                return RepositoryEnvironment(
                    cache=ENVIRONMENT_CACHE,
                    lock_sha256=link.name,
                    python_version=record["python_version"],
                    root=str(link.resolve()),
                    base_prefix=record["base_prefix"],
                    record=RECORD_FILE,
                )
    raise AssertionError(f"no environment of octo/calc in {envs}")


def test_what_this_machine_lacks_is_named_before_any_container_starts(
    small: SmallBench,
    podman: SandboxConfig,
    envs: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A mirror of another history under the same name (no base commit), and an environment
    the program names that is not in this machine's cache: one line naming both."""
    unrelated = make_small_bench(tmp_path / "unrelated", ("octo/calc",))
    (tmp_path / "no-envs").mkdir()
    monkeypatch.setenv(ENV_DIR_VARIABLE, str(tmp_path / "no-envs"))
    environment = _environment_of(envs)
    spec = RepositorySpec(
        git_dir=str(unrelated.repos_dir / "octo__calc.git"),
        commit=small.base_commit,
        script="true\n",
        python=str(Path(environment.root) / "bin" / "python"),
        read_only=(environment.root, environment.base_prefix),
        repo="octo/calc",
        environment=environment,
    )
    program = Program(
        key=f"{INSTANCE}#0",
        task_id=INSTANCE,
        source="",
        style="repository",
        timeout_s=60.0,
        repository=spec,
    )
    sandbox = ContainerSandbox(podman, "podman")
    try:
        with pytest.raises(SandboxError) as refused:
            sandbox.run([program, replace(program, key=f"{OTHER}#0", task_id=OTHER)])
        assert sandbox.running == []
    finally:
        sandbox.close()
    message = str(refused.value)
    assert message.startswith(f"podman backend ({sandbox.image}): this machine lacks: "), message
    assert (
        f"no mirror of octo/calc with commit {small.base_commit[:12]} (octo__calc.git in: "
        f"{unrelated.repos_dir}); set --repos (or PASSBENCH_REPOS) where this machine runs"
    ) in message
    assert f"no 'swebench' environment of lock {environment.lock_sha256[:12]}" in message
    assert str(tmp_path / "no-envs") in message and "\n" not in message
