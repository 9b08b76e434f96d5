"""The host side of the samples' working folders: one disk-backed scratch folder per worker.

BigCodeBench's official evaluator runs each sample in a temporary directory on disk. A tmpfs
behaves differently where tests can see it (`os.listdir` order: a tmpfs lists newest first, a
disk file system in its own order), so samples get a real disk folder as `/tmp` (and as their
working directory below it): `<scratch root>/sandbox-<host>-<pid>-<random>/w<slot>`, bind-mounted
read-write into the sandbox, emptied by the worker after every sample and removed with the
sandbox. The scratch root is the user cache folder's `passbench/scratch` by default; only these
per-worker folders are ever visible to a sample, never the cache around them.

Nothing trusted is ever written into a scratch folder (worker logs and the sandbox's passwd
live in the sandbox's private folder), so what a sample leaves there cannot mislead anyone.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import tempfile
import threading
import weakref
from collections.abc import Callable, Iterable
from pathlib import Path

import platformdirs

from passbench.stages.sandbox.inside import _scratch

_PREFIX = "sandbox-"
#: sandbox-<host name>-<pid>-<mkdtemp's random part>: whose folder it is
_OWNED = re.compile(r"sandbox-(?P<host>.+)-(?P<pid>\d+)-[A-Za-z0-9_]+")


def default_scratch_root() -> Path:
    return Path(platformdirs.user_cache_dir("passbench")) / "scratch"


class ScratchFolders:
    """The scratch folders of one sandbox. `close()` (or garbage collection) removes them."""

    def __init__(self, root: Path | None = None) -> None:
        parent = root if root is not None else default_scratch_root()
        parent.mkdir(parents=True, exist_ok=True)
        _sweep(parent)
        owner = f"{_PREFIX}{socket.gethostname()}-{os.getpid()}-"
        self.path = Path(tempfile.mkdtemp(prefix=owner, dir=parent))
        self._finalizer = weakref.finalize(self, _scratch.remove, str(self.path))

    def for_worker(self, slot: int, *, mode: int, owner: int | None = None) -> Path:
        """Worker `slot`'s folder (created on first use), with `mode`, owned by host user
        `owner` when given (root gives it to the user samples run as)."""
        folder = self.path / f"w{slot}"
        folder.mkdir(exist_ok=True)
        if owner is not None:
            os.chown(folder, owner, owner)
        folder.chmod(mode)
        return folder

    def close(self) -> None:
        self._finalizer()

    def close_in_background(self) -> threading.Thread:
        """`close` in a thread of its own (`remove_in_background`)."""
        return _background(self._finalizer)


def remove_in_background(paths: Iterable[Path]) -> threading.Thread:
    """Remove folders `paths` and everything in them (never following a symbolic link) in a
    thread of its own, for a caller that need not wait: a repository run's working copy and
    /tmp hold thousands of files (pytest's own tests leave a folder per test), which take a
    second and more to delete. Not a daemon thread: the interpreter waits for it at exit."""
    folders = list(paths)

    def remove() -> None:
        for folder in folders:
            shutil.rmtree(folder, ignore_errors=True)

    return _background(remove)


def _background(work: Callable[[], object]) -> threading.Thread:
    thread = threading.Thread(target=work, name="passbench-removal", daemon=False)
    thread.start()
    return thread


def _sweep(parent: Path) -> None:
    """Remove what sandboxes of passbench processes that no longer exist left behind (killed
    with SIGKILL, a power cut): their folders would otherwise stay forever. Only this host's:
    a cache folder shared with other machines or containers holds folders of processes this
    one cannot see."""
    host = socket.gethostname()
    for entry in parent.iterdir():
        owner = _OWNED.fullmatch(entry.name)
        if owner is None or owner["host"] != host or not entry.is_dir():
            continue
        if not _alive(int(owner["pid"])):
            _scratch.remove(str(entry))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process
    return True


__all__ = ["ScratchFolders", "default_scratch_root", "remove_in_background"]
