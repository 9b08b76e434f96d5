"""The runner a backend starts where programs run (a container, an E2B sandbox, a Ray node).

    python -m passbench.stages.sandbox.remote.agent [--request FILE] [--output FILE]
                                      [--envs-root DIR] ...
                                      [--skip-integrity-check]
                                      [--repos DIR]... [--env-dir CACHE=DIR]...
                                      [--repository-python PATH]
    python -m passbench.stages.sandbox.remote.agent --describe [--envs-root DIR]

It reads one run request (sandbox/remote/wire.py RunRequest: environment by name and lock, limits,
workers, programs) from standard input or FILE, runs the programs in the local sandbox with the
environment found on this machine, and writes the same NDJSON answer as the server's
POST /passbench/v1/run: one verdict a line as each finishes, then {"done": true, ...}, or one
{"error": ..., "retry": ...} line. Every line is flushed at once (and appended to --output when
given), so the caller journals verdicts as they arrive and a lost runner costs only the ones
not yet written. `--describe` prints what this runner offers (protocol, passbench version,
environments, whether bubblewrap isolates here) as one JSON object.

Repository programs (SWE-bench) run only when `--repos` or `--env-dir` names where this
machine keeps what they name (a container backend shows the caller's mirror folders and
environment caches read-only at their own paths, and names them so): the agent then finds
each program's repository commit and test environment there by identity, checked as a Ray
node checks them (remote/repositories.py: the record, the Python version, the integrity
manifest), and refuses the request in one line, before anything runs, when any is missing.

Exit status: 0 answered (verdicts may be failures), 2 a malformed request, 3 the sandbox failed.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from importlib.metadata import version
from pathlib import Path
from typing import IO, Any

from passbench.core.errors import HostUnfit, PassbenchError, SandboxError, WireError
from passbench.stages.evalenv import EnvInfo, check_integrity, locate_env, spec_names
from passbench.stages.sandbox import open_sandbox
from passbench.stages.sandbox.base import EnvironmentRef, SandboxConfig
from passbench.stages.sandbox.host.isolation import check_isolation
from passbench.stages.sandbox.remote.repositories import RepositoryResolver, RepositoryRoots
from passbench.stages.sandbox.remote.wire import (
    PROTOCOL,
    RunRequest,
    line,
    request_from_json,
    result_to_json,
)

#: The environment a program asks for when it needs no evaluation environment (HumanEval):
#: the interpreter passbench runs on.
HOST = "host"


@dataclass(frozen=True)
class RunnerSetup:
    """How this machine runs programs: where its environments and data are."""

    # the folder holding evaluation environments by name (None: passbench's default)
    envs_root: Path | None = None
    # environments somewhere else, by name (a server's configured env_dir)
    env_paths: tuple[tuple[str, Path], ...] = ()
    nltk_data: Path | None = None
    scratch_dir: Path | None = None
    # where the mirrors' history caches are kept between runs (SandboxConfig.history_dir;
    # None: none, as in a container whose folders last one run)
    history_dir: Path | None = None
    allow_unsandboxed: bool = False
    # checks an environment is intact before it runs programs (default: every time)
    verify: Callable[[EnvInfo], None] | None = None
    # whether it runs repository programs (SWE-bench), resolving their repository and test
    # environment in its own folders first (remote/repositories.py: Ray's nodes, `passbench
    # serve`, and a container's agent given `repository_roots`); a runner that does not (an
    # E2B sandbox's agent) refuses them, so no host path a caller names is ever shown to its
    # sandbox
    repositories: bool = False
    # where the agent itself finds what repository programs name, by identity (a container's
    # agent, shown the caller's folders: `--repos`, `--env-dir`); None: it does not resolve
    # them (the caller of `answer` did, or the runner refuses them)
    repository_roots: RepositoryRoots | None = None
    # the interpreter a request of repository programs only runs under (those naming no test
    # environment use it): the caller's, as a local run uses it (a container is shown it)
    repository_python: Path | None = None

    def env_root(self, name: str) -> Path | None:
        """Environment `name`'s folder, or None for passbench's default location
        ($PASSBENCH_ENV_DIR, else the user data folder's envs/NAME)."""
        explicit = dict(self.env_paths).get(name)
        if explicit is not None:
            return explicit
        return None if self.envs_root is None else self.envs_root / name


def offered_environments(setup: RunnerSetup) -> dict[str, dict[str, str]]:
    """The environments this machine has, by name: lock hash and Python version."""
    offered = {HOST: {"lock_sha256": "", "python_version": platform.python_version()}}
    for name in spec_names():  # every environment passbench can build
        try:
            env = locate_env(name, setup.env_root(name))
        except PassbenchError:
            continue
        offered[env.name] = {"lock_sha256": env.lock_sha256, "python_version": env.python_version}
    return offered


def refusal(request: RunRequest, setup: RunnerSetup) -> str:
    """Why this runner refuses `request` before anything runs ("" when it does not)."""
    if not setup.repositories and any(p.style == "repository" for p in request.programs):
        return (
            "this runner does not run repository programs (SWE-bench): it was not told where "
            "their mirrors and environments are (--repos, --env-dir)"
        )
    return ""


def sandbox_config(request: RunRequest, setup: RunnerSetup) -> SandboxConfig:
    """The local sandbox a request runs in: the environment it names (with the lock it asks
    for, when it asks for one), checked intact; SandboxError when this machine lacks it, or
    when the runner refuses the request (`refusal`)."""
    refused = refusal(request, setup)
    if refused:
        raise SandboxError(refused)
    env_vars: dict[str, str] = {}
    read_only: list[Path] = []
    wanted = request.environment
    repositories_only = bool(request.programs) and all(
        program.style == "repository" for program in request.programs
    )
    if wanted.name == HOST and setup.repository_python is not None and repositories_only:
        python = setup.repository_python
        identity = EnvironmentRef(HOST, "", platform.python_version())
    elif wanted.name == HOST:
        python = Path(sys.executable)
        identity = EnvironmentRef(HOST, "", platform.python_version())
    else:
        try:
            env = locate_env(wanted.name, setup.env_root(wanted.name))
        except PassbenchError as error:
            raise SandboxError(f"this runner has no '{wanted.name}' environment: {error}") from None
        if wanted.lock_sha256 and env.lock_sha256 != wanted.lock_sha256:
            raise SandboxError(
                f"this runner's '{wanted.name}' environment is lock {env.lock_sha256[:12]}, "
                f"the request needs {wanted.lock_sha256[:12]}"
            )
        if setup.verify is not None:
            setup.verify(env)
        else:
            check_integrity(env.name, env.root, lambda message: print(message, file=sys.stderr))
        python = env.python
        env_vars.update(env.sample_environment())
        identity = EnvironmentRef(env.name, env.lock_sha256, env.python_version)
    if setup.nltk_data is not None:
        env_vars["NLTK_DATA"] = str(setup.nltk_data)
        read_only.append(setup.nltk_data)
    return SandboxConfig(
        python=python,
        workers=request.workers,
        limits=request.limits,
        env=tuple(sorted(env_vars.items())),
        read_only_paths=tuple(read_only),
        scratch_dir=setup.scratch_dir,
        history_dir=setup.history_dir,
        allow_unsandboxed=setup.allow_unsandboxed,
        environment=identity,
    )


def answer(request: RunRequest, setup: RunnerSetup) -> Iterator[bytes]:
    """The NDJSON lines answering `request`: verdicts as they finish, then the closing line;
    an {"error"} line (retry: true, the infrastructure failed) when the sandbox fails, retry:
    false when it cannot work on this machine (HostUnfit: a missing tool or privilege)."""
    refused = refusal(request, setup)
    if refused:
        yield line({"error": refused, "retry": False})
        return
    if setup.repository_roots is not None:
        try:
            request = resolve_repositories(request, setup.repository_roots)
        except SandboxError as error:  # what this machine lacks: asking again cannot help
            yield line({"error": str(error), "retry": False})
            return
    try:
        config = sandbox_config(request, setup)
        with open_sandbox(config) as sandbox:
            for result in sandbox.run(request.programs):
                yield line(result_to_json(result))
            done = {"isolation": sandbox.isolation.value, "cgroup": sandbox.cgroup}
        yield line({"done": True, **done})
    except HostUnfit as error:  # this machine lacks what the run needs: it will lack it again
        yield line({"error": f"the runner's sandbox failed: {error}", "retry": False})
    except PassbenchError as error:
        yield line({"error": f"the runner's sandbox failed: {error}", "retry": True})


def resolve_repositories(request: RunRequest, roots: RepositoryRoots) -> RunRequest:
    """`request` with its repository programs' repositories and environments found in
    `roots` (checked); SandboxError naming, in one line, all that is missing."""
    if not any(program.style == "repository" for program in request.programs):
        return request
    resolver = RepositoryResolver(roots)
    lacks = resolver.missing(request.programs)
    if lacks:
        raise SandboxError(f"{roots.runner} lacks: " + "; ".join(lacks))
    return replace(request, programs=tuple(resolver.localize(p) for p in request.programs))


def _repository_roots(repos: list[Path], env_dirs: list[str]) -> RepositoryRoots | None:
    """The folders `--repos` and `--env-dir CACHE=DIR` name, only (no clone cache, no
    caller's folder, no default cache): what a container was shown."""
    if not repos and not env_dirs:
        return None
    caches: list[tuple[str, Path]] = []
    for given in env_dirs:
        cache, equals, folder = given.partition("=")
        if not equals or not cache or not folder:
            raise ValueError(f"--env-dir {given!r}: expected CACHE=DIR")
        caches.append((cache, Path(folder)))
    return RepositoryRoots(
        repos_dirs=tuple(repos),
        env_dirs=tuple(caches),
        clone_cache=None,
        callers_folder=False,
        runner="the container",
        repos_setting="--repos",
    )


def describe(setup: RunnerSetup) -> dict[str, Any]:
    """What this runner offers, for a backend to check before it sends work."""
    scratch = setup.scratch_dir or Path(os.environ.get("TMPDIR", "/tmp")) / "passbench-scratch"
    refused = check_isolation(Path(sys.executable), scratch)
    return {
        "protocol": PROTOCOL,
        "passbench": version("passbench"),
        "environments": offered_environments(setup),
        "bubblewrap": refused is None,
        "bubblewrap_refusal": refused or "",
    }


def _no_check(env: EnvInfo) -> None:
    """The integrity check of an environment that cannot have changed."""


def _write(out: IO[bytes], copy: IO[bytes] | None, data: bytes) -> None:
    out.write(data)
    out.flush()
    if copy is not None:
        copy.write(data)
        copy.flush()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m passbench.stages.sandbox.remote.agent")
    parser.add_argument("--request", type=Path, help="the run request (default: standard input)")
    parser.add_argument("--output", type=Path, help="also append every answer line to this file")
    parser.add_argument("--envs-root", type=Path, help="folder holding the environments by name")
    parser.add_argument("--nltk-data", type=Path)
    parser.add_argument("--scratch-dir", type=Path)
    parser.add_argument("--allow-unsandboxed", action="store_true")
    parser.add_argument(
        "--skip-integrity-check",
        action="store_true",
        help="do not hash the environment before running (it is in a read-only container "
        "started from an image by id, whose files cannot have changed)",
    )
    parser.add_argument("--describe", action="store_true", help="say what this runner offers")
    parser.add_argument(
        "--repos",
        type=Path,
        action="append",
        default=[],
        help="a folder of <owner>__<name>.git mirrors repository programs are found in",
    )
    parser.add_argument(
        "--env-dir",
        action="append",
        default=[],
        metavar="CACHE=DIR",
        help="the folder of environment cache CACHE repository programs are found in",
    )
    parser.add_argument(
        "--repository-python",
        type=Path,
        help="the interpreter repository programs naming no test environment run under",
    )
    options = parser.parse_args(argv)
    try:
        roots = _repository_roots(options.repos, options.env_dir)
    except ValueError as error:
        parser.error(str(error))
    setup = RunnerSetup(
        envs_root=options.envs_root,
        nltk_data=options.nltk_data,
        scratch_dir=options.scratch_dir,
        allow_unsandboxed=options.allow_unsandboxed,
        # an image's files get new ctimes wherever its layers are unpacked, so the manifest's
        # fast check would hash all of them (50,000 files, 4-5 s) in every container
        verify=_no_check if options.skip_integrity_check else None,
        repositories=roots is not None,
        repository_roots=roots,
        repository_python=options.repository_python,
    )
    out = sys.stdout.buffer
    if options.describe:
        _write(out, None, json.dumps(describe(setup)).encode() + b"\n")
        return 0
    copy = options.output.open("ab") if options.output is not None else None
    try:
        try:
            raw = options.request.read_bytes() if options.request else sys.stdin.buffer.read()
            request = request_from_json(json.loads(raw))
        except (ValueError, OSError, WireError) as error:
            _write(out, copy, line({"error": f"bad request: {error}", "retry": False}))
            return 2
        status = 0
        for data in answer(request, setup):
            if data.startswith(b'{"error"'):
                status = 3
            _write(out, copy, data)
        return status
    finally:
        if copy is not None:
            copy.close()


if __name__ == "__main__":
    sys.exit(main())
