"""Lock files: every package of an evaluation environment pinned with `==`.

A lock is a pip requirements file that `pip install --no-deps -r LOCK` installs as is, so two
machines that install the same lock get the same packages. Its sha256 identifies the
environment in result files. Only this subset of the requirements syntax is accepted:

    # comment
    name==version        # trailing comment

No ranges, extras, markers, options (`-i`, `-r`, `--hash`) or URLs: anything else would make
the installed set depend on the day or the machine.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from passbench.core.errors import InputError

# PEP 508 names; versions as PEP 440 public versions (digits, letters, dots, + local labels).
_PIN = re.compile(
    r"^(?P<name>[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)==(?P<version>[A-Za-z0-9.!+_-]+)$"
)


@dataclass(frozen=True)
class Pin:
    """One `name==version` line of a lock file."""

    name: str  # as written in the file
    version: str
    line: int  # 1-based line number, for messages

    @property
    def key(self) -> str:
        """The PEP 503 normalized name: what pip compares."""
        return normalize_name(self.name)

    def __str__(self) -> str:
        return f"{self.name}=={self.version}"


@dataclass(frozen=True)
class Lock:
    """A parsed, validated lock file."""

    path: str  # where it was read from (for messages)
    pins: tuple[Pin, ...]
    sha256: str  # of the file's bytes: the environment's identity in result files

    def versions(self) -> dict[str, str]:
        """Normalized name -> pinned version."""
        return {pin.key: pin.version for pin in self.pins}


def normalize_name(name: str) -> str:
    """PEP 503: lower case, runs of `-`, `_`, `.` become one `-`."""
    return re.sub(r"[-_.]+", "-", name).lower()


def parse_lock(text: str, *, path: str = "<lock>") -> Lock:
    """Parse and validate lock text; raise InputError naming the line of the first problem."""
    pins: list[Pin] = []
    seen: dict[str, int] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        match = _PIN.match(line)
        if match is None:
            raise InputError(
                f"expected 'name==version', got {line!r} (locks pin every package exactly)",
                path=path,
                line=number,
            )
        pin = Pin(match["name"], match["version"], number)
        if pin.key in seen:
            raise InputError(
                f"{pin.name} is pinned twice (first on line {seen[pin.key]})",
                path=path,
                line=number,
            )
        seen[pin.key] = number
        pins.append(pin)
    if not pins:
        raise InputError("the lock file pins no package", path=path)
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return Lock(path=path, pins=tuple(pins), sha256=digest)


def read_lock(path: Path) -> Lock:
    """Read a lock file from disk."""
    try:
        data = path.read_bytes()
    except OSError as error:
        raise InputError(f"cannot read lock file: {error.strerror}", path=path) from error
    # Hash the bytes as stored, so the identity does not depend on how we decode them.
    lock = parse_lock(data.decode("utf-8"), path=str(path))
    return Lock(path=lock.path, pins=lock.pins, sha256=hashlib.sha256(data).hexdigest())


def packaged_lock_path(filename: str) -> Path:
    """Path of a lock file shipped inside the package (src/passbench/stages/evalenv/locks/).

    An absolute `filename` is returned as is (a spec registered outside passbench).
    """
    if Path(filename).is_absolute():
        return Path(filename)
    resource = resources.files("passbench.stages.evalenv").joinpath("locks", filename)
    # Locks are installed as plain files (not zipped), and pip needs a real path for `-r`.
    return Path(str(resource))
