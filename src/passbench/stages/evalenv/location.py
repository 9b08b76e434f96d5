"""Where evaluation environments live on disk.

    --path / --env-dir  >  $PASSBENCH_ENV_DIR  >  user_data_dir("passbench")/envs/<name>

PASSBENCH_ENV_DIR names the environment's folder itself, as `--path` does (and as
`passbench evaluate --env-dir` and the settings module read it). A tool environment names its
own variable instead (`EnvSpec.dir_variable`: PASSBENCH_SECURITY_ENV_DIR for `security`), so
one variable never names two environments' folders.

Resolved when called, never at import, so tests and the CLI can change the environment.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import platformdirs

from passbench.core.errors import UnknownNameError
from passbench.stages.evalenv.specs import get_spec

#: Environment variable naming the evaluation environment's folder.
ENV_DIR_VARIABLE = "PASSBENCH_ENV_DIR"

#: Environment variable naming the benchmark data folder (offline NLTK data lives under it).
DATA_DIR_VARIABLE = "PASSBENCH_DATA_DIR"

#: The file inside an environment that records what it was built from.
METADATA_FILE = "passbench-env.json"


def envs_root() -> Path:
    """The default folder holding every environment (the user data dir)."""
    return Path(platformdirs.user_data_dir("passbench")) / "envs"


def env_path(
    name: str, path: str | Path | None = None, environ: Mapping[str, str] | None = None
) -> Path:
    """The folder of environment `name`: `path`, else its variable ($PASSBENCH_ENV_DIR, see
    `dir_variable`), else the default."""
    if path is not None:
        return Path(path).expanduser().absolute()
    env = os.environ if environ is None else environ
    override = env.get(dir_variable(name), "").strip()
    if override:
        return Path(override).expanduser().absolute()
    return (envs_root() / name).absolute()


def dir_variable(name: str) -> str:
    """The environment variable naming environment `name`'s folder (PASSBENCH_ENV_DIR unless
    its spec names another; an unregistered name gets PASSBENCH_ENV_DIR too)."""
    try:
        return get_spec(name).dir_variable
    except UnknownNameError:
        return ENV_DIR_VARIABLE


def env_python(root: Path) -> Path:
    """The interpreter of the virtual environment at `root` (POSIX layout)."""
    return root / "bin" / "python"


def default_nltk_source(environ: Mapping[str, str] | None = None) -> Path | None:
    """$PASSBENCH_DATA_DIR/nltk_data when that folder exists: the offline NLTK data."""
    env = os.environ if environ is None else environ
    data_dir = env.get(DATA_DIR_VARIABLE, "").strip()
    if not data_dir:
        return None
    candidate = Path(data_dir).expanduser() / "nltk_data"
    return candidate if candidate.is_dir() else None
