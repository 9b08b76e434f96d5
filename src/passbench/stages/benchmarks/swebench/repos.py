"""Where SWE-bench repositories come from, and working copies of a base commit with nothing later.

A `RepositorySource` reads one of two folders, both holding one git directory per repository,
named `<owner>__<name>.git` (`mirror_name`):
- `repos_dir`: the user's local mirrors (`--repos DIR`, `PASSBENCH_REPOS`), each bare or a git
  directory without a work tree; passbench only reads them;
- `cache_dir`: passbench's clone cache; a repository missing there is cloned once with
  `git clone --mirror <base_url>/<owner>/<name>.git` (base URL https://github.com by default; tests
  point it at a `file://` folder) and reused, fetched again only when it lacks a commit asked for.
  Such a folder is laid out like `repos_dir`, so it can serve as one offline.

`checkout` makes the working copy the tests run in. SWE-bench 4.1 closed a leak there
(SWE-bench#471, "Fix git log leakage in environment images"): its image build clones a single
branch (the default one; a release branch for three base commits of sympy and pytest),
`git reset --hard <base>`, removes the remote, deletes every tag whose commit is dated after the
base commit, expires the reflog, runs `git gc --prune=now --aggressive`, and fails the build if
`git log --all --since=<base date + 1 s>` still shows a commit. The result: the base commit's
history, the branch at the base commit, the older tags (so `git describe` and setuptools-scm give
the versions they gave then), and no object of anything later.

passbench builds that result directly instead of cloning everything and pruning it (an aggressive
gc of the whole history per instance): it copies out of the mirror, with `git pack-objects`,
exactly the objects reachable from the base commit and from the tags it keeps into a new
repository's single pack, points the mirror's default branch (its HEAD; "main" if it has none) at
the base commit, creates those tags and checks the tree out. The working copy has no remote, no
reflog, no hooks and no alternates: it works with the mirror gone, as it must inside the sandbox,
which does not show the mirror. On a 2-core machine that takes 0.2-0.45 s for psf/requests (median
0.28 s over its 8 Verified base commits) and 3-6 s for sympy or astropy, where `pack-objects`
walking ~370,000 objects dominates (bitmaps do not help: git uses them only when packing to a
stream).

Kept tags, as the official rule keeps them: tags naming a commit (directly or through an
annotated tag) whose committer date is not after the base commit's. Two differences: dates are
compared as instants (the official script compares `%ci` strings, local times with their
offsets, so a tag a few hours either side of the base can go either way there), and a tag's
commit must also be an ancestor of the base commit (a tag on a side branch dated before the base,
which `git describe` at the base never sees, would bring history the base does not have). So
`git describe` gives what it gives in the official image. An annotated tag keeps its own tagger
date and message, as officially.
"""

from __future__ import annotations

import configparser
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from passbench.core.errors import DatasetError, InputError
from passbench.stages.benchmarks.swebench.instances import Instance
from passbench.stages.sandbox.host.workingcopy import (
    has_commit,
    is_git_dir,
    isolated_environment,
    last_line,
    make_working_copy,
    run_git,
)

#: Where `git clone --mirror` fetches a repository from when the cache lacks it.
DEFAULT_BASE_URL = "https://github.com"

_COMMIT = re.compile(r"[0-9a-f]{40}")
_REPO = re.compile(r"([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+)")


def mirror_name(repo: str) -> str:
    """The folder name of a repository's mirror: "psf/requests" -> "psf__requests.git"."""
    match = _REPO.fullmatch(repo)
    if match is None or match.group(2) in {".", ".."} or match.group(1) in {".", ".."}:
        raise ValueError(f"not a GitHub repository name 'owner/name': {repo!r}")
    return f"{match.group(1)}__{match.group(2)}.git"


class RepositorySource:
    """Local mirrors (`repos_dir`) or a clone cache (`cache_dir`), exactly one of them; see the
    module docstring. `base_url` is where the cache clones from."""

    def __init__(
        self,
        *,
        repos_dir: Path | None = None,
        cache_dir: Path | None = None,
        base_url: str = DEFAULT_BASE_URL,
    ) -> None:
        if (repos_dir is None) == (cache_dir is None):
            raise ValueError("a RepositorySource reads either repos_dir or cache_dir")
        self.repos_dir = repos_dir
        self.cache_dir = cache_dir
        self.base_url = base_url.rstrip("/")

    @property
    def folder(self) -> Path:
        """The folder the mirrors are in."""
        folder = self.repos_dir if self.repos_dir is not None else self.cache_dir
        assert folder is not None  # the constructor sees to it
        return folder

    def __repr__(self) -> str:
        kind = "repos_dir" if self.repos_dir is not None else "cache_dir"
        return f"RepositorySource({kind}={str(self.folder)!r})"

    def mirror(self, repo: str, commit: str | None = None) -> Path:
        """The git directory holding `repo`, cloned into the cache on first use. With `commit`,
        the mirror must have that commit (the cache fetches once to find it). Raises InputError
        for a local mirror that is missing or lacks the commit, DatasetError when the cache
        cannot get it."""
        path = self.folder / mirror_name(repo)
        if self.repos_dir is not None:
            self._check_local(repo, path, commit)
            return path
        if not is_git_dir(path):
            self._clone(repo, path)
        if commit is not None and not has_commit(path, commit):
            _fetch(repo, path)
            if not has_commit(path, commit):
                raise DatasetError(
                    f"{repo}: commit {commit} is not in {path}, even after fetching "
                    f"{self.base_url}/{repo}.git again"
                )
        return path

    def checkout(self, instance: Instance, dest: Path) -> Path:
        """A working copy of the instance's base commit at `dest` (absent or an empty folder),
        with no later history and no refs or tags after it (module docstring). Returns `dest`."""
        return self.checkout_commit(instance.repo, instance.base_commit, dest)

    def checkout_commit(self, repo: str, commit: str, dest: Path) -> Path:
        """`checkout` for any full commit id of `repo`."""
        if not _COMMIT.fullmatch(commit):
            raise ValueError(f"not a full commit id: {commit!r}")
        if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
            raise FileExistsError(f"{dest}: not an empty folder")
        git_dir = self.mirror(repo, commit)
        created = not dest.exists()
        try:
            make_working_copy(repo, git_dir.resolve(), commit, dest)
        except BaseException:
            _remove(dest, keep_folder=not created)
            raise
        return dest

    def _check_local(self, repo: str, path: Path, commit: str | None) -> None:
        where = f"(base commit {commit})" if commit else ""
        if not path.exists():
            raise InputError(
                f"no mirror {path.name} of {repo} {where}; make one with: git clone --mirror "
                f"{DEFAULT_BASE_URL}/{repo}.git {path}",
                path=self.folder,
            )
        if not is_git_dir(path):
            raise InputError(f"{path.name} ({repo}) is not a git directory", path=self.folder)
        if commit is not None and not has_commit(path, commit):
            raise InputError(
                f"{repo}: commit {commit} is not in {path.name}; fetch it into the mirror "
                f"(git --git-dir {path} fetch)",
                path=self.folder,
            )

    def _clone(self, repo: str, path: Path) -> None:
        url = f"{self.base_url}/{repo}.git"
        self.folder.mkdir(parents=True, exist_ok=True)
        # clone beside the target and rename, so a crash or a second process never sees half
        temporary = Path(tempfile.mkdtemp(prefix=f".{path.name}.", dir=self.folder))
        try:
            done = _network_git(["clone", "--mirror", "--quiet", url, str(temporary)])
            if done.returncode != 0:
                raise DatasetError(
                    f"{repo}: cannot clone {url} into {self.folder}: {last_line(done.stderr)}"
                )
            try:
                temporary.rename(path)
            except OSError:
                if not is_git_dir(path):  # not a concurrent clone that won the race
                    raise
        finally:
            shutil.rmtree(temporary, ignore_errors=True)


# ------------------------------------------------------------ submodules the install bootstraps


@dataclass(frozen=True)
class Submodule:
    """A git submodule of a base commit: its path, its GitHub repository and its commit."""

    path: str
    repo: str  # "astropy/astropy-helpers"
    commit: str


_GITHUB_URL = re.compile(
    r"(?:https?://|git://|ssh://git@|git@)github\.com[/:]([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+?)"
    r"(?:\.git)?/?"
)
_BOOTSTRAP_DEFAULT_PATH = "astropy_helpers"


def bootstrapped_submodules(git_dir: Path, commit: str) -> tuple[Submodule, ...]:
    """The submodules the repository's own setup initializes at install time, read from the
    commit's files. The one case in SWE-bench: astropy's (and its affiliated packages')
    `ah_bootstrap.py`, imported by setup.py, runs `git submodule update --init -- <path>` when
    the path it bootstraps (setup.cfg `[ah_bootstrap] path`, default `astropy_helpers`) is a
    submodule, unless setup.cfg turns git or network use off (`use_git = False`,
    `offline = True`). The official image build is online, so the submodule is cloned there at
    the commit the base commit's gitlink names; the sandbox is not, so the working copy gets it
    from the submodule repository's mirror instead (`RepositorySpec.submodules`). Other
    submodules stay empty folders, as in the official image."""
    env = isolated_environment()
    if not _show(git_dir, commit, "ah_bootstrap.py", env):
        return ()
    config = configparser.RawConfigParser(strict=False)
    try:
        config.read_string(_show(git_dir, commit, "setup.cfg", env) or "")
    except configparser.Error:
        return ()
    section = "ah_bootstrap"
    path = config.get(section, "path", fallback=_BOOTSTRAP_DEFAULT_PATH).strip().rstrip("/")
    if not _flag(config, "use_git", True) or _flag(config, "offline", False):
        return ()
    url = _submodule_url(git_dir, commit, path, env)
    listed = run_git(["ls-tree", commit, "--", path], git_dir=git_dir, env=env).stdout.split()
    if url is None or len(listed) < 3 or listed[0] != "160000":
        return ()
    match = _GITHUB_URL.fullmatch(url.strip())
    if match is None:
        raise DatasetError(
            f"submodule {path} of {commit[:12]} comes from {url}, not a GitHub repository: "
            "passbench gets submodules only from GitHub mirrors"
        )
    return (Submodule(path, f"{match.group(1)}/{match.group(2)}", listed[2]),)


def _show(git_dir: Path, commit: str, path: str, env: dict[str, str]) -> str | None:
    done = run_git(["show", f"{commit}:{path}"], git_dir=git_dir, env=env)
    return done.stdout if done.returncode == 0 else None


def _flag(config: configparser.RawConfigParser, option: str, default: bool) -> bool:
    try:
        return config.getboolean("ah_bootstrap", option, fallback=default)
    except ValueError:
        return default


def _submodule_url(git_dir: Path, commit: str, path: str, env: dict[str, str]) -> str | None:
    """The URL .gitmodules gives the submodule at `path` (None when none is listed there)."""
    listed = run_git(
        ["config", f"--blob={commit}:.gitmodules", "--get-regexp", r"^submodule\..*\.(path|url)$"],
        git_dir=git_dir,
        env=env,
    )
    paths: dict[str, str] = {}
    urls: dict[str, str] = {}
    for line in listed.stdout.splitlines():
        key, _, value = line.partition(" ")
        name, _, field = key.removeprefix("submodule.").rpartition(".")
        (paths if field == "path" else urls)[name] = value
    for name, listed_path in paths.items():
        if listed_path.rstrip("/") == path:
            return urls.get(name)
    return None


def _fetch(repo: str, git_dir: Path) -> None:
    done = _network_git(["--git-dir", str(git_dir), "fetch", "--quiet", "--prune", "origin"])
    if done.returncode != 0:
        raise DatasetError(f"{repo}: cannot fetch into {git_dir}: {last_line(done.stderr)}")


def _network_git(args: list[str]) -> subprocess.CompletedProcess[str]:
    """git with the user's own configuration (proxies, credentials), never prompting."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
    env["GIT_TERMINAL_PROMPT"] = "0"
    return subprocess.run(
        ["git", *args],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        check=False,
    )


def _remove(dest: Path, *, keep_folder: bool) -> None:
    """Undo a half-made working copy."""
    if not dest.exists():
        return
    if not keep_folder:
        shutil.rmtree(dest, ignore_errors=True)
        return
    for child in dest.iterdir():
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child, ignore_errors=True)
        else:
            child.unlink(missing_ok=True)
