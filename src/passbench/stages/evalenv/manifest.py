"""Integrity of an evaluation environment: a manifest of its files, checked before every use.

Every sample runs under the environment's interpreter and imports its packages, so a file
changed there (a `.pth` file or a `sitecustomize.py` dropped into site-packages, a patched
`unittest`, a planted `.pyc`) changes every later verdict. Inside the sandbox the environment is
read-only; a run allowed to go without it (`--allow-unsandboxed`), or anything else running as
the user, could write to it. So `env create` records every file (path, size, times, sha256) in
`passbench-manifest.json`, and the evaluator verifies the environment before it starts samples:

- fast path, every run: one `lstat` per file. A file whose size, mtime or ctime differs from the
  manifest is hashed again; one added or removed is a change at once. The ctime matters: a
  process can set a file's mtime back (`os.utime`), but not its ctime, which the kernel sets on
  every change of content or metadata.
- full check (`passbench env verify NAME`): every file hashed.

A file whose times changed but whose content did not (a backup restored, `touch`) is accepted
and its times are updated in the manifest. An environment built before manifests existed gets
one recorded the first time it is verified (trust on first use, said out loud).

What this cannot do: a process that can write the environment can also rewrite the manifest to
match. It catches accidents and opportunistic tampering, not a sample written to defeat
passbench itself; after running untrusted code unsandboxed, rebuild the environment.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from passbench.core.errors import EnvironmentError_

MANIFEST_FILE = "passbench-manifest.json"
MANIFEST_SCHEMA_VERSION = 1
_CHUNK = 1 << 20


@dataclass(frozen=True)
class FileState:
    """One file as the manifest knows it. `digest` is the sha256 of a regular file's content,
    `link:` + the target of a symbolic link, or `special` for anything else."""

    size: int
    mtime_ns: int
    ctime_ns: int
    digest: str = ""

    def same_stat(self, other: FileState) -> bool:
        return (self.size, self.mtime_ns, self.ctime_ns) == (
            other.size,
            other.mtime_ns,
            other.ctime_ns,
        )


@dataclass(frozen=True)
class Verification:
    """The outcome of one check. `change` names the first difference ("" when intact)."""

    root: Path
    files: int
    hashed: int  # files whose content was read (all of them for a full check)
    seconds: float
    change: str = ""
    recorded: bool = False  # no manifest existed: one was written now

    @property
    def intact(self) -> bool:
        return not self.change


def manifest_path(root: Path) -> Path:
    return root / MANIFEST_FILE


def _scan(root: Path) -> Iterator[tuple[str, os.stat_result]]:
    """(path relative to `root`, lstat) of every non-directory below `root`, links not followed,
    without the manifest itself."""
    top = str(root)
    pending = [""]
    while pending:
        relative = pending.pop()
        # plain strings, not Path objects: this runs for every folder of an environment
        # (10k of them for BigCodeBench's) before every evaluation
        with os.scandir(os.path.join(top, relative) if relative else top) as entries:
            for entry in entries:
                name = f"{relative}/{entry.name}" if relative else entry.name
                if entry.is_dir(follow_symlinks=False):
                    pending.append(name)
                elif not relative and entry.name.startswith(MANIFEST_FILE):
                    continue  # the manifest and its partial write
                else:
                    yield name, entry.stat(follow_symlinks=False)


def _state(info: os.stat_result, digest: str = "") -> FileState:
    return FileState(info.st_size, info.st_mtime_ns, info.st_ctime_ns, digest)


def _digest(path: Path, info: os.stat_result) -> str:
    if stat.S_ISLNK(info.st_mode):
        return "link:" + os.readlink(path)
    if not stat.S_ISREG(info.st_mode):
        return "special"
    sha = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(_CHUNK):
            sha.update(chunk)
    return sha.hexdigest()


def read_manifest(root: Path) -> dict[str, FileState] | None:
    """The recorded files, or None when the environment has no manifest."""
    path = manifest_path(root)
    try:
        data: Any = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as error:
        raise EnvironmentError_(
            f"{path}: cannot be read ({error}); rebuild the environment with "
            "`passbench env create NAME --force`"
        ) from error
    if not isinstance(data, dict) or data.get("schema_version") != MANIFEST_SCHEMA_VERSION:
        raise EnvironmentError_(
            f"{path}: not a manifest this passbench reads; rebuild the environment with "
            "`passbench env create NAME --force`"
        )
    return {row[0]: FileState(*row[1:]) for row in data["files"]}


def write_manifest(root: Path, files: Mapping[str, FileState]) -> Path:
    """Write the manifest atomically (a reader never sees half of one)."""
    path = manifest_path(root)
    document = {
        "schema_version": MANIFEST_SCHEMA_VERSION,
        "files": [
            [name, state.size, state.mtime_ns, state.ctime_ns, state.digest]
            for name, state in sorted(files.items())
        ],
    }
    partial = path.with_name(f"{path.name}.partial-{os.getpid()}")
    partial.write_text(json.dumps(document, separators=(",", ":")), encoding="utf-8")
    os.replace(partial, path)
    return path


def record_manifest(root: Path) -> Verification:
    """Hash every file of the environment at `root` and write its manifest."""
    started = time.monotonic()
    files = {name: _state(info, _digest(root / name, info)) for name, info in _scan(root)}
    write_manifest(root, files)
    return Verification(root, len(files), len(files), time.monotonic() - started, recorded=True)


def verify_manifest(root: Path, *, full: bool = False) -> Verification:
    """Compare the environment at `root` with its manifest (recording one if it has none).

    `full` hashes every file; otherwise only files whose size or times changed."""
    started = time.monotonic()
    recorded = read_manifest(root)
    if recorded is None:
        return record_manifest(root)
    current = dict(_scan(root))
    added = sorted(set(current) - set(recorded))
    removed = sorted(set(recorded) - set(current))
    changes = [f"{name} was added" for name in added]
    changes += [f"{name} was removed" for name in removed]
    hashed = 0
    refreshed: dict[str, FileState] = {}
    for name in sorted(set(current) & set(recorded)):
        info, known = current[name], recorded[name]
        # FileState.same_stat, without building a FileState for each of 50k unchanged files
        if not full and (info.st_size, info.st_mtime_ns, info.st_ctime_ns) == (
            known.size,
            known.mtime_ns,
            known.ctime_ns,
        ):
            continue
        now = _state(info)
        hashed += 1
        try:
            digest = _digest(root / name, info)
        except OSError as error:
            changes.append(f"{name} cannot be read ({error.strerror})")
            continue
        if digest != known.digest:
            changes.append(f"{name} has different contents")
        elif not now.same_stat(known):
            refreshed[name] = _state(info, digest)
    seconds = time.monotonic() - started
    if changes:
        changes.sort()
        more = f" (and {len(changes) - 1} more changes)" if len(changes) > 1 else ""
        return Verification(root, len(current), hashed, seconds, change=changes[0] + more)
    if refreshed:
        # same contents, new times (a restored backup, `touch`): remember the new times so the
        # next fast check does not hash these files again; an unwritable environment just
        # hashes them again next time
        with contextlib.suppress(OSError):
            write_manifest(root, {**recorded, **refreshed})
    return Verification(root, len(current), hashed, seconds)


def check_integrity(name: str, root: Path, warn: Callable[[str], None]) -> Verification:
    """Verify environment `name` at `root` before samples run under it (the fast path).

    Raises EnvironmentError_ naming the first changed file and how to repair; warns when the
    environment had no manifest and one was recorded now."""
    outcome = verify_manifest(root)
    if not outcome.intact:
        raise EnvironmentError_(
            f"the evaluation environment at {root} changed after it was built: "
            f"{outcome.change}; verdicts from it cannot be trusted. Rebuild it with "
            f"`passbench env create {name} --force --path {root}`"
        )
    if outcome.recorded:
        warn(
            f"the evaluation environment at {root} had no integrity manifest (it predates "
            f"them): recorded one of its {outcome.files} files now; from now on every run "
            "checks that none of them changed"
        )
    return outcome
