"""What a container of repository programs (SWE-bench) is shown of this machine.

The container runs on this machine, so nothing is copied: the host folders a batch's programs
name are bind-mounted read-only at their own paths, and the agent inside finds each program's
repository and test environment there by identity, as a Ray node finds them in its own folders
(remote/repositories.py: the commit in `<folder>/<owner>__<name>.git`; the environment's link,
record, Python version and integrity manifest), and refuses the request when any is missing.

Shown, and nothing else of the host:

- the folders holding the mirrors the programs name (the caller's --repos / PASSBENCH_REPOS
  folder, or the clone cache), their submodules' too, and where a mirror that is a symbolic
  link leads;
- the environment cache folder of each environment named (the test environment's and the
  loopback services' tool environments': $PASSBENCH_<CACHE>_ENV_DIR, else envs/<cache> in the
  user data folder, as `RepositoryRoots` finds it here);
- the prefix of each such environment's base interpreter (its record's `base_prefix`, a pyenv
  version folder, say): the environments are prefixes whose standard library is the base's, so
  it must be at the same path inside, and it runs on the image's Debian (its system libraries);
- when a program names no test environment (none is built for its instance), the folders of
  the interpreter it runs under locally (the one passbench runs on), which the agent is told to
  run it under: not the image's, which has other packages (no pytest), so that its verdict is
  the local one.

Before a container starts, this machine is checked the same way (`repository_batch`): a mirror
without the commit, an environment not built, changed or of another Python, is named in one
line and nothing runs. A folder that would hide part of the image (`/usr`, `/etc`, ...: an
environment built from the system's own Python) cannot be shown and is refused too.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from passbench.core.errors import SandboxError
from passbench.core.records import Program, RepositoryEnvironment
from passbench.stages.sandbox.host.launch import Interpreter, inspect_interpreter
from passbench.stages.sandbox.remote.repositories import RepositoryResolver, RepositoryRoots

#: The image's own folders: a host folder at or above one of them, or inside one, would hide
#: what the agent and its sandbox run on.
IMAGE_FOLDERS = (
    "/usr",
    "/etc",
    "/bin",
    "/sbin",
    "/lib",
    "/lib64",
    "/opt/passbench",
    "/proc",
    "/sys",
    "/dev",
    "/run",
    "/home/passbench",
)
#: Folders a container has of its own (scratch, HOME): a host folder may lie inside (pytest's
#: temporary folders do) but not be one or above one.
OWN_FOLDERS = ("/tmp",)
#: What the setting naming this machine's mirrors is, in messages.
REPOS_SETTING = "--repos (or PASSBENCH_REPOS)"


@dataclass(frozen=True)
class RepositoryBatch:
    """The host folders one container of repository programs is shown (read-only, at their
    own paths), what the agent is told of them, and the most memory one of its runs may take."""

    repos_dirs: tuple[Path, ...]
    env_dirs: tuple[tuple[str, Path], ...]
    base_prefixes: tuple[Path, ...]
    memory_mb: int  # the largest of its programs' (RepositorySpec.memory_mb)
    # the caller's interpreter and its folders, for programs that name no test environment
    python: Path | None = None
    python_folders: tuple[Path, ...] = ()
    # where mirrors that are symbolic links lead (a mirror folder of links to git directories
    # kept elsewhere): shown too, or the links would lead nowhere inside
    linked_mirrors: tuple[Path, ...] = ()

    def folders(self) -> tuple[Path, ...]:
        shown = [
            *self.repos_dirs,
            *self.linked_mirrors,
            *(folder for _, folder in self.env_dirs),
            *self.base_prefixes,
            *self.python_folders,
        ]
        return tuple(dict.fromkeys(shown))

    def engine_options(self) -> list[str]:
        """The engine's read-only bind mounts (same path inside)."""
        return [f"--volume={folder}:{folder}:ro" for folder in self.folders()]

    def agent_options(self) -> list[str]:
        """What the agent is told to search (and nothing else)."""
        options: list[str] = []
        for folder in self.repos_dirs:
            options += ["--repos", str(folder)]
        for cache, folder in self.env_dirs:
            options += ["--env-dir", f"{cache}={folder}"]
        if self.python is not None:
            options += ["--repository-python", str(self.python)]
        return options


def repository_batch(
    programs: Sequence[Program],
    where: str,
    python: Path,
    environ: Mapping[str, str] | None = None,
) -> RepositoryBatch | None:
    """What a container running `programs` must be shown (None: no repository program among
    them; `python`: the interpreter a program without a test environment runs under locally);
    SandboxError, one line, naming what this machine lacks or cannot show."""
    specs = [p.repository for p in programs if p.style == "repository" and p.repository]
    if not specs:
        return None
    repos: dict[Path, None] = {}
    linked: dict[Path, None] = {}
    for spec in specs:
        for git_dir in (spec.git_dir, *(sub.git_dir for sub in spec.submodules)):
            path = Path(git_dir)
            repos[path.parent] = None
            target = path.resolve()
            if target != path.parent.resolve() / path.name:
                linked[target] = None
    roots = RepositoryRoots(
        repos_dirs=tuple(repos),
        clone_cache=None,
        callers_folder=False,
        environ=dict(os.environ if environ is None else environ),
        runner="this machine",
        repos_setting=REPOS_SETTING,
        # the agent runs as root in a container of repository programs, whoever runs this
        as_root=True,
    )
    resolver = RepositoryResolver(roots)
    lacks = resolver.missing(programs)
    if lacks:
        raise SandboxError(f"{where}: this machine lacks: " + "; ".join(lacks))
    environments: dict[tuple[str, str], RepositoryEnvironment] = {}
    for spec in specs:
        named = [spec.environment, *(service.environment for service in spec.services)]
        for environment in named:
            if environment is not None:
                environments[(environment.cache, environment.lock_sha256)] = environment
    env_dirs: dict[str, Path] = {}
    prefixes: dict[Path, None] = {}
    for environment in environments.values():
        env_dirs[environment.cache] = roots.env_folder(environment.cache)
        prefixes[resolver.environment(environment).base_prefix] = None
    interpreter: Interpreter | None = None
    if any(spec.environment is None for spec in specs):
        interpreter = inspect_interpreter(Path(os.path.abspath(python)))
    batch = RepositoryBatch(
        repos_dirs=tuple(repos),
        env_dirs=tuple(sorted(env_dirs.items())),
        base_prefixes=tuple(prefixes),
        memory_mb=max(spec.memory_mb for spec in specs),
        python=Path(os.path.abspath(python)) if interpreter is not None else None,
        python_folders=tuple(Path(p) for p in interpreter.paths) if interpreter else (),
        linked_mirrors=tuple(linked),
    )
    for folder in batch.folders():
        refused = _cannot_show(folder)
        if refused:
            raise SandboxError(f"{where}: {refused}")
    return batch


def _cannot_show(folder: Path) -> str:
    """Why `folder` cannot be bind-mounted at its own path in the runner image ("" if it can)."""
    text = str(folder)
    if not folder.is_absolute() or not folder.is_dir():
        return f"{text} is not a folder of this machine"
    if any(mark in text for mark in (":", ",")) or any(c.isspace() for c in text):
        # the engines' --volume syntax has no quoting
        return f"{text} cannot be shown to a container (':', ',' or a space in its path)"
    for image in (*IMAGE_FOLDERS, *OWN_FOLDERS):
        if folder == Path(image) or Path(image).is_relative_to(folder):
            return (
                f"{text} cannot be shown to a container: it would hide the image's {image} "
                "(an environment must be built from an interpreter outside the system "
                "folders, such as a pyenv version)"
            )
    for image in IMAGE_FOLDERS:
        if folder.is_relative_to(image):
            return (
                f"{text} cannot be shown to a container: it lies in the image's {image} "
                "(an environment must be built from an interpreter outside the system "
                "folders, such as a pyenv version)"
            )
    return ""
