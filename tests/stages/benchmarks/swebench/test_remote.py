"""SWE-bench through the `remote` backend against a real `passbench serve` on loopback
(tests/apps/serve/live.py): the small real repository of fixture.py, one instance in a test
environment built from its pins (one build for the module), one without, graded through the
server exactly as locally (verdict, resolution and every test's status); the server reads its
own mirrors (its --repos folder, never the caller's) and its own environment cache; a server
that lacks the base commit and the environment stops the run before anything runs, naming
itself and both; a request naming a host folder outside the server's is refused."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import AbstractContextManager
from pathlib import Path

import httpx
import pytest
from tests.apps.serve.live import free_port, running_server
from tests.stages.sandbox.conftest import BWRAP

from passbench.core.errors import SandboxError
from passbench.core.records import Program, RepositoryEnvironment, RepositorySpec
from passbench.core.settings import Paths
from passbench.stages.benchmarks.swebench.benchmark import ENVIRONMENT_CACHE
from passbench.stages.benchmarks.swebench.environments import RECORD_FILE
from passbench.stages.benchmarks.swebench.testenvs import ENV_DIR_VARIABLE
from passbench.stages.evaluate import EvaluateSettings, Evaluator
from passbench.stages.sandbox.base import EnvironmentRef, Limits
from passbench.stages.sandbox.host.workdirs import default_scratch_root
from passbench.stages.sandbox.remote.wire import RunRequest, request_to_json

from .fixture import SmallBench, make_small_bench
from .test_ray import FIX_AND_BREAK, JUDGED
from .test_testenvs import CLI, INSTANCE, OTHER, PINS, PYTHON, export

pytestmark = [
    pytest.mark.bwrap,
    pytest.mark.slow,
    pytest.mark.skipif(not BWRAP, reason="bubblewrap cannot run"),
]

TOKEN = "swebench-remote-token"


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> SmallBench:
    """Two instances of one history; an official export (pytest's pins) for the first."""
    bench = make_small_bench(tmp_path_factory.mktemp("swebench"), ("octo/calc", "octo/other"))
    rows = [{"instance_id": INSTANCE, "environment_yml": export(PYTHON, PINS)}]
    text = "".join(json.dumps(row) + "\n" for row in rows).encode()
    target = bench.data_dir / "swebench" / "swebench-verified-environments.jsonl.gz"
    target.write_bytes(gzip.compress(text, mtime=0))
    return bench


@pytest.fixture(scope="module")
def building(small: SmallBench) -> Iterator[tuple[Path, subprocess.Popen[str]]]:
    """The first instance's environment being built (not under /tmp, which the sandbox
    replaces), while the server starts."""
    parent = default_scratch_root().parent / "test-venvs"
    parent.mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix="swebench-remote-envs-", dir=parent))
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


def _mirror_copies(source: Path, dest: Path) -> Path:
    dest.mkdir(parents=True)
    for mirror in sorted(source.iterdir()):
        subprocess.run(
            ["git", "clone", "-q", "--mirror", str(mirror), str(dest / mirror.name)], check=True
        )
    return dest


def _server(root: Path, repos: Path, envs: Path) -> AbstractContextManager[str]:
    """A server whose mirrors are `repos` (its --repos) and whose 'swebench' environment cache
    is `envs`: folders of its own, not the caller's."""
    from passbench.apps.serve import ServeConfig, ServerLimits

    config = ServeConfig(
        base=EvaluateSettings(),
        paths=Paths(cache_dir=root / "cache", data_dir=None, repos_dir=repos),
        jobs_dir=root / "jobs",
        port=free_port(),
        token=TOKEN,
        limits=ServerLimits(max_workers=2, max_memory_mb=Limits().memory_mb),
        env_caches=((ENVIRONMENT_CACHE, envs),),
    )
    return running_server(config)


@pytest.fixture(scope="module")
def endpoint(
    small: SmallBench,
    building: tuple[Path, subprocess.Popen[str]],
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[str]:
    root = tmp_path_factory.mktemp("server")
    repos = _mirror_copies(small.repos_dir, root / "repos")
    with _server(root, repos, building[0]) as url:
        yield url


@pytest.fixture(scope="module")
def envs(building: tuple[Path, subprocess.Popen[str]], endpoint: str) -> Path:
    """The environment cache, once the build is done."""
    folder, process = building
    output, _ = process.communicate(timeout=600)
    assert process.returncode == 0, output
    return folder


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


def test_graded_through_the_server_as_graded_locally(
    small: SmallBench, envs: Path, endpoint: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV_DIR_VARIABLE, str(envs))
    predictions = {INSTANCE: small.gold_patch, OTHER: FIX_AND_BREAK}
    local = _evaluate(small, tmp_path / "local", predictions)
    remote = _evaluate(
        small, tmp_path / "remote", predictions, backend="remote", endpoint=endpoint, token=TOKEN
    )
    assert local["backend"]["name"] == "local"
    assert remote["backend"]["name"] == "remote" and remote["backend"]["endpoint"] == endpoint
    for task in (INSTANCE, OTHER):
        assert {k: remote[task].get(k) for k in JUDGED} == {k: local[task].get(k) for k in JUDGED}
    # and those verdicts are the expected ones: the gold patch in the official environment,
    # the other patch not (its PASS_TO_PASS test broken), from the pytest channel
    mine, other = remote[INSTANCE], remote[OTHER]
    assert mine["status"] == "pass" and mine["resolution"] == "RESOLVED_FULL", mine
    assert mine["environment"] == "official" and mine["channel"] == "pytest"
    assert other["status"] == "fail" and other["resolution"] == "RESOLVED_NO", other
    assert other["pass_to_pass"] == {"success": [], "failure": ["tests/test_calc.py::test_sub"]}
    assert other["fail_to_pass"] == {"success": ["tests/test_calc.py::test_add"], "failure": []}
    # the server ran the environment's pytest, as the local run did
    (log,) = (tmp_path / "remote").rglob(f"{INSTANCE}/test_output.txt")
    assert "pytest-8.3.3" in log.read_text()


def test_a_server_without_the_commit_or_the_environment_is_named(
    small: SmallBench, envs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV_DIR_VARIABLE, str(envs))
    # mirrors of another history under the same names: the base commit is not in them; the
    # caller's own mirrors are on this machine too, and the server must not read them
    unrelated = make_small_bench(tmp_path / "unrelated", ("octo/calc", "octo/other"))
    (tmp_path / "no-envs").mkdir()
    server = _server(tmp_path / "server", unrelated.repos_dir, tmp_path / "no-envs")
    with server as url, pytest.raises(SandboxError) as refused:
        _evaluate(
            small,
            tmp_path / "out",
            {INSTANCE: small.gold_patch},
            backend="remote",
            endpoint=url,
            token=TOKEN,
        )
    message = str(refused.value)
    assert message.startswith(f"remote backend {url.rstrip('/')}: the server lacks: "), message
    assert f"no mirror of octo/calc with commit {small.base_commit[:12]}" in message
    assert f"in: {unrelated.repos_dir}, {tmp_path / 'server' / 'cache' / 'repos'});" in message
    assert "set --repos (or PASSBENCH_REPOS) where the server runs" in message
    assert "no 'swebench' environment of lock" in message and str(tmp_path / "no-envs") in message
    assert str(small.repos_dir) not in message and "\n" not in message
    assert not list((tmp_path / "out" / "results").rglob("test_output.txt"))


def _run(endpoint: str, program: Program) -> list[dict[str, object]]:
    """The server's answer to a run request of `program`, sent by hand."""
    request = RunRequest(EnvironmentRef("host"), Limits(), 1, (program,))
    answer = httpx.post(
        endpoint.rstrip("/") + "/passbench/v1/run",
        json=request_to_json(request),
        headers={"Authorization": f"Bearer {TOKEN}"},
        timeout=120,
    )
    assert answer.status_code == 200, answer.text
    return [json.loads(text) for text in answer.text.splitlines() if text.strip()]


def test_a_request_naming_a_host_folder_outside_the_servers_is_refused(
    small: SmallBench, envs: Path, endpoint: str
) -> None:
    """A caller cannot have the server show its ~/.ssh to a patch: only the environment it
    found in its own cache is shown, whatever folders the request names."""
    (lock,) = [link for link in envs.iterdir() if len(link.name) == 64]
    root = lock.resolve()
    record = json.loads((root / RECORD_FILE).read_text())
    secret = str(Path.home() / ".ssh")
    environment = RepositoryEnvironment(
        cache=ENVIRONMENT_CACHE,
        lock_sha256=lock.name,
        python_version=record["python_version"],
        root=str(root),
        base_prefix=record["base_prefix"],
        record=RECORD_FILE,
    )
    spec = RepositorySpec(
        git_dir=str(small.repos_dir / "octo__calc.git"),
        commit=small.base_commit,
        script=f"ls -la {secret}\n",
        python=str(root / "bin" / "python"),
        read_only=(str(root), record["base_prefix"], secret),
        repo="octo/calc",
        environment=environment,
    )
    program = Program(
        key="steal#0",
        task_id="steal",
        source="",
        style="repository",
        timeout_s=60.0,
        repository=spec,
    )
    (only,) = _run(endpoint, program)
    assert only == {
        "error": f"steal#0: host path {secret} is outside the program's environment: refused"
    }
    # without naming an environment, no host folder at all
    bare = Program(
        key="bare#0",
        task_id="bare",
        source="",
        style="repository",
        timeout_s=60.0,
        repository=RepositorySpec(
            git_dir=spec.git_dir,
            commit=spec.commit,
            script=spec.script,
            read_only=(secret,),
            repo="octo/calc",
        ),
    )
    (only,) = _run(endpoint, bare)
    assert "names host folders without naming its environment: refused" in str(only["error"])


def test_a_server_without_mirrors_of_its_own_never_reads_the_callers(
    small: SmallBench, tmp_path: Path
) -> None:
    """The caller's mirror folder exists on this machine and holds the commit: a Ray node
    without mirrors of its own would read it (one machine, a shared disk), a server never."""
    from passbench.apps.serve import ServeConfig
    from passbench.apps.serve.programs import ProgramService

    service = ProgramService(
        ServeConfig(
            base=EvaluateSettings(),
            paths=Paths(cache_dir=tmp_path / "cache", data_dir=None),
            jobs_dir=tmp_path / "jobs",
        )
    )
    program = Program(
        key="octo__calc-1#0",
        task_id="octo__calc-1",
        source="",
        style="repository",
        timeout_s=60.0,
        repository=RepositorySpec(
            git_dir=str(small.repos_dir / "octo__calc.git"),
            commit=small.base_commit,
            script="true\n",
            repo="octo/calc",
        ),
    )
    body = json.dumps(request_to_json(RunRequest(EnvironmentRef("host"), Limits(), 0, (program,))))
    assert service.missing(body.encode()) == [
        f"no mirror of octo/calc with commit {small.base_commit[:12]} (octo__calc.git in: "
        f"{tmp_path / 'cache' / 'repos'}); set --repos (or PASSBENCH_REPOS) where the server "
        "runs to a folder with one"
    ]
    assert service.info()["repositories"] is True
