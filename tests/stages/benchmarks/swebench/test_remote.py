"""SWE-bench through the `remote` backend against a real `passbench serve` on loopback
(tests/apps/serve/live.py): the small real repository of fixture.py, one instance in a test
environment built from its pins, one without, graded through the server exactly as locally
(verdict, resolution and every test's status); so are the extras (elsewhere.py: an instance
whose tests talk to the loopback httpbin, attacked by a patch, and one with a git submodule);
the server reads its own mirrors (its --repos folder, never the caller's) and its own
environment cache; a server that lacks the base commit and the environment, or the submodule's
mirror and the httpbin's tool environment, stops the run before anything runs, naming itself
and them; a request naming a host folder outside the server's, directly or through a loopback
service, is refused. The bench and the environment build are conftest.py's, shared with
test_testenvs.py and test_ray.py."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import AbstractContextManager
from dataclasses import replace
from pathlib import Path

import httpx
import pytest
from tests.apps.serve.live import free_port, running_server
from tests.stages.sandbox.conftest import BWRAP

from passbench.core.errors import SandboxError
from passbench.core.records import (
    LoopbackService,
    Program,
    RepositoryEnvironment,
    RepositorySpec,
)
from passbench.core.settings import Paths
from passbench.stages.benchmarks.swebench.environments import ENVIRONMENT_CACHE, RECORD_FILE
from passbench.stages.benchmarks.swebench.services import open_httpbin
from passbench.stages.benchmarks.swebench.testenvs import ENV_DIR_VARIABLE
from passbench.stages.evalenv.manifest import verify_manifest
from passbench.stages.evaluate import EvaluateSettings
from passbench.stages.sandbox.base import EnvironmentRef, Limits
from passbench.stages.sandbox.remote.wire import RunRequest, request_to_json

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
]

TOKEN = "swebench-remote-token"


def _server(root: Path, repos: str, envs: Path) -> AbstractContextManager[str]:
    """A server whose mirrors are `repos` (its --repos: folders separated by ':') and whose
    'swebench' environment cache is `envs`: folders of its own, not the caller's."""
    from passbench.apps.serve import ServeConfig, ServerLimits

    config = ServeConfig(
        base=EvaluateSettings(),
        paths=Paths(cache_dir=root / "cache", data_dir=None, repos_dir=Path(repos)),
        jobs_dir=root / "jobs",
        port=free_port(),
        token=TOKEN,
        limits=ServerLimits(max_workers=2, max_memory_mb=Limits().memory_mb),
        env_caches=((ENVIRONMENT_CACHE, envs),),
    )
    return running_server(config)


@pytest.fixture(scope="module")
def server_repos(small: SmallBench, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The server's own mirrors (its --repos): copies of the caller's."""
    return mirror_copies(small.repos_dir, tmp_path_factory.mktemp("server-repos") / "repos")


@pytest.fixture(scope="module")
def endpoint(
    server_repos: Path, env_builds: EnvironmentBuilds, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """The server, started while the environment is being built."""
    root = tmp_path_factory.mktemp("server")
    with _server(root, str(server_repos), env_builds.folder) as url:
        yield url


@pytest.fixture(scope="module")
def envs(env_builds: EnvironmentBuilds, endpoint: str) -> Path:
    """The environment cache, once the build is done (after the server started)."""
    return env_builds.instance_built()


@pytest.fixture(scope="module")
def server_has_extras(extras: ExtrasBench, server_repos: Path, httpbin_envs: Path) -> ExtrasBench:
    """The extras' mirrors in the server's folder (the submodule's too), and the loopback
    httpbin's tool environment in its (shared) cache."""
    mirror_copies(extras.repos_dir, server_repos)
    return extras


def _evaluate(
    small: SmallBench, out: Path, predictions: dict[str, str], **settings: object
) -> dict[str, dict[str, object]]:
    return evaluate(small.data_dir, small.repos_dir, out, predictions, **settings)


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


def test_the_loopback_httpbin_and_a_submodule_are_found_on_the_server(
    server_has_extras: ExtrasBench,
    envs: Path,
    endpoint: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A requests-style instance whose tests talk to the loopback httpbin (the server runs its
    own build of its tool environment, found by its lock), the same instance with a patch that
    tries to kill, overwrite and displace the service, and an instance whose setup bootstraps a
    git submodule (checked out from the server's own mirror of it): graded as locally."""
    extras = server_has_extras
    monkeypatch.setenv(ENV_DIR_VARIABLE, str(envs))
    local = evaluate(extras.data_dir, extras.repos_dir, tmp_path / "local", extras.predictions)
    remote = evaluate(
        extras.data_dir,
        extras.repos_dir,
        tmp_path / "remote",
        extras.predictions,
        backend="remote",
        endpoint=endpoint,
        token=TOKEN,
    )
    assert remote["backend"]["name"] == "remote"
    for task in (SERVED, HOSTILE, NESTED):
        assert {k: remote[task].get(k) for k in JUDGED} == {k: local[task].get(k) for k in JUDGED}
        # the httpbin answered (and was still httpbin under attack); the submodule was there
        assert remote[task]["status"] == "pass", (task, remote[task]["reason"])
    assert HTTPBIN_TEST in remote[SERVED]["pass_to_pass"]["success"]  # type: ignore[index]
    built = open_httpbin(envs)
    assert built is not None and verify_manifest(built.root, full=True).intact


def test_a_server_without_the_commit_or_the_environment_is_named(
    small: SmallBench,
    envs: Path,
    httpbin_envs: Path,
    extras: ExtrasBench,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(ENV_DIR_VARIABLE, str(envs))
    # mirrors of another history under the same names: the base commit is not in them; the
    # caller's own mirrors are on this machine too, and the server must not read them; and
    # the extras' repositories, but not their submodule's
    unrelated = make_small_bench(tmp_path / "unrelated", ("octo/calc", "octo/other"))
    partial = mirror_copies(
        extras.repos_dir,
        tmp_path / "partial",
        tuple(p.name for p in extras.repos_dir.iterdir() if p.name != SUBMODULE_MIRROR),
    )
    (tmp_path / "no-envs").mkdir()
    repos = f"{unrelated.repos_dir}:{partial}"
    with _server(tmp_path / "server", repos, tmp_path / "no-envs") as url:
        with pytest.raises(SandboxError) as refused:
            _evaluate(
                small,
                tmp_path / "out",
                {INSTANCE: small.gold_patch},
                backend="remote",
                endpoint=url,
                token=TOKEN,
            )
        with pytest.raises(SandboxError) as extras_refused:
            evaluate(
                extras.data_dir,
                extras.repos_dir,
                tmp_path / "out-extras",
                extras.predictions,
                backend="remote",
                endpoint=url,
                token=TOKEN,
            )
    message = str(refused.value)
    assert message.startswith(f"remote backend {url.rstrip('/')}: the server lacks: "), message
    assert f"no mirror of octo/calc with commit {small.base_commit[:12]}" in message
    cache = tmp_path / "server" / "cache" / "repos"
    assert f"in: {unrelated.repos_dir}, {partial}, {cache});" in message
    assert "set --repos (or PASSBENCH_REPOS) where the server runs" in message
    assert "no 'swebench' environment of lock" in message and str(tmp_path / "no-envs") in message
    assert str(small.repos_dir) not in message and "\n" not in message
    assert not list((tmp_path / "out" / "results").rglob("test_output.txt"))
    # the extras: the submodule's mirror and the httpbin's tool environment, nothing else
    message = str(extras_refused.value)
    assert message.startswith(f"remote backend {url.rstrip('/')}: the server lacks: "), message
    commit = extras.submodule_commit
    assert (
        f"no mirror of octo/helpers (the submodule astropy_helpers) with commit {commit[:12]}"
        in message
    )
    httpbin = open_httpbin(httpbin_envs)
    assert httpbin is not None
    assert f"no 'swebench' environment of lock {httpbin.lock_sha256[:12]}" in message
    assert "no mirror of psf/requests" not in message and "no mirror of octo/astro" not in message
    assert str(extras.repos_dir) not in message and "\n" not in message
    assert not list((tmp_path / "out-extras" / "results").rglob("test_output.txt"))


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


def _environment_of(envs: Path, repo: str) -> tuple[Path, Path, dict[str, str]]:
    """The link, the folder and the record of `repo`'s environment in the cache `envs`."""
    for link in envs.iterdir():
        if len(link.name) == 64:
            record = json.loads((link.resolve() / RECORD_FILE).read_text())
            if record["repo"] == repo:
                return link, link.resolve(), record
    raise AssertionError(f"no environment of {repo} in {envs}")


def test_a_request_naming_a_host_folder_outside_the_servers_is_refused(
    small: SmallBench, envs: Path, httpbin_envs: Path, endpoint: str
) -> None:
    """A caller cannot have the server show its ~/.ssh to a patch: only the environment it
    found in its own cache is shown, whatever folders the request names."""
    (lock, root, record) = _environment_of(envs, "octo/calc")
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
    # nor through a loopback service: its command and folders must lie in the tool
    # environment the server found by its lock
    built = open_httpbin(httpbin_envs)
    assert built is not None
    service = LoopbackService(
        name="httpbin",
        argv=(str(built.python), "-I", "/run/passbench/files/loopback-httpbin.py"),
        port=58080,
        read_only=(str(built.root), str(built.base_prefix)),
        environment=built.by_identity(),
    )
    for key, forged in [
        ("folder#0", replace(service, read_only=(*service.read_only, secret))),
        ("command#0", replace(service, argv=("/usr/bin/env", *service.argv))),
    ]:
        program = replace(
            bare,
            key=key,
            repository=replace(spec, read_only=spec.read_only[:2], services=(forged,)),
        )
        (only,) = _run(endpoint, program)
        outside = secret if key == "folder#0" else "/usr/bin/env"
        assert only == {
            "error": f"{key}: host path {outside} is outside the program's environment: refused"
        }


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
    assert service.info()["repository_extras"] == ["services", "submodules"]
