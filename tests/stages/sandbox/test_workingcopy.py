"""Working copies of one commit with the history cache passbench keeps for a git directory (a
pack of what its refs reach with a bitmap, a commit-graph): the same working copy as without
it, the git directory never written, the cache made once and again when the git directory
changes, a working copy without it where git cannot make one. (What a working copy holds is
tested in tests/stages/benchmarks/swebench/test_repos.py.)"""

from __future__ import annotations

import fcntl
import os
import subprocess
from pathlib import Path

import pytest
from tests.gitrepo import commit_module, git

from passbench.stages.sandbox.host import workingcopy
from passbench.stages.sandbox.host.workingcopy import history_cache, make_working_copy


def snapshot(folder: Path) -> dict[str, tuple[int, int]]:
    """Every entry below `folder` with its size and modification time."""
    found = {}
    for root, dirs, files in os.walk(folder):
        for name in [*dirs, *files]:
            path = Path(root, name)
            info = path.lstat()
            found[str(path.relative_to(folder))] = (info.st_size, info.st_mtime_ns)
    return found


@pytest.fixture
def mirror(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A bare mirror: c1 (tag v1, annotated) -- base -- later (tag v2)."""
    upstream = tmp_path / "upstream"
    upstream.mkdir()
    git(upstream, "init", "-q", "--initial-branch=main")
    c1 = commit_module(upstream, "one = 1\n", "2020-01-01T00:00:00Z")
    git(upstream, "tag", "-a", "v1", "-m", "one", date="2020-01-02T00:00:00Z")
    base = commit_module(upstream, "two = 2\n", "2020-02-01T00:00:00Z")
    later = commit_module(upstream, "three = 3\n", "2020-03-01T00:00:00Z")
    git(upstream, "tag", "v2")
    bare = tmp_path / "mirror.git"
    git(tmp_path, "clone", "-q", "--mirror", str(upstream), str(bare))
    return bare, {"c1": c1, "base": base, "later": later}


def describe(copy: Path) -> dict[str, object]:
    """What a working copy is, in git's words."""
    return {
        "head": git(copy, "symbolic-ref", "HEAD"),
        "commit": git(copy, "rev-parse", "HEAD"),
        "refs": git(copy, "for-each-ref", "--format=%(refname) %(objectname)"),
        "objects": sorted(git(copy, "rev-list", "--objects", "--all").splitlines()),
        "index": git(copy, "ls-files", "-s"),
        "status": git(copy, "status", "--porcelain", "--ignored"),
        "files": sorted(p.name for p in copy.iterdir()),
        "git": sorted(p.name for p in (copy / ".git").iterdir()),
        "packed": git(copy, "count-objects", "-v").splitlines()[:3],
    }


def test_the_working_copy_is_the_same_with_the_history_cache(
    tmp_path: Path, mirror: tuple[Path, dict[str, str]]
) -> None:
    bare, commits = mirror
    make_working_copy("o/p", bare, commits["base"], tmp_path / "plain")
    before = snapshot(bare)
    caches = tmp_path / "caches"
    make_working_copy("o/p", bare, commits["base"], tmp_path / "cached", caches=caches)
    assert describe(tmp_path / "cached") == describe(tmp_path / "plain")
    shown = describe(tmp_path / "cached")
    assert shown["commit"] == commits["base"]
    assert shown["refs"] == f"refs/heads/main {commits['base']}\n" + git(
        bare, "for-each-ref", "--format=%(refname) %(objectname)", "refs/tags/v1"
    )
    assert commits["later"] not in str(shown["objects"])
    assert shown["git"] == ["HEAD", "config", "index", "objects", "refs"]
    assert snapshot(bare) == before  # nothing written into the git directory
    objects = history_cache(bare, caches)
    assert objects is not None
    # one pack of everything the refs reach, with its bitmap, and the commit-graph
    assert (objects / "info" / "commit-graph").is_file()
    assert [p.suffix for p in sorted((objects / "pack").iterdir())] == [".bitmap", ".idx", ".pack"]
    every = git(bare, "rev-list", "--objects", "--all").splitlines()
    assert f"in-pack: {len(every)}" in git(objects.parent, "count-objects", "-v")


@pytest.mark.parametrize("start", ["c1", "base", "later"])
def test_the_cache_lists_the_objects_the_walk_finds(
    tmp_path: Path, mirror: tuple[Path, dict[str, str]], start: str
) -> None:
    bare, commits = mirror
    make_working_copy("o/p", bare, commits[start], tmp_path / "plain")
    make_working_copy("o/p", bare, commits[start], tmp_path / "cached", caches=tmp_path / "c")
    assert describe(tmp_path / "cached") == describe(tmp_path / "plain")
    git(tmp_path / "cached", "fsck", "--full", "--strict")


def test_the_commit_graph_describes_the_git_directory(
    tmp_path: Path, mirror: tuple[Path, dict[str, str]]
) -> None:
    bare, _ = mirror
    objects = history_cache(bare, tmp_path / "caches")
    assert objects is not None
    env = {**workingcopy.isolated_environment(), "GIT_ALTERNATE_OBJECT_DIRECTORIES": str(objects)}
    verified = workingcopy.run_git(
        ["commit-graph", "verify", f"--object-dir={objects}"], git_dir=bare, env=env
    )
    assert verified.returncode == 0, verified.stderr


def test_the_history_walks_are_shown_the_cache(
    tmp_path: Path, mirror: tuple[Path, dict[str, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    bare, commits = mirror
    caches = tmp_path / "caches"
    cache = str(history_cache(bare, caches))
    seen: dict[str, tuple[str, bool]] = {}
    original = workingcopy.run_git

    def recording(args: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
        env = kwargs["env"]
        assert isinstance(env, dict)
        for command in ("for-each-ref", "pack-objects", "read-tree", "checkout.workers=2"):
            if command in args:
                alternates = env.get("GIT_ALTERNATE_OBJECT_DIRECTORIES", "")
                seen[command] = (alternates, "--use-bitmap-index" in args)
        return original(args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(workingcopy, "run_git", recording)
    make_working_copy("o/p", bare, commits["base"], tmp_path / "w", caches=caches)
    objects = str((bare / "objects").resolve())
    assert seen["read-tree"] == seen.pop("checkout.workers=2")
    assert seen == {
        "for-each-ref": (cache, False),
        "pack-objects": (f"{cache}{os.pathsep}{objects}", True),
        "read-tree": (f"{cache}{os.pathsep}{objects}", False),
    }


def test_the_cache_is_made_once_and_again_when_the_git_directory_changes(
    tmp_path: Path, mirror: tuple[Path, dict[str, str]]
) -> None:
    bare, _ = mirror
    caches = tmp_path / "caches"
    objects = history_cache(bare, caches)
    assert objects is not None
    first = (objects / "info" / "commit-graph").stat()
    assert history_cache(bare, caches) == objects
    again = (objects / "info" / "commit-graph").stat()
    assert (again.st_ino, again.st_mtime_ns) == (first.st_ino, first.st_mtime_ns)
    # the git directory gets a new commit (and a ref to it): a new cache that has it
    upstream = tmp_path / "upstream"
    newer = commit_module(upstream, "four = 4\n", "2020-04-01T00:00:00Z")
    git(bare, "fetch", "-q", str(upstream), "+refs/heads/*:refs/heads/*")
    assert history_cache(bare, caches) == objects
    assert (objects / "info" / "commit-graph").stat().st_ino != first.st_ino
    assert newer in git(objects.parent, "rev-list", "--all")
    copy = tmp_path / "newer"
    make_working_copy("o/p", bare, newer, copy, caches=caches)
    assert git(copy, "rev-parse", "HEAD") == newer
    assert git(copy, "rev-list", "--count", "HEAD") == "4"
    assert not [p for p in caches.iterdir() if p.name.startswith(".")]  # no leftovers


def test_a_commit_the_refs_did_not_reach_is_walked_the_slow_way(
    tmp_path: Path, mirror: tuple[Path, dict[str, str]]
) -> None:
    bare, commits = mirror
    caches = tmp_path / "caches"
    history_cache(bare, caches)
    # a commit the cache does not have: fetched into the git directory under a ref that
    # neither refs/heads nor refs/tags holds (a pull request's head)
    upstream = tmp_path / "upstream"
    git(upstream, "checkout", "-q", "-b", "pr", commits["base"])
    pull = commit_module(upstream, "pr = 1\n", "2020-02-15T00:00:00Z")
    git(bare, "fetch", "-q", str(upstream), f"+{pull}:refs/pull/1/head")
    make_working_copy("o/p", bare, pull, tmp_path / "plain")
    make_working_copy("o/p", bare, pull, tmp_path / "cached", caches=caches)
    assert describe(tmp_path / "cached") == describe(tmp_path / "plain")
    assert git(tmp_path / "cached", "rev-parse", "HEAD") == pull


def test_where_git_makes_no_cache_the_working_copy_is_made_without_one(
    tmp_path: Path, mirror: tuple[Path, dict[str, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    bare, commits = mirror
    caches = tmp_path / "caches"
    original = workingcopy.run_git
    calls = []

    def failing(args: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
        if args[:1] == ["commit-graph"] or "--write-bitmap-index" in args:
            calls.append(args)
            return subprocess.CompletedProcess(args, 128, "", "fatal: missing object")
        return original(args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(workingcopy, "run_git", failing)
    assert history_cache(bare, caches) is None
    assert history_cache(bare, caches) is None
    assert len(calls) == 2  # not tried again for the same git directory
    make_working_copy("o/p", bare, commits["base"], tmp_path / "w", caches=caches)
    assert git(tmp_path / "w", "rev-parse", "HEAD") == commits["base"]
    assert git(tmp_path / "w", "status", "--porcelain") == ""
    # a folder git cannot be shown (its name holds the separator of the alternates' list)
    monkeypatch.setattr(workingcopy, "run_git", original)
    assert history_cache(bare, tmp_path / "a:b") is None


def test_a_cache_being_made_is_not_waited_for(
    tmp_path: Path, mirror: tuple[Path, dict[str, str]]
) -> None:
    bare, _ = mirror
    caches = tmp_path / "caches"
    objects = history_cache(bare, caches)
    assert objects is not None
    (lock_file,) = caches.glob("*.lock")
    with open(lock_file, "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # another run is making it
        assert history_cache(bare, caches) == objects  # up to date: used
        upstream = tmp_path / "upstream"
        newer = commit_module(upstream, "four = 4\n", "2020-04-01T00:00:00Z")
        git(bare, "fetch", "-q", str(upstream), "+refs/heads/*:refs/heads/*")
        assert history_cache(bare, caches) is None  # out of date: the slow way, no waiting
        make_working_copy("o/p", bare, newer, tmp_path / "w", caches=caches)
        assert git(tmp_path / "w", "rev-parse", "HEAD") == newer
    assert history_cache(bare, caches) == objects  # made again once the lock is free
    assert newer in git(objects.parent, "rev-list", "--all")
