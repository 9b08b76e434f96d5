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
"""

from __future__ import annotations

import os
import subprocess
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


def make_working_copy(repo: str, git_dir: Path, commit: str, dest: Path) -> None:
    """Fill `dest` (absent or empty) with the working copy of `commit` of `git_dir` (`repo`
    names it in errors: DatasetError with git's last line)."""
    env = isolated_environment()
    tags = _tags_to_keep(git_dir, commit, env)
    head = run_git(["symbolic-ref", "--short", "-q", "HEAD"], git_dir=git_dir, env=env)
    branch = head.stdout.strip() if head.returncode == 0 and head.stdout.strip() else "main"
    dest.mkdir(parents=True, exist_ok=True)
    _check(
        run_git(
            ["init", "--quiet", "--template=", f"--initial-branch={branch}", str(dest)], env=env
        ),
        f"{repo}: cannot create a repository at {dest}",
    )
    wanted = "".join(f"{oid}\n" for oid in [commit, *(oid for _, oid in tags)])
    pack = dest / ".git" / "objects" / "pack" / "pack"
    source, pack_env = git_dir, env
    if not os.access(git_dir / "objects", os.W_OK):
        # a read-only git directory (a container is shown its mirrors so): git writes its
        # temporary files in the repository it runs in, so the pack is made in the new one,
        # the git directory's objects borrowed for this one command (no alternates file stays)
        borrowed = str((git_dir / "objects").resolve())
        source, pack_env = dest / ".git", {**env, "GIT_ALTERNATE_OBJECT_DIRECTORIES": borrowed}
    _check(
        run_git(
            ["pack-objects", "--revs", "--quiet", "--delta-base-offset", str(pack)],
            git_dir=source,
            env=pack_env,
            stdin=wanted,
        ),
        f"{repo}: cannot copy commit {commit} and its history out of {git_dir}",
    )
    refs = [f"create refs/heads/{branch} {commit}"] + [f"create {n} {oid}" for n, oid in tags]
    work = ["-c", "core.logAllRefUpdates=false", "-C", str(dest)]
    _check(
        run_git([*work, "update-ref", "--stdin"], env=env, stdin="".join(f"{r}\n" for r in refs)),
        f"{repo}: cannot create the refs of {dest}",
    )
    _check(
        run_git([*work, "checkout", "--quiet", "--force"], env=env),
        f"{repo}: cannot check out {commit} in {dest}",
    )


def add_submodule(repo: str, working_copy: Path, path: str, git_dir: Path, commit: str) -> None:
    """Check out `commit` of `git_dir` as the working copy's submodule at `path`, as `git
    submodule update --init -- <path>` leaves it (`git submodule status` then reports it
    initialized and up to date): the commit's own working copy (`make_working_copy`, nothing
    later) in the folder the gitlink left empty, its URL copied from .gitmodules into the
    working copy's configuration, its git directory moved under .git/modules. No network."""
    env = isolated_environment()
    target = working_copy / path
    if not target.resolve().is_relative_to(working_copy.resolve()):
        raise DatasetError(f"{repo}: submodule path {path!r} is outside the working copy")
    make_working_copy(f"{repo} (submodule {path})", git_dir, commit, target)
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
