"""The sample-writable scratch folders: emptying them and measuring what a sample stored there.

Shipped into the sandbox beside _runner.py (standard library only, nothing from passbench), and
used by the host too, to remove the scratch folders when a sandbox closes.

A sample controls everything in these folders, so both walks expect the worst: directories made
unreadable (mode 000), nesting deeper than PATH_MAX, symbolic links pointing out of the folder,
a folder moved while it is being walked. They work through directory file descriptors (never a
path that can grow too long, never following a link), keep one descriptor open whatever the
depth, and never raise: a failed cleanup must not take the worker down with it.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Callable, Iterable, Iterator

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
#: Owner read, write and search: what the owner needs to empty a folder a sample locked.
_UNLOCKED = stat.S_IRWXU
#: Every entry costs at least this much (an inode and a directory entry): counting it keeps a
#: sample from exhausting the disk's inodes with empty files, and bounds the walk.
ENTRY_BYTES = 4096

Entries = list["os.DirEntry[str]"]


def _open_dir(name: str, dir_fd: int | None = None) -> int | None:
    """Open directory `name` without following a link, unlocking it if a sample locked it;
    None when it cannot be opened."""
    try:
        return os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
    except PermissionError:
        pass
    except OSError:
        return None
    try:
        # The owner can always give itself the permissions back. `name` is a directory, not a
        # link (O_NOFOLLOW would have failed with ELOOP instead).
        os.chmod(name, _UNLOCKED, dir_fd=dir_fd)
        return os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
    except OSError:
        return None


def _list(fd: int) -> Entries:
    try:
        with os.scandir(fd) as entries:
            return list(entries)
    except OSError:
        return []


def _subdirectories(entries: Entries) -> list[str]:
    found = []
    for entry in entries:
        with contextlib.suppress(OSError):
            if entry.is_dir(follow_symlinks=False):
                found.append(entry.name)
    return found


def _identity(fd: int) -> tuple[int, int]:
    info = os.fstat(fd)
    return info.st_dev, info.st_ino


def _walk(
    root: str, leave: Callable[[int, str], None] | None = None
) -> Iterator[tuple[int, Entries]]:
    """Every directory below `root` (itself included), depth first: (its fd, its entries).

    The fd is valid until the next step; the consumer may delete what it was given. After a
    subdirectory's contents, `leave(parent fd, its name)` is called (to remove it). A step down
    opens the child from its parent and closes the parent; a step up opens ".." and checks that
    it is the directory it came from: if a sample moved the tree meanwhile, the walk stops."""
    fd = _open_dir(root)
    if fd is None:
        return
    # per level: (name of the directory below its parent, identity of the parent, the parent's
    # subdirectories still to visit)
    stack: list[tuple[str, tuple[int, int], list[str]]] = []
    try:
        entries = _list(fd)
        yield fd, entries
        todo = _subdirectories(entries)
        while True:
            if todo:
                name = todo.pop()
                child = _open_dir(name, dir_fd=fd)
                if child is None:
                    continue
                stack.append((name, _identity(fd), todo))
                os.close(fd)
                fd = child
                entries = _list(fd)
                yield fd, entries
                todo = _subdirectories(entries)
                continue
            if not stack:
                return
            name, parent_identity, todo = stack.pop()
            parent = os.open("..", _DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = parent
            if _identity(fd) != parent_identity:
                return
            if leave is not None:
                leave(fd, name)
    except OSError:
        return
    finally:
        os.close(fd)


def empty(root: str, mode: int | None = None) -> None:
    """Remove everything below `root` (not `root` itself); never raises.

    `mode`: the permissions `root` must have afterwards (a sample may have changed them)."""
    if mode is not None:
        with contextlib.suppress(OSError):
            os.chmod(root, mode)

    def remove_dir(parent: int, name: str) -> None:
        with contextlib.suppress(OSError):
            os.rmdir(name, dir_fd=parent)

    for fd, entries in _walk(root, remove_dir):
        for entry in entries:
            with contextlib.suppress(OSError):
                if not entry.is_dir(follow_symlinks=False):
                    os.unlink(entry.name, dir_fd=fd)


def remove(path: str) -> None:
    """Remove folder `path` and everything in it; never raises."""
    empty(path)
    with contextlib.suppress(OSError):
        os.rmdir(path)


def usage(roots: Iterable[str], pids: Iterable[int] = (), stop_at: int | None = None) -> int:
    """Bytes of disk the files below `roots` take, plus deleted files the processes `pids`
    still hold open on the same file systems (a file unlinked while open keeps its space).

    Each entry counts at least ENTRY_BYTES; a file with several links counts once. Stops
    counting once past `stop_at`. A process whose descriptors this user cannot read (one that
    made itself non-dumpable) is not counted."""
    total = 0
    seen: set[tuple[int, int]] = set()
    devices: set[int] = set()
    for root in roots:
        with contextlib.suppress(OSError):
            devices.add(os.stat(root).st_dev)
        for _fd, entries in _walk(root):
            for entry in entries:
                try:
                    info = entry.stat(follow_symlinks=False)
                except OSError:
                    total += ENTRY_BYTES
                    continue
                if info.st_nlink > 1 and not stat.S_ISDIR(info.st_mode):
                    key = (info.st_dev, info.st_ino)
                    if key in seen:
                        continue
                    seen.add(key)
                total += max(ENTRY_BYTES, info.st_blocks * 512)
            if stop_at is not None and total > stop_at:
                return total
    return total + _deleted_open_files(pids, devices, seen)


def _deleted_open_files(pids: Iterable[int], devices: set[int], seen: set[tuple[int, int]]) -> int:
    total = 0
    for pid in pids:
        folder = f"/proc/{pid}/fd"
        try:
            descriptors = os.listdir(folder)
        except OSError:
            continue
        for name in descriptors:
            try:
                info = os.stat(f"{folder}/{name}")
            except OSError:
                continue
            key = (info.st_dev, info.st_ino)
            if (
                info.st_nlink == 0
                and stat.S_ISREG(info.st_mode)
                and info.st_dev in devices
                and key not in seen
            ):
                seen.add(key)
                total += info.st_blocks * 512
    return total
