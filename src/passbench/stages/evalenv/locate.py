"""Finding a built environment: what the evaluator calls before it runs anything."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from passbench.core.errors import EnvironmentError_
from passbench.stages.evalenv.location import env_path, env_python
from passbench.stages.evalenv.lock import packaged_lock_path, read_lock
from passbench.stages.evalenv.metadata import EnvMetadata, read_metadata
from passbench.stages.evalenv.nltk_data import NLTK_DIR_NAME
from passbench.stages.evalenv.specs import get_spec, minor_version


@dataclass(frozen=True)
class EnvInfo:
    """A complete evaluation environment, as result files cite it."""

    name: str
    root: Path
    python: Path  # the interpreter samples run under
    lock_sha256: str
    python_version: str  # "3.11.7"
    nltk_data: Path  # what NLTK_DATA must point to inside the sandbox
    metadata: EnvMetadata

    @property
    def bin_dir(self) -> Path:
        """Must come first on the samples' PATH: some tasks run `python` or `pip` themselves."""
        return self.python.parent

    def sample_environment(self) -> dict[str, str]:
        """Variables a sample needs to find this environment's data and programs."""
        return {
            "NLTK_DATA": str(self.nltk_data),
            "PATH": f"{self.bin_dir}:/usr/local/bin:/usr/bin:/bin",
        }


def _create_hint(name: str, path: str | Path | None) -> str:
    hint = f"run `passbench env create {name}"
    if path is not None:
        hint += f" --path {path}"
    return hint + "`"


def locate_env(name: str, path: str | Path | None = None, *, allow_stale: bool = False) -> EnvInfo:
    """The built environment `name` (at `path`, or the default location).

    Raises EnvironmentError_ with the command to run when it is missing, was interrupted
    while being built, or (unless `allow_stale`) was built from a lock other than the one
    this passbench ships.
    """
    spec = get_spec(name)
    root = env_path(name, path)
    python = env_python(root)
    hint = _create_hint(name, path)
    if not python.exists():
        raise EnvironmentError_(f"no evaluation environment '{name}' at {root}: {hint}")
    metadata = read_metadata(root)
    if metadata is None:
        raise EnvironmentError_(
            f"the evaluation environment at {root} is incomplete (its creation was "
            f"interrupted or failed): {hint}"
        )
    minor = minor_version(metadata.python_version)
    if minor not in spec.locks:
        if not allow_stale:
            raise EnvironmentError_(
                f"the evaluation environment at {root} runs Python {metadata.python_version}, "
                f"for which this passbench has no {name} lock (it has locks for Python "
                f"{spec.supported_pythons}): {hint} to rebuild it with Python {spec.python}"
            )
    else:
        # Compare with the lock for the env's own Python: a 3.10 env is not stale for
        # differing from the 3.11 lock.
        lock_file = spec.lock_for(minor)
        lock = read_lock(packaged_lock_path(lock_file))
        if metadata.lock_sha256 != lock.sha256 and not allow_stale:
            raise EnvironmentError_(
                f"the evaluation environment at {root} was built from another lock "
                f"(sha256 {metadata.lock_sha256[:12]}, this passbench ships "
                f"{lock.sha256[:12]} as {lock_file} for Python {minor}): {hint} to rebuild it"
            )
    return EnvInfo(
        name=name,
        root=root,
        python=python,
        lock_sha256=metadata.lock_sha256,
        python_version=metadata.python_version,
        nltk_data=root / NLTK_DIR_NAME,
        metadata=metadata,
    )
