"""Repository programs (SWE-bench) for runners on other machines: the wire format (protocol 2,
protocol 1 still read), a node finding the repository, its submodules, the test environment
and the loopback services' tool environments in its own folders by identity, with its own paths
put in the caller's place, naming what it lacks, and refusing host paths outside the
environments; backends whose runners cannot resolve them (or their submodules or services)
refuse them before anything runs, in one line."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from passbench.core.errors import SandboxError, WireError
from passbench.core.records import (
    ExecResult,
    LoopbackService,
    Program,
    RepositoryEnvironment,
    RepositorySpec,
    RepositorySubmodule,
)
from passbench.stages.evalenv.manifest import record_manifest
from passbench.stages.sandbox.base import EnvironmentRef, Limits
from passbench.stages.sandbox.remote.agent import RunnerSetup, answer, sandbox_config
from passbench.stages.sandbox.remote.backend import REPOSITORY_EXTRAS, RemoteBackend
from passbench.stages.sandbox.remote.repositories import (
    RepositoryResolver,
    RepositoryRoots,
    env_dir_variable,
    needs,
)
from passbench.stages.sandbox.remote.wire import (
    PROTOCOL,
    RunRequest,
    program_from_json,
    program_to_json,
    request_from_json,
    request_to_json,
)

SHA = "ab" * 32
CALLER_ROOT = "/caller/envs/mycache/builds/ab12-0001"
CALLER_BASE = "/caller/pyenv/versions/3.11.7"


def _git(cwd: Path, *args: str) -> str:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(cwd),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.org",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.org",
    }
    done = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.fixture(scope="module")
def mirrors(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, Path]:
    """A folder with octo__calc.git holding two commits, another whose octo__calc.git lacks
    the second; and the second commit."""
    root = tmp_path_factory.mktemp("mirrors")
    work = root / "work"
    work.mkdir()
    _git(work, "init", "-q", "-b", "main")
    (work / "a.txt").write_text("one\n")
    _git(work, "add", "-A")
    _git(work, "commit", "-q", "-m", "one")
    old = root / "old"
    old.mkdir()
    _git(root, "clone", "-q", "--mirror", str(work), str(old / "octo__calc.git"))
    (work / "a.txt").write_text("two\n")
    _git(work, "commit", "-q", "-am", "two")
    full = root / "full"
    full.mkdir()
    _git(root, "clone", "-q", "--mirror", str(work), str(full / "octo__calc.git"))
    return full, _git(work, "rev-parse", "HEAD"), old


def _published(cache: Path, python_version: str = "3.11.7", base: str = "/opt/base") -> Path:
    """An environment published as `passbench env create` publishes one: a link named by the
    lock's sha256 to its folder under builds/, a record, a manifest."""
    root = cache / "builds" / "ab12-node"
    (root / "bin").mkdir(parents=True)
    (root / "bin" / "python").write_text("#!/bin/sh\n")
    (root / "instance").mkdir()
    record = {"lock_sha256": SHA, "python_version": python_version, "base_prefix": base}
    (root / "record.json").write_text(json.dumps(record))
    record_manifest(root)
    (cache / SHA).symlink_to("builds/ab12-node")
    return root


def _program(commit: str, git_dir: str = "/caller/repos/octo__calc.git", **spec: object) -> Program:
    environment = RepositoryEnvironment(
        cache="mycache",
        lock_sha256=SHA,
        python_version="3.11.7",
        root=CALLER_ROOT,
        base_prefix=CALLER_BASE,
        record="record.json",
        rewrite=("eval.sh",),
    )
    fields: dict[str, object] = {
        "git_dir": git_dir,
        "commit": commit,
        "script": f"cd /testbed\nexec bash /run/passbench/files/eval.sh # {CALLER_ROOT}\n",
        "python": f"{CALLER_ROOT}/bin/python",
        "files": (
            ("model.patch", f"+print('{CALLER_ROOT}')\n"),
            ("eval.sh", f"export PYTHONPATH={CALLER_ROOT}/instance/lib:{CALLER_ROOT}2\n"),
        ),
        "read_only": (CALLER_ROOT, CALLER_BASE),
        "env": (("PATH", f"{CALLER_ROOT}/instance/bin:{CALLER_ROOT}/bin:/usr/bin:/bin"),),
        "fresh_dirs": (f"{CALLER_ROOT}/instance",),
        "repo": "octo/calc",
        "environment": environment,
        **spec,
    }
    return Program(
        key="octo__calc-1#0",
        task_id="octo__calc-1",
        source="+print()\n",
        style="repository",
        timeout_s=1800.0,
        repository=RepositorySpec(**fields),  # type: ignore[arg-type]
    )


# -- the wire


def test_a_repository_program_goes_over_the_wire_unchanged() -> None:
    program = _program("c" * 40)
    text = json.dumps(program_to_json(program))
    assert program_from_json(json.loads(text)) == program
    bare = replace(program, repository=replace(program.repository, environment=None, repo=""))  # type: ignore[type-var]
    assert program_from_json(json.loads(json.dumps(program_to_json(bare)))) == bare


def test_protocol_1_requests_are_still_read_and_bad_repository_fields_are_named() -> None:
    request = RunRequest(EnvironmentRef("host"), Limits(), 0, (_program("c" * 40),))
    data = json.loads(json.dumps(request_to_json(request)))
    assert data["protocol"] == PROTOCOL == 2
    assert request_from_json(data) == request
    old = {**data, "programs": [], "protocol": 1}  # what a passbench of protocol 1 sent
    assert request_from_json(old).programs == ()
    with pytest.raises(WireError, match="protocol 3; this side reads 1 and 2"):
        request_from_json({**data, "protocol": 3})
    program = data["programs"][0]
    for broken, message in [
        ({**program, "repository": None}, "a 'repository' program needs field 'repository'"),
        (
            {**program, "repository": {**program["repository"], "files": [["../x", "y"]]}},
            "field 'files' must name plain files",
        ),
        (
            {
                **program,
                "repository": {
                    **program["repository"],
                    "environment": {**program["repository"]["environment"], "record": "/x"},
                },
            },
            "field 'record' must be a plain file name",
        ),
    ]:
        with pytest.raises(WireError, match=message):
            program_from_json(broken, "programs[0]")


# -- a node resolving them


def test_a_node_uses_its_own_mirror_and_environment_with_its_own_paths(
    mirrors: tuple[Path, str, Path], tmp_path: Path
) -> None:
    full, commit, _ = mirrors
    cache = tmp_path / "envs"
    root = _published(cache)
    roots = RepositoryRoots(repos_dirs=(full,), env_dirs=(("mycache", cache),))
    resolver = RepositoryResolver(roots)
    program = _program(commit)
    assert resolver.missing([program]) == []
    local = resolver.localize(program)
    spec = local.repository
    assert spec is not None
    assert spec.git_dir == str(full / "octo__calc.git")
    assert spec.python == f"{root}/bin/python"
    assert spec.read_only == (str(root), "/opt/base")
    assert spec.fresh_dirs == (f"{root}/instance",)
    assert dict(spec.env)["PATH"] == f"{root}/instance/bin:{root}/bin:/usr/bin:/bin"
    files = dict(spec.files)
    # whole path components only: {CALLER_ROOT}2 is another folder, and the patch is data
    assert files["eval.sh"] == f"export PYTHONPATH={root}/instance/lib:{CALLER_ROOT}2\n"
    assert files["model.patch"] == f"+print('{CALLER_ROOT}')\n"
    assert spec.script.endswith(f"# {root}\n")
    assert local.source == program.source and local.key == program.key


def test_a_node_names_the_commit_and_the_environment_it_lacks(
    mirrors: tuple[Path, str, Path], tmp_path: Path
) -> None:
    _, commit, old = mirrors
    empty = tmp_path / "no-envs"
    roots = RepositoryRoots(repos_dirs=(old,), env_dirs=(("mycache", empty),))
    lacks = RepositoryResolver(roots).missing([_program(commit), _program(commit)])
    assert lacks == [
        f"no mirror of octo/calc with commit {commit[:12]} (octo__calc.git in: {old}); "
        "set PASSBENCH_REPOS where this node runs to a folder with one",
        f"no 'mycache' environment of lock {SHA[:12]} (Python 3.11.7) in {empty}: build it "
        "there with passbench env create, or set PASSBENCH_MYCACHE_ENV_DIR where this node runs",
    ]
    with pytest.raises(SandboxError, match="no mirror of octo/calc"):
        RepositoryResolver(roots).localize(_program(commit))


def test_a_node_refuses_another_python_a_changed_environment_and_paths_outside_it(
    mirrors: tuple[Path, str, Path], tmp_path: Path
) -> None:
    full, commit, _ = mirrors
    other = tmp_path / "other"
    _published(other, python_version="3.11.9")
    roots = RepositoryRoots(repos_dirs=(full,), env_dirs=(("mycache", other),))
    (line,) = RepositoryResolver(roots).missing([_program(commit)])
    assert "runs Python 3.11.9, this run's 3.11.7" in line

    cache = tmp_path / "envs"
    root = _published(cache)
    roots = RepositoryRoots(repos_dirs=(full,), env_dirs=(("mycache", cache),))
    secret = _program(commit, read_only=(CALLER_ROOT, "/home/someone/.ssh"))
    with pytest.raises(SandboxError, match=r"/home/someone/\.ssh is outside the program.s env"):
        RepositoryResolver(roots).localize(secret)
    bare = _program(commit, environment=None)  # host folders without an environment
    with pytest.raises(SandboxError, match="names host folders without naming its environment"):
        RepositoryResolver(roots).localize(bare)

    (root / "bin" / "python").write_text("#!/bin/sh\necho changed\n")
    (line,) = RepositoryResolver(roots).missing([_program(commit)])
    assert "changed after it was built: bin/python" in line


def test_the_callers_folder_only_serves_a_node_without_its_own(
    mirrors: tuple[Path, str, Path],
) -> None:
    full, commit, old = mirrors
    program = _program(commit, git_dir=str(full / "octo__calc.git"), environment=None)
    program = replace(
        program,
        repository=replace(program.repository, python=None, read_only=(), fresh_dirs=()),  # type: ignore[type-var]
    )
    found = RepositoryResolver(RepositoryRoots()).localize(program).repository
    assert found is not None and found.git_dir == str(full / "octo__calc.git")
    # a node with its own folder reads only there (and its clone cache)
    own = RepositoryRoots(repos_dirs=(old,))
    assert RepositoryResolver(own).missing([program])[0].startswith("no mirror of octo/calc")


def test_the_node_folders_come_from_its_environment(tmp_path: Path) -> None:
    roots = RepositoryRoots.here(
        {
            "PASSBENCH_REPOS": f"{tmp_path}/a:{tmp_path}/b",
            "PASSBENCH_CACHE_DIR": str(tmp_path / "cache"),
            env_dir_variable("my-cache"): str(tmp_path / "envs"),
        }
    )
    assert env_dir_variable("my-cache") == "PASSBENCH_MY_CACHE_ENV_DIR"
    assert roots.mirror_folders("/caller/repos") == [
        tmp_path / "a",
        tmp_path / "b",
        tmp_path / "cache" / "repos",
    ]
    assert roots.env_folder("my-cache") == tmp_path / "envs"


# -- backends that cannot


class _Elsewhere(RemoteBackend):
    """A backend whose runners do not resolve repository programs (containers, E2B)."""

    def __init__(self) -> None:
        super().__init__("container backend (image x)", "container", None)
        self.asked: list[str] = []

    def _attempt(self, programs: list[Program]) -> Iterator[ExecResult]:
        self.asked += [program.key for program in programs]
        return iter(())

    def close(self) -> None:
        pass


def test_other_backends_refuse_repository_programs_before_anything_runs() -> None:
    backend = _Elsewhere()
    with pytest.raises(SandboxError) as refused:
        backend.run([_program("c" * 40)])
    assert str(refused.value) == (
        "container backend (image x) does not run repository programs (SWE-bench): "
        "use --backend local, docker, podman, ray or remote"
    )
    assert backend.asked == []


def test_runners_that_do_not_resolve_them_refuse_them() -> None:
    """The agent of containers and E2B sandboxes never shows a caller's host paths to a
    sandbox (`passbench serve` and Ray's nodes resolve them first)."""
    request = RunRequest(
        EnvironmentRef("host"), Limits(), 0, (_program("c" * 40, read_only=("/etc",)),)
    )
    (only,) = list(answer(request, RunnerSetup()))
    assert json.loads(only) == {
        "error": "this runner does not run repository programs (SWE-bench): it was not told "
        "where their mirrors and environments are (--repos, --env-dir)",
        "retry": False,
    }
    with pytest.raises(SandboxError, match="does not run repository programs"):
        sandbox_config(request, RunnerSetup())


def test_an_agent_told_its_folders_names_what_they_lack_in_one_line(tmp_path: Path) -> None:
    """A container's agent (`--repos`, `--env-dir`) searches those folders only: no clone
    cache, no caller's folder, no default cache; what is missing is one error line, and
    nothing runs."""
    from passbench.stages.sandbox.remote.agent import _repository_roots

    (tmp_path / "repos").mkdir()
    roots = _repository_roots([tmp_path / "repos"], [f"mycache={tmp_path / 'envs'}"])
    assert roots is not None and roots.mirror_folders("/caller/repos") == [tmp_path / "repos"]
    assert roots.env_folder("mycache") == tmp_path / "envs"
    request = RunRequest(EnvironmentRef("host"), Limits(), 0, (_program("c" * 40),))
    (only,) = list(answer(request, RunnerSetup(repositories=True, repository_roots=roots)))
    assert json.loads(only) == {
        "error": (
            f"the container lacks: no mirror of octo/calc with commit cccccccccccc "
            f"(octo__calc.git in: {tmp_path / 'repos'}); set --repos where the container runs "
            f"to a folder with one; no 'mycache' environment of lock {SHA[:12]} (Python "
            f"3.11.7) in {tmp_path / 'envs'}: build it there with passbench env create, or set "
            "PASSBENCH_MYCACHE_ENV_DIR where the container runs"
        ),
        "retry": False,
    }
    with pytest.raises(ValueError, match="expected CACHE=DIR"):
        _repository_roots([], ["mycache"])


# -- submodules and loopback services


def _service(root: str = CALLER_ROOT, **fields: object) -> LoopbackService:
    """The loopback httpbin as the caller's program names it: its tool environment's
    interpreter and folders, and that environment by identity."""
    values: dict[str, object] = {
        "name": "httpbin",
        "argv": (f"{root}/bin/python", "-I", "/run/passbench/files/loopback-httpbin.py"),
        "port": 58080,
        "read_only": (root, CALLER_BASE),
        "variables": (("HTTPBIN_URL", "http://127.0.0.1:{port}/"),),
        "environment": RepositoryEnvironment(
            cache="mycache",
            lock_sha256=SHA,
            python_version="3.11.7",
            root=root,
            base_prefix=CALLER_BASE,
            record="record.json",
        ),
        **fields,
    }
    return LoopbackService(**values)  # type: ignore[arg-type]


def _submodule(commit: str) -> RepositorySubmodule:
    return RepositorySubmodule(
        "astropy_helpers", "/caller/repos/octo__helpers.git", commit, "octo/helpers"
    )


@pytest.fixture(scope="module")
def helpers(mirrors: tuple[Path, str, Path]) -> str:
    """octo__helpers.git beside octo__calc.git in the full folder; its commit."""
    full, _, _ = mirrors
    work = full.parent / "helpers-work"
    work.mkdir()
    _git(work, "init", "-q", "-b", "main")
    (work / "h.txt").write_text("helpers\n")
    _git(work, "add", "-A")
    _git(work, "commit", "-q", "-m", "helpers")
    _git(full, "clone", "-q", "--mirror", str(work), str(full / "octo__helpers.git"))
    return _git(work, "rev-parse", "HEAD")


def test_submodules_and_services_go_over_the_wire_unchanged() -> None:
    program = _program("c" * 40, submodules=(_submodule("d" * 40),), services=(_service(),))
    assert program_from_json(json.loads(json.dumps(program_to_json(program)))) == program
    trapped = _program("c" * 40, tarpit=True)
    assert program_from_json(json.loads(json.dumps(program_to_json(trapped)))) == trapped
    data = json.loads(json.dumps(program_to_json(program)))
    data["repository"]["submodules"][0]["path"] = "../outside"
    with pytest.raises(WireError, match=r"submodules\[0\]: field 'path' must be a relative"):
        program_from_json(data, "programs[0]")


def test_a_node_checks_out_the_submodule_and_runs_the_service_from_its_own_folders(
    mirrors: tuple[Path, str, Path], helpers: str, tmp_path: Path
) -> None:
    full, commit, _ = mirrors
    cache = tmp_path / "envs"
    root = _published(cache)
    roots = RepositoryRoots(repos_dirs=(full,), env_dirs=(("mycache", cache),))
    # the test environment and the service's tool environment: here one build of one lock
    program = _program(commit, submodules=(_submodule(helpers),), services=(_service(),))
    resolver = RepositoryResolver(roots)
    assert resolver.missing([program]) == []
    spec = resolver.localize(program).repository
    assert spec is not None
    (sub,) = spec.submodules
    assert sub == replace(_submodule(helpers), git_dir=str(full / "octo__helpers.git"))
    (service,) = spec.services
    assert service.argv[0] == f"{root}/bin/python" and service.read_only == (str(root), "/opt/base")
    assert service.argv[1:] == _service().argv[1:] and service.port == 58080
    assert service.environment is not None and service.environment.root == str(root)


def test_a_node_names_the_submodule_and_the_service_environment_it_lacks(
    mirrors: tuple[Path, str, Path], helpers: str, tmp_path: Path
) -> None:
    full, commit, _ = mirrors
    empty = tmp_path / "no-envs"
    roots = RepositoryRoots(repos_dirs=(full,), env_dirs=(("mycache", empty),))
    other = "e" * 40
    program = _program(
        commit, environment=None, python=None, read_only=(), fresh_dirs=(),
        submodules=(_submodule(other),), services=(_service(),),
    )  # fmt: skip
    assert RepositoryResolver(roots).missing([program, program]) == [
        f"no mirror of octo/helpers (the submodule astropy_helpers) with commit {other[:12]} "
        f"(octo__helpers.git in: {full}); set PASSBENCH_REPOS where this node runs to a "
        "folder with one",
        f"no 'mycache' environment of lock {SHA[:12]} (Python 3.11.7) in {empty}: build it "
        "there with passbench env create, or set PASSBENCH_MYCACHE_ENV_DIR where this node runs",
    ]
    with pytest.raises(SandboxError, match="no mirror of octo/helpers"):
        RepositoryResolver(roots).localize(program)


def test_a_service_shows_nothing_outside_its_tool_environment(
    mirrors: tuple[Path, str, Path], tmp_path: Path
) -> None:
    full, commit, _ = mirrors
    cache = tmp_path / "envs"
    _published(cache)
    roots = RepositoryRoots(repos_dirs=(full,), env_dirs=(("mycache", cache),))
    for service, outside in [
        (_service(read_only=(CALLER_ROOT, "/home/someone/.ssh")), "/home/someone/.ssh"),
        (_service(argv=("/bin/sh", "-c", "cat /etc/shadow")), "/bin/sh"),
    ]:
        program = _program(commit, services=(service,))
        with pytest.raises(SandboxError) as refused:
            RepositoryResolver(roots).localize(program)
        assert str(refused.value) == (
            f"octo__calc-1#0: host path {outside} is outside the program's environment: refused"
        )
        (line,) = RepositoryResolver(roots).missing([program])
        assert line == str(refused.value)
    anonymous = _program(commit, services=(_service(environment=None),))
    with pytest.raises(SandboxError, match="does not name its tool environment: refused"):
        RepositoryResolver(roots).localize(anonymous)


def test_needs_ask_about_submodules_and_services_once() -> None:
    plain = _program("c" * 40)
    nested = replace(
        plain, key="k2", repository=replace(plain.repository, submodules=(_submodule("d" * 40),))
    )  # type: ignore[type-var]
    served = replace(plain, key="k3", repository=replace(plain.repository, services=(_service(),)))  # type: ignore[type-var]
    found = needs([plain, nested, served, replace(served, key="k4")])
    assert len(found) == 3
    assert all(program.source == "" for program in found.values())


def test_a_backend_names_what_its_runners_do_not_do() -> None:
    """One check for every backend: a runner that does not resolve repository programs
    (containers, E2B), or one that resolves them but not their submodules or services (a server
    of an older passbench), is refused before anything runs, in one line naming what."""
    nested = _program("c" * 40, submodules=(_submodule("d" * 40),))
    served = _program("c" * 40, services=(_service(),))
    backend = _Elsewhere()
    with pytest.raises(SandboxError, match="does not run repository programs"):
        backend.run([served])
    backend.runs_repositories = True
    with pytest.raises(SandboxError) as refused:
        backend.run([served, replace(served, key="k2", task_id="t2"), nested])
    assert str(refused.value) == (
        "container backend (image x) does not start loopback services (requests' httpbin) for "
        "octo__calc-1 and 1 more: use --backend local"
    )
    backend.repository_extras = frozenset({"services"})
    with pytest.raises(SandboxError) as refused:
        backend.run([served, nested])
    assert str(refused.value) == (
        "container backend (image x) does not check out git submodules (astropy's "
        "astropy_helpers) for octo__calc-1: use --backend local"
    )
    assert backend.asked == []
    backend.repository_extras = frozenset(REPOSITORY_EXTRAS)  # Ray's, a server's of today
    assert backend._unsupported([served, nested]) is None
