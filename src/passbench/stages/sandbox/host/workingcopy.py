"""A working copy of one commit of a git directory, with nothing later: what a repository
program's tests run in (SWE-bench).

The working copy holds exactly the objects reachable from the commit and from the tags kept (a
tag naming a commit, directly or through an annotated tag, that is an ancestor of the commit and
not dated after it), copied out of the git directory with `git pack-objects` into a new
repository's single pack; the git directory's default branch (its HEAD; "main" if none) points at
the commit. No remote, reflog, hooks or alternates: it works with the git directory gone, as it
must inside the sandbox, which never shows it. This is the result SWE-bench 4.1's image build
reaches by cloning, pruning later tags and running an aggressive gc (SWE-bench#471), made
directly; `passbench.stages.benchmarks.swebench.repos` says what differs.

Nothing is ever written into the git directory: the pack is made by git run in the new
repository, the git directory's objects borrowed for that one command
(GIT_ALTERNATE_OBJECT_DIRECTORIES; no alternates file stays), so a read-only git directory (a
container is shown its mirrors so) works like any other, and git's temporary files land beside
the pack. The files are checked out from the git directory's objects (borrowed the same way)
while the pack is written, rather than from the pack afterwards: the same tree, index and files,
out of the run's way.

What takes the time is walking the history: listing the tags merged into the commit, and
listing every object the commit reaches for the pack (a mirror of sympy: 363,000 objects, one
second and more). Mirrors rarely have what git walks histories quickly with (a commit-graph, a
reachability bitmap, which a partial clone cannot be repacked to get). With `caches` (a folder of
passbench's own), `history_cache` makes both once per git directory there, in a bare repository
of its own: its branches and tags, one pack of every object they reach with a bitmap, and the
commit-graph of the git directory's commits. Its object directory is then shown to git as one
more alternate of those commands, ahead of the git directory's: the objects listed are the same
(the bitmap is git's own record of what each commit reaches), found without the walk, and the
git directory itself is never written. A cache made before the git directory got new commits is
made again once its packs or refs change; until then the new commits are only walked the slow
way. The cache takes about what the git directory's packs take on disk.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from passbench.core.errors import DatasetError

# for-each-ref fields: name, object, its type and committer date, and the same one tag level down
_TAG_FORMAT = "%00".join(
    (
        "%(refname)",
        "%(objectname)",
        "%(objecttype)",
        "%(committerdate:unix)",
        "%(*objecttype)",
        "%(*committerdate:unix)",
    )
)


#: git's parallel checkout processes (git 2.32 on; an older git ignores the setting)
_CHECKOUT_WORKERS = 2


def isolated_environment(workdir: Path | None = None) -> dict[str, str]:
    """The environment for git and patch on a working copy: PATH, HOME and TMPDIR of this
    process, the C locale, no system or user git configuration and none of the caller's `GIT_*`
    variables (a stray GIT_DIR or GIT_ALTERNATE_OBJECT_DIRECTORIES would point git elsewhere).
    With `workdir`, git may not look above it for a repository."""
    env = {"PATH": os.environ.get("PATH", os.defpath), "LC_ALL": "C"}
    env.update({key: os.environ[key] for key in ("HOME", "TMPDIR") if key in os.environ})
    env["GIT_CONFIG_NOSYSTEM"] = "1"
    env["GIT_CONFIG_GLOBAL"] = os.devnull
    if workdir is not None:
        env["GIT_CEILING_DIRECTORIES"] = str(workdir.parent)
    return env


def make_working_copy(
    repo: str, git_dir: Path, commit: str, dest: Path, *, caches: Path | None = None
) -> None:
    """Fill `dest` (absent or empty) with the working copy of `commit` of `git_dir` (`repo`
    names it in errors: DatasetError with git's last line). With `caches`, the history walks
    use `git_dir`'s history cache kept there (`history_cache`, made on first use)."""
    env = isolated_environment()
    objects = str((git_dir / "objects").resolve())
    cache = history_cache(git_dir, caches) if caches is not None else None
    # borrowed for single commands: the history cache's objects (first: its pack's bitmap is
    # found before the git directory's packs) and the git directory's
    alternates = [objects] if cache is None else [str(cache), objects]
    borrowed = {**env, "GIT_ALTERNATE_OBJECT_DIRECTORIES": os.pathsep.join(alternates)}
    walking = env if cache is None else {**env, "GIT_ALTERNATE_OBJECT_DIRECTORIES": str(cache)}
    head = run_git(["symbolic-ref", "--short", "-q", "HEAD"], git_dir=git_dir, env=env)
    branch = head.stdout.strip() if head.returncode == 0 and head.stdout.strip() else "main"
    dest.mkdir(parents=True, exist_ok=True)
    _check(
        run_git(
            ["init", "--quiet", "--template=", f"--initial-branch={branch}", str(dest)], env=env
        ),
        f"{repo}: cannot create a repository at {dest}",
    )
    work = ["-c", "core.logAllRefUpdates=false", "-C", str(dest)]
    with ThreadPoolExecutor(1, thread_name_prefix="passbench-checkout") as pool:
        # what `git checkout --force` of the branch does (unpack the commit's tree into the
        # index and the files), in the new repository with its own configuration; git's
        # parallel checkout writes the same files (sympy's 2,000: 0.15 s instead of 0.7 s)
        unpack = ["-c", f"checkout.workers={_CHECKOUT_WORKERS}", "read-tree", "--reset", "-u"]
        checkout = pool.submit(run_git, [*work, *unpack, commit], env=borrowed)
        tags = _tags_to_keep(git_dir, commit, walking)
        wanted = "".join(f"{oid}\n" for oid in [commit, *(oid for _, oid in tags)])
        pack = dest / ".git" / "objects" / "pack" / "pack"
        # the bitmap is for packs written to files too (git uses it for stdout only unless
        # told): the same objects, listed from it instead of walked
        listing = ["--revs", "--use-bitmap-index", "--quiet", "--delta-base-offset"]
        packed = run_git(
            ["pack-objects", *listing, str(pack)],
            git_dir=dest / ".git",
            env=borrowed,
            stdin=wanted,
        )
        checked_out = checkout.result()
    _check(packed, f"{repo}: cannot copy commit {commit} and its history out of {git_dir}")
    _check(checked_out, f"{repo}: cannot check out {commit} in {dest}")
    refs = [f"create refs/heads/{branch} {commit}"] + [f"create {n} {oid}" for n, oid in tags]
    _check(
        run_git([*work, "update-ref", "--stdin"], env=env, stdin="".join(f"{r}\n" for r in refs)),
        f"{repo}: cannot create the refs of {dest}",
    )


def history_cache(git_dir: Path, caches: Path) -> Path | None:
    """The object directory under `caches` that speeds up `git_dir`'s history walks (module
    docstring), made now if it is missing or the git directory's packs or refs changed since;
    None where git can make nothing of use (the walks then read the git directory alone).

    One maker at a time per git directory (a lock file beside it). The others do not wait for
    it (sympy's takes 6 s, longer than a working copy made without it) and go without, unless
    the cache there is already the one for the git directory as it is."""
    if os.pathsep in str(caches) or os.pathsep in str(git_dir):
        return None  # GIT_ALTERNATE_OBJECT_DIRECTORIES separates folders with it
    resolved = git_dir.resolve()
    key = hashlib.sha256(str(resolved).encode()).hexdigest()[:24]
    folder = caches / key
    stamp = json.dumps(_state(resolved), sort_keys=True)
    try:
        caches.mkdir(parents=True, exist_ok=True)
        with open(caches / f"{key}.lock", "w") as lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                pass  # being made by another run: used below if it is already up to date
            else:
                if _read_stamp(folder) != stamp:
                    _make_cache(resolved, folder, stamp)
    except OSError:
        return None
    objects = folder / _CACHE_REPO / "objects"
    useful = (objects / "info" / "commit-graph").is_file() or any(objects.glob("pack/*.bitmap"))
    return objects if _read_stamp(folder) == stamp and useful else None


_CACHE_REPO = "history.git"


def _state(git_dir: Path) -> dict[str, object]:
    """What changes when a git directory gets new commits or refs: its packs (named by their
    contents), its packed refs and the folders of its loose refs and objects."""
    packs = sorted(p.name for p in (git_dir / "objects" / "pack").glob("*.pack"))
    changed = {}
    for name in ("packed-refs", "refs/heads", "refs/tags", "objects"):
        try:
            info = (git_dir / name).stat()
        except OSError:
            continue
        changed[name] = [info.st_size if name == "packed-refs" else 0, info.st_mtime_ns]
    return {"git_dir": str(git_dir), "packs": packs, "changed": changed}


def _read_stamp(folder: Path) -> str | None:
    """The state of the git directory the cache in `folder` was made for."""
    try:
        return (folder / "stamp.json").read_text()
    except OSError:
        return None


def _make_cache(git_dir: Path, folder: Path, stamp: str) -> None:
    """Make the history cache of `git_dir` in a new folder, then put it in `folder`'s place.

    A bare repository with the git directory's branches and tags, its objects borrowed while
    it packs every object they reach into one pack of its own with a reachability bitmap (the
    pack a working copy's objects are then listed from, and copied out of); and the commit-graph
    of every commit the git directory's refs reach. Each is left out where git fails (an object
    the git directory lacks: a partial clone; a git older than 2.18 writes no commit-graph),
    and the folder then holds what was made, so that the next run does not try again in vain.
    """
    fresh = Path(tempfile.mkdtemp(prefix=f".{folder.name}-", dir=folder.parent))
    try:
        cache = fresh / _CACHE_REPO
        objects = str(cache / "objects")
        env = isolated_environment()
        run_git(["init", "--quiet", "--bare", "--template=", str(cache)], env=env)
        borrowing = {**env, "GIT_ALTERNATE_OBJECT_DIRECTORIES": str(git_dir / "objects")}
        refs = run_git(
            ["for-each-ref", "--format=create %(refname) %(objectname)", "refs/heads", "refs/tags"],
            git_dir=git_dir,
            env=env,
        )
        copied = (
            refs.returncode == 0
            and (
                run_git(["update-ref", "--stdin"], git_dir=cache, env=borrowing, stdin=refs.stdout)
            ).returncode
            == 0
        )
        if copied and refs.stdout:
            every = ["--all", "--quiet", "--delta-base-offset", "--write-bitmap-index"]
            packed = run_git(
                ["pack-objects", *every, f"{objects}/pack/pack"],
                git_dir=cache,
                env=borrowing,
            )
            if packed.returncode != 0:
                for leftover in (cache / "objects" / "pack").iterdir():
                    leftover.unlink()
        # the commit-graph of the git directory's own refs, in the cache's object directory
        (cache / "objects" / "info").mkdir(parents=True, exist_ok=True)
        run_git(
            ["commit-graph", "write", "--reachable", f"--object-dir={objects}"],
            git_dir=git_dir,
            env={**env, "GIT_ALTERNATE_OBJECT_DIRECTORIES": objects},
        )
        (fresh / "stamp.json").write_text(stamp)
        old = folder.with_name(f".{folder.name}-old")
        shutil.rmtree(old, ignore_errors=True)
        if folder.exists():
            folder.rename(old)  # a git command reading the old cache keeps its open files
        fresh.rename(folder)
        shutil.rmtree(old, ignore_errors=True)
    finally:
        shutil.rmtree(fresh, ignore_errors=True)


def add_submodule(
    repo: str,
    working_copy: Path,
    path: str,
    git_dir: Path,
    commit: str,
    *,
    caches: Path | None = None,
) -> None:
    """Check out `commit` of `git_dir` as the working copy's submodule at `path`, as `git
    submodule update --init -- <path>` leaves it (`git submodule status` then reports it
    initialized and up to date): the commit's own working copy (`make_working_copy`, nothing
    later) in the folder the gitlink left empty, its URL copied from .gitmodules into the
    working copy's configuration, its git directory moved under .git/modules. No network.
    `caches` as for `make_working_copy`."""
    env = isolated_environment()
    target = working_copy / path
    if not target.resolve().is_relative_to(working_copy.resolve()):
        raise DatasetError(f"{repo}: submodule path {path!r} is outside the working copy")
    make_working_copy(f"{repo} (submodule {path})", git_dir, commit, target, caches=caches)
    work = ["-C", str(working_copy)]
    for step in (["submodule", "init", "--", path], ["submodule", "absorbgitdirs", "--", path]):
        _check(
            run_git([*work, *step], env=env),
            f"{repo}: cannot register submodule {path} in {working_copy}",
        )


def _tags_to_keep(git_dir: Path, commit: str, env: dict[str, str]) -> list[tuple[str, str]]:
    """(ref name, object id) of the tags that stay: their commit is an ancestor of `commit`
    (or it) and is not dated after it."""
    shown = run_git(
        ["show", "-s", "--format=%ct", f"{commit}^{{commit}}"], git_dir=git_dir, env=env
    )
    _check(shown, f"cannot read commit {commit} in {git_dir}")
    base_time = int(shown.stdout.strip())
    listed = run_git(
        ["for-each-ref", f"--merged={commit}", f"--format={_TAG_FORMAT}", "refs/tags"],
        git_dir=git_dir,
        env=env,
    )
    _check(listed, f"cannot list the tags of {git_dir}")
    kept = []
    for line in listed.stdout.splitlines():
        name, oid, kind, date, peeled_kind, peeled_date = line.split("\0")
        # a tag of a tag, or of a tree or blob, is dropped: no commit date to judge it by
        when = date if kind == "commit" else peeled_date if peeled_kind == "commit" else ""
        if when and int(when) <= base_time:
            kept.append((name, oid))
    return kept


def is_git_dir(path: Path) -> bool:
    """What git itself requires of a git directory: HEAD, objects/ and refs/."""
    return (path / "HEAD").is_file() and (path / "objects").is_dir() and (path / "refs").is_dir()


def has_commit(git_dir: Path, commit: str) -> bool:
    """Whether `git_dir` holds `commit` (a commit object, not just any object of that id)."""
    done = run_git(
        ["cat-file", "-e", f"{commit}^{{commit}}"], git_dir=git_dir, env=isolated_environment()
    )
    return done.returncode == 0


def run_git(
    args: list[str],
    *,
    env: dict[str, str],
    git_dir: Path | None = None,
    stdin: str | None = None,
) -> subprocess.CompletedProcess[str]:
    prefix = ["git", "--git-dir", str(git_dir)] if git_dir is not None else ["git"]
    return subprocess.run(
        [*prefix, *args],
        env=env,
        input=stdin,
        stdin=None if stdin is not None else subprocess.DEVNULL,
        capture_output=True,
        text=True,
        check=False,
    )


def _check(done: subprocess.CompletedProcess[str], message: str) -> None:
    if done.returncode != 0:
        raise DatasetError(f"{message}: {last_line(done.stderr)}")


def last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else "(git said nothing)"
