"""The record an environment keeps about itself (passbench-env.json inside it).

It is written last, after every package is installed, so its presence means "complete"; its
lock hash tells `env create` whether the environment is up to date, and evaluation results
cite it (lock sha256, Python version) so a score can be traced to the exact packages.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from passbench.core.errors import EnvironmentError_
from passbench.stages.evalenv.location import METADATA_FILE

#: Bump when a field changes meaning.
METADATA_SCHEMA_VERSION = 1

_REQUIRED = ("name", "lock_file", "lock_sha256", "python_version", "created_at")


@dataclass(frozen=True)
class EnvMetadata:
    """What an environment was built from."""

    name: str
    lock_file: str
    lock_sha256: str
    python_version: str  # "3.11.7": the interpreter inside the environment
    created_at: str  # ISO 8601, UTC
    passbench_version: str = ""
    platform: str = ""  # "Linux-x86_64"
    install_seconds: float = 0.0
    # NLTK package -> where it came from: "downloader", "copied from DIR", or "missing"
    nltk_packages: Mapping[str, str] = field(default_factory=dict)
    schema_version: int = METADATA_SCHEMA_VERSION

    def to_json(self) -> str:
        data = asdict(self)
        data["nltk_packages"] = dict(self.nltk_packages)
        return json.dumps(data, indent=2, sort_keys=True) + "\n"


def metadata_path(root: Path) -> Path:
    return root / METADATA_FILE


def read_metadata(root: Path) -> EnvMetadata | None:
    """The environment's record, or None when there is none (not built, or interrupted)."""
    path = metadata_path(root)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except OSError as error:
        raise EnvironmentError_(f"{path}: cannot read: {error.strerror}") from error
    try:
        data: Any = json.loads(text)
    except json.JSONDecodeError as error:
        raise EnvironmentError_(
            f"{path}:{error.lineno}: not valid JSON ({error.msg}); "
            "rebuild with passbench env create --force"
        ) from error
    if not isinstance(data, dict):
        raise EnvironmentError_(f"{path}: expected a JSON object")
    missing = [key for key in _REQUIRED if not isinstance(data.get(key), str)]
    if missing:
        raise EnvironmentError_(
            f"{path}: field '{missing[0]}' is missing or not a string; "
            "rebuild with passbench env create --force"
        )
    known = set(EnvMetadata.__dataclass_fields__)
    return EnvMetadata(**{key: value for key, value in data.items() if key in known})


def write_metadata(root: Path, metadata: EnvMetadata) -> Path:
    """Write the record atomically (a reader never sees half a file)."""
    path = metadata_path(root)
    partial = path.with_name(path.name + ".partial")
    partial.write_text(metadata.to_json(), encoding="utf-8")
    os.replace(partial, path)
    return path
