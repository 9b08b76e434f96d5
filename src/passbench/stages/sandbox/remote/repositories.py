"""Repository programs (SWE-bench) on a machine that does not share the caller's files.

A "repository" program names host paths of the machine that made it: the git directory of the
repository, the test environment's interpreter, its folders and the per-run install prefix
(records.RepositorySpec). A node of a Ray cluster, or a `passbench serve` (serve/programs.py),
has its own disks, so the program also names what those paths are by identity (`repo`
"owner/name" and the commit; the environment's cache, lock sha256 and Python version:
records.RepositoryEnvironment), and the node (or server) finds them itself:

- the repository in the node's own folders of `<owner>__<name>.git` mirrors: its repos folder
  (PASSBENCH_REPOS where the node runs, or `RepositoryRoots.repos_dirs`), then passbench's clone
  cache there (`<cache dir>/repos`); only when the node has no repos folder of its own, the
  caller's folder when the same path exists on the node (one machine, a shared disk; never on
  a server, which strangers call: `RepositoryRoots.callers_folder`). Which file there is read
  is decided here (`<folder>/<owner>__<name>.git`), never by the caller's path, and the commit
  must be in it;
- the environment in the node's cache of that name ($PASSBENCH_<CACHE>_ENV_DIR where the node
  runs, else envs/<cache> in its user data folder), published as `<cache>/<lock sha256>`, a link
  to its real folder inside the cache; its record must name the same lock and Python version,
  and its integrity manifest must hold (the fast check `env create` and `env check` make);
- then the program's paths are rewritten, the caller's environment folder and base interpreter
  prefix becoming the node's, in its interpreter, read-only folders, fresh folders, variables,
  script and the files the program names (`RepositoryEnvironment.rewrite`); every folder the
  program would show in its sandbox must then lie in the node's environment, else it is refused;
- its git submodules (astropy's astropy_helpers: records.RepositorySubmodule) the same way as
  the repository, each by its own "owner/name" and commit in the same folders;
- its loopback services (requests' httpbin: records.LoopbackService) from the node's build of
  the tool environment each names by identity, found and checked like the test environment;
  the service's command and read-only folders are rewritten to that build and must lie in it,
  else it is refused (a service without one is refused too). Services and the tarpit need the
  node to run passbench as root, which `missing` says as well.

A node or server that lacks any of these says which (`missing`), so the backend
can refuse the run before anything runs, naming it (`needs`: what a backend asks about). The
sandbox that runs the program is the local backend's (host/repositories.py), so a verdict's raw
data (the output, the exit code, the pytest channel's records) is what a local run gives; the
benchmark judges it on the caller.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any

from passbench.core.errors import PassbenchError, SandboxError
from passbench.core.records import (
    LoopbackService,
    Program,
    RepositoryEnvironment,
    RepositorySubmodule,
)
from passbench.core.settings import default_cache_dir
from passbench.stages.evalenv.location import envs_root
from passbench.stages.evalenv.manifest import verify_manifest
from passbench.stages.sandbox.host.workingcopy import has_commit, is_git_dir
from passbench.stages.sandbox.remote.wire import safe_relative_path

#: Where a node's own mirrors are (as `--repos` names them on the caller).
REPOS_VARIABLE = "PASSBENCH_REPOS"
_CACHE_VARIABLE = "PASSBENCH_CACHE_DIR"
_REPO = re.compile(r"([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+)")
_COMMIT = re.compile(r"[0-9a-f]{40}")
_SHA256 = re.compile(r"[0-9a-f]{64}")
_CACHE_NAME = re.compile(r"[a-z][a-z0-9_-]{0,63}")


def mirror_name(repo: str) -> str | None:
    """The mirror folder's name of `repo` ("psf/requests" -> "psf__requests.git"), or None for
    a name that is not "owner/name"."""
    match = _REPO.fullmatch(repo)
    if match is None or {match.group(1), match.group(2)} & {".", ".."}:
        return None
    return f"{match.group(1)}__{match.group(2)}.git"


def env_dir_variable(cache: str) -> str:
    """The variable naming environment cache `cache`'s folder: PASSBENCH_<CACHE>_ENV_DIR."""
    return f"PASSBENCH_{cache.upper().replace('-', '_')}_ENV_DIR"


@dataclass(frozen=True)
class RepositoryRoots:
    """Where this machine keeps what repository programs name (see the module docstring)."""

    repos_dirs: tuple[Path, ...] = ()  # folders of <owner>__<name>.git mirrors, in order
    env_dirs: tuple[tuple[str, Path], ...] = ()  # environment caches by name, over the defaults
    # passbench's clone cache (<cache dir>/repos), searched after `repos_dirs`
    clone_cache: Path | None = None
    # where the mirrors' history caches are kept (<cache dir>/git-histories, as `evaluate`
    # keeps them; SandboxConfig.history_dir); None: none
    history_dir: Path | None = None
    # the caller's mirror folder, when this machine has none of its own and the path exists
    callers_folder: bool = True
    environ: Mapping[str, str] = field(default_factory=dict)
    # how messages name this machine and the setting naming its mirrors (a node's, a server's)
    runner: str = "this node"
    repos_setting: str = REPOS_VARIABLE
    # whether the runner runs passbench as root, as the loopback services and the tarpit need
    # (None: this process's uid says; a container backend checks on the host for a container
    # whose agent is root whatever the host's user is)
    as_root: bool | None = None

    @classmethod
    def here(cls, environ: Mapping[str, str] | None = None) -> RepositoryRoots:
        """This machine's folders, from its environment: PASSBENCH_REPOS (one folder, or
        several separated by ':'), passbench's clone cache, the caches' variables."""
        env = dict(os.environ if environ is None else environ)
        repos = tuple(Path(p).expanduser() for p in env.get(REPOS_VARIABLE, "").split(":") if p)
        cache = env.get(_CACHE_VARIABLE, "").strip()
        cache_dir = Path(cache).expanduser() if cache else default_cache_dir()
        return cls(
            repos_dirs=repos,
            clone_cache=cache_dir / "repos",
            history_dir=cache_dir / "git-histories",
            environ=env,
        )

    def env_folder(self, cache: str) -> Path:
        explicit = dict(self.env_dirs).get(cache)
        if explicit is not None:
            return explicit.expanduser().absolute()
        override = self.environ.get(env_dir_variable(cache), "").strip()
        if override:
            return Path(override).expanduser().absolute()
        return (envs_root() / cache).absolute()

    def mirror_folders(self, callers: str) -> list[Path]:
        """The folders searched for mirrors, in order; `callers` is the caller's folder."""
        folders = list(self.repos_dirs)
        if not folders and self.callers_folder and callers and os.path.isabs(callers):
            folders.append(Path(callers))
        if self.clone_cache is not None:
            folders.append(self.clone_cache)
        return folders


@dataclass(frozen=True)
class _Found:
    root: Path
    base_prefix: Path


class RepositoryResolver:
    """Finds what repository programs name on this machine, each environment checked once
    (its manifest verified the first time it is used, as a sandbox checks its environment
    when it opens)."""

    def __init__(self, roots: RepositoryRoots | None = None) -> None:
        self.roots = roots or RepositoryRoots.here()
        self._environments: dict[tuple[str, str], _Found] = {}
        self._commits: dict[tuple[str, str], Path] = {}

    # -- what is missing

    def missing(self, programs: Iterable[Program]) -> list[str]:
        """What this machine lacks to run `programs`, one line each (empty: nothing)."""
        lines: list[str] = []
        seen: set[tuple[str, ...]] = set()

        def check(key: tuple[str, ...], find: Callable[[], object]) -> None:
            if key not in seen:
                seen.add(key)
                lines.extend(_error_of(find))

        for program in programs:
            spec = program.repository
            if program.style != "repository" or spec is None:
                continue
            check(
                ("repo", spec.repo, spec.commit, str(Path(spec.git_dir).parent)),
                partial(self.mirror, spec.repo, spec.commit, spec.git_dir),
            )
            for sub in spec.submodules:
                check(
                    ("repo", sub.repo, sub.commit, str(Path(sub.git_dir).parent)),
                    partial(self.mirror, sub.repo, sub.commit, sub.git_dir, sub.path),
                )
            if spec.environment is not None:
                check(
                    ("env", spec.environment.cache, spec.environment.lock_sha256),
                    partial(self.environment, spec.environment),
                )
            for service in spec.services:
                # its tool environment, and that it shows nothing outside it
                check(("service", repr(service)), partial(self._service, program.key, service))
            if spec.services or spec.tarpit:
                check(("root",), self._as_root)
        return lines

    def _as_root(self) -> None:
        root = os.geteuid() == 0 if self.roots.as_root is None else self.roots.as_root
        if not root:
            raise SandboxError(
                f"{self.roots.runner} does not run passbench as root: the loopback "
                "services (requests' httpbin) and the tarpit need it run as root"
            )

    # -- the repository

    def mirror(self, repo: str, commit: str, callers_git_dir: str, submodule: str = "") -> Path:
        """This machine's git directory holding `repo` with `commit` (the repository's, or
        that of its submodule at path `submodule`); `callers_git_dir` is where the caller has
        it. SandboxError naming what is missing."""
        of = f" (the submodule {submodule})" if submodule else ""
        if not repo:
            raise SandboxError(
                f"a repository program without its repository's name{of} (owner/name) cannot "
                "run on another machine: the caller's passbench is older than this one"
            )
        name = mirror_name(repo)
        if name is None or not _COMMIT.fullmatch(commit):
            raise SandboxError(f"not a repository and commit{of}: {repo!r} {commit!r}")
        cached = self._commits.get((repo, commit))
        if cached is not None:
            return cached
        folders = self.roots.mirror_folders(str(Path(callers_git_dir).parent))
        for folder in folders:
            git_dir = folder / name
            if is_git_dir(git_dir) and has_commit(git_dir, commit):
                self._commits[(repo, commit)] = git_dir
                return git_dir
        searched = ", ".join(str(folder) for folder in folders) or "no folder"
        raise SandboxError(
            f"no mirror of {repo}{of} with commit {commit[:12]} ({name} in: {searched}); "
            f"set {self.roots.repos_setting} where {self.roots.runner} runs to a folder with one"
        )

    # -- the environment

    def environment(self, wanted: RepositoryEnvironment) -> _Found:
        """This machine's build of `wanted`'s lock, checked; SandboxError naming what is
        missing or wrong."""
        key = (wanted.cache, wanted.lock_sha256)
        found = self._environments.get(key)
        if found is not None:
            return found
        if not _CACHE_NAME.fullmatch(wanted.cache) or not _SHA256.fullmatch(wanted.lock_sha256):
            raise SandboxError(
                f"not an environment cache and lock: {wanted.cache!r} {wanted.lock_sha256!r}"
            )
        folder = self.roots.env_folder(wanted.cache)
        label = f"the '{wanted.cache}' environment of lock {wanted.lock_sha256[:12]}"
        link = folder / wanted.lock_sha256
        if not link.is_dir():
            raise SandboxError(
                f"no '{wanted.cache}' environment of lock {wanted.lock_sha256[:12]} (Python "
                f"{wanted.python_version}) in {folder}: build it there with "
                f"passbench env create, or set {env_dir_variable(wanted.cache)} where "
                f"{self.roots.runner} runs"
            )
        root = link.resolve()
        if not root.is_relative_to(folder.resolve()):
            raise SandboxError(f"{label} in {folder} points outside it ({root}): refused")
        record = _read_record(root / wanted.record)
        if record.get("lock_sha256") != wanted.lock_sha256:
            raise SandboxError(f"{label} in {folder} has no record of that lock: refused")
        version = str(record.get("python_version", ""))
        if version != wanted.python_version:
            raise SandboxError(
                f"{label} in {folder} runs Python {version or '(unknown)'}, this run's "
                f"{wanted.python_version}: build it from the same interpreter version"
            )
        base_prefix = record.get("base_prefix")
        if not isinstance(base_prefix, str) or not os.path.isabs(base_prefix):
            raise SandboxError(f"{label} in {folder}: its record names no base interpreter")
        outcome = verify_manifest(root)
        if not outcome.intact:
            raise SandboxError(
                f"{label} at {root} changed after it was built: {outcome.change}; rebuild it"
            )
        found = _Found(root, Path(base_prefix))
        self._environments[key] = found
        return found

    # -- the program, with this machine's paths

    def localize(self, program: Program) -> Program:
        """`program` with this machine's git directories and environments in place of the
        caller's paths; SandboxError when something is missing or the program names host
        folders outside its environments."""
        spec = program.repository
        if program.style != "repository" or spec is None:
            return program
        git_dir = self.mirror(spec.repo, spec.commit, spec.git_dir)
        submodules = tuple(self._submodule(program.key, sub) for sub in spec.submodules)
        services = tuple(self._service(program.key, service) for service in spec.services)
        if spec.services or spec.tarpit:
            self._as_root()
        environment = spec.environment
        if environment is None:
            # the sandbox's own interpreter: no host folder of the caller's may be shown
            if spec.python is not None or spec.read_only or spec.fresh_dirs:
                raise SandboxError(
                    f"{program.key}: a repository program that names host folders without "
                    "naming its environment: refused"
                )
            local = replace(spec, git_dir=str(git_dir), submodules=submodules, services=services)
            return replace(program, repository=local)
        found = self.environment(environment)
        moved = _Mover(
            {environment.root: str(found.root), environment.base_prefix: str(found.base_prefix)}
        )
        files = tuple(
            (name, moved.text(text) if name in environment.rewrite else text)
            for name, text in spec.files
        )
        local = replace(
            spec,
            git_dir=str(git_dir),
            submodules=submodules,
            python=moved.text(spec.python) if spec.python is not None else None,
            read_only=tuple(moved.text(path) for path in spec.read_only),
            fresh_dirs=tuple(moved.text(path) for path in spec.fresh_dirs),
            env=tuple((name, moved.text(value)) for name, value in spec.env),
            script=moved.text(spec.script),
            files=files,
            services=services,
            environment=replace(
                environment, root=str(found.root), base_prefix=str(found.base_prefix)
            ),
        )
        paths = [*local.read_only, *local.fresh_dirs]
        if local.python is not None:
            paths.append(local.python)
        _check_inside(program.key, paths, (found.root, found.base_prefix))
        return replace(program, repository=local)

    def _submodule(self, key: str, sub: RepositorySubmodule) -> RepositorySubmodule:
        if not safe_relative_path(sub.path):
            raise SandboxError(f"{key}: submodule path {sub.path!r} is not a plain relative path")
        return replace(sub, git_dir=str(self.mirror(sub.repo, sub.commit, sub.git_dir, sub.path)))

    def _service(self, key: str, service: LoopbackService) -> LoopbackService:
        """`service` run from this machine's build of its tool environment: its interpreter
        and every folder it shows lie there, else it is refused."""
        wanted = service.environment
        if wanted is None:
            raise SandboxError(
                f"{key}: the loopback service {service.name} does not name its tool "
                "environment: refused"
            )
        found = self.environment(wanted)
        moved = _Mover({wanted.root: str(found.root), wanted.base_prefix: str(found.base_prefix)})
        local = replace(
            service,
            argv=tuple(moved.text(arg) for arg in service.argv),
            read_only=tuple(moved.text(path) for path in service.read_only),
            environment=replace(wanted, root=str(found.root), base_prefix=str(found.base_prefix)),
        )
        # its command is its environment's interpreter; its other arguments are the run's own
        # files (/run/passbench/files), never a host path
        _check_inside(key, [*local.read_only, *local.argv[:1]], (found.root, found.base_prefix))
        return local


def needs(programs: Iterable[Program]) -> dict[tuple[str, ...], Program]:
    """What `programs` need of a machine that runs them, each once (the repository, its
    commit, the caller's git directory and the environment's lock), with a program reduced to
    what `RepositoryResolver.missing` checks (no patch, no files): what a backend asks a node
    or a server before it sends them."""
    found: dict[tuple[str, ...], Program] = {}
    for program in programs:
        spec = program.repository
        if program.style != "repository" or spec is None:
            continue
        lock = spec.environment.lock_sha256 if spec.environment is not None else ""
        key = (
            spec.repo,
            spec.commit,
            spec.git_dir,
            lock,
            *(f"{sub.repo}@{sub.commit}@{sub.git_dir}" for sub in spec.submodules),
            *(f"service:{s.environment.lock_sha256}" for s in spec.services if s.environment),
            f"root:{bool(spec.services or spec.tarpit)}",
        )
        if key not in found:
            found[key] = replace(program, source="", repository=replace(spec, script="", files=()))
    return found


class _Mover:
    """Replaces the caller's folders with this machine's, as whole path components."""

    def __init__(self, moves: Mapping[str, str]) -> None:
        self._moves = {old.rstrip("/"): new for old, new in moves.items() if old.strip("/")}
        olds = sorted(self._moves, key=len, reverse=True)
        # a folder's name followed by the end, a '/', or what ends a path in a shell line or a
        # variable (so /a/env never matches /a/env2)
        self._pattern = (
            re.compile("(?:" + "|".join(re.escape(old) for old in olds) + r")(?=\Z|[/:\s'\";)=])")
            if olds
            else None
        )

    def text(self, text: str) -> str:
        if self._pattern is None:
            return text
        return self._pattern.sub(lambda match: self._moves[match.group(0)], text)


def _check_inside(key: str, paths: Sequence[str], allowed: Sequence[Path]) -> None:
    """Every host path the sandbox would show is inside this machine's environment."""
    for path in paths:
        if not os.path.isabs(path) or ".." in Path(path).parts:
            raise SandboxError(f"{key}: host path {path!r} is not a plain absolute path")
        if not any(Path(path) == root or Path(path).is_relative_to(root) for root in allowed):
            raise SandboxError(
                f"{key}: host path {path} is outside the program's environment: refused"
            )


def _error_of(find: Callable[[], object]) -> list[str]:
    try:
        find()
    except PassbenchError as error:
        return [str(error)]
    return []


def _read_record(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}
