"""Repositories from local mirrors and from a clone cache, and working copies of a base commit
with nothing later in them, on real git repositories built here."""

from __future__ import annotations

import dataclasses
import shutil
import subprocess
from pathlib import Path

import pytest
from tests.gitrepo import commit_module, git, git_output

from passbench.core.errors import DatasetError, InputError
from passbench.stages.benchmarks.swebench.instances import Instance
from passbench.stages.benchmarks.swebench.repos import (
    RepositorySource,
    Submodule,
    bootstrapped_submodules,
    mirror_name,
)
from passbench.stages.sandbox.host.workingcopy import add_submodule

REPO = "owner/proj"


@dataclasses.dataclass(frozen=True)
class History:
    """An upstream repository and the commits that matter in it.

    main:  c1 (Jan) -- skewed (dated May) -- base (Feb) -- later (Mar)
    side:  c1 -- side (Jan 15), never merged
    tags:  v0.1 (annotated) and light on c1; late-tag, annotated in April, on c1;
           skewed-tag on skewed; side-tag on side; v0.2 (annotated) on later
    """

    upstream: Path
    c1: str
    skewed: str
    base: str
    later: str
    side: str


@pytest.fixture
def history(tmp_path: Path) -> History:
    upstream = tmp_path / "upstream"
    upstream.mkdir()
    git(upstream, "init", "-q", "--initial-branch=main")
    c1 = commit_module(upstream, "one = 1\n", "2020-01-01T00:00:00Z")
    git(upstream, "tag", "-a", "v0.1", "-m", "release 0.1", date="2020-01-02T00:00:00Z")
    git(upstream, "tag", "light")
    git(upstream, "tag", "-a", "late-tag", "-m", "tagged later", date="2020-04-01T00:00:00Z")
    git(upstream, "checkout", "-q", "-b", "side")
    side = commit_module(upstream, "side = 1\n", "2020-01-15T00:00:00Z")
    git(upstream, "tag", "side-tag")
    git(upstream, "checkout", "-q", "main")
    skewed = commit_module(upstream, "two = 2\n", "2020-05-01T00:00:00Z")
    git(upstream, "tag", "skewed-tag")
    base = commit_module(upstream, "three = 3\n", "2020-02-01T00:00:00Z")
    later = commit_module(upstream, "four = 4  # the fix\n", "2020-03-01T00:00:00Z")
    git(upstream, "tag", "-a", "v0.2", "-m", "release 0.2", date="2020-03-02T00:00:00Z")
    git(upstream, "branch", "feature")
    return History(upstream, c1, skewed, base, later, side)


@pytest.fixture
def repos_dir(tmp_path: Path, history: History) -> Path:
    """A folder of mirrors: a bare mirror clone, and a copied .git without a work tree."""
    folder = tmp_path / "repos"
    folder.mkdir()
    git(tmp_path, "clone", "-q", "--mirror", str(history.upstream), str(folder / mirror_name(REPO)))
    shutil.copytree(history.upstream / ".git", folder / "owner__plain.git")
    return folder


def instance(repo: str, commit: str) -> Instance:
    return Instance(
        repo=repo,
        instance_id=f"{repo.replace('/', '__')}-1",
        base_commit=commit,
        patch="",
        test_patch="",
        problem_statement="",
        hints_text="",
        created_at="",
        version="1.0",
        fail_to_pass=(),
        pass_to_pass=(),
        environment_setup_commit=commit,
        eval_script="",
        log_parser="parse_log_pytest",
        eval_type="pass_and_fail",
        image="",
    )


def assert_only_the_base_history(copy: Path, history: History) -> None:
    assert git(copy, "rev-parse", "HEAD") == history.base
    assert git(copy, "symbolic-ref", "HEAD") == "refs/heads/main"
    assert (copy / "module.py").read_text() == "three = 3\n"
    assert git(copy, "status", "--porcelain") == ""
    every_commit = set(git(copy, "log", "--all", "--format=%H").split())
    assert every_commit == {history.c1, history.skewed, history.base}
    assert git(copy, "for-each-ref", "--format=%(refname)").split() == [
        "refs/heads/main",
        "refs/tags/late-tag",
        "refs/tags/light",
        "refs/tags/v0.1",
    ]
    for absent in (history.later, history.side):
        missing = subprocess.run(["git", "-C", str(copy), "cat-file", "-e", absent])
        assert missing.returncode != 0
    assert git(copy, "remote") == ""
    assert sorted(path.name for path in (copy / ".git").iterdir()) == [
        "HEAD",
        "config",
        "index",
        "objects",
        "refs",
    ]  # no FETCH_HEAD, ORIG_HEAD, reflog (logs/) or hooks
    assert not (copy / ".git" / "objects" / "info" / "alternates").exists()
    # every object it has is reachable from what it keeps: the pack holds nothing later
    reachable = set(git(copy, "rev-list", "--objects", "--all").split("\n"))
    packed = git(copy, "count-objects", "-v")
    assert f"in-pack: {len({line.split()[0] for line in reachable})}" in packed


def test_a_working_copy_from_a_mirror_has_only_the_base_history(
    tmp_path: Path, history: History, repos_dir: Path
) -> None:
    source = RepositorySource(repos_dir=repos_dir)
    copy = source.checkout(instance(REPO, history.base), tmp_path / "work")
    assert copy == tmp_path / "work"
    assert_only_the_base_history(copy, history)
    assert git(copy, "describe", "--tags").endswith(f"-2-g{history.base[:7]}")


def test_the_working_copy_works_with_the_mirror_gone(
    tmp_path: Path, history: History, repos_dir: Path
) -> None:
    copy = RepositorySource(repos_dir=repos_dir).checkout_commit(REPO, history.base, tmp_path / "w")
    shutil.rmtree(repos_dir)
    git(copy, "fsck", "--full", "--strict")
    assert_only_the_base_history(copy, history)


def test_a_git_directory_without_a_work_tree_is_a_mirror_too(
    tmp_path: Path, history: History, repos_dir: Path
) -> None:
    copy = RepositorySource(repos_dir=repos_dir).checkout_commit(
        "owner/plain", history.base, tmp_path / "w"
    )
    assert_only_the_base_history(copy, history)


def test_an_existing_empty_folder_is_fine(
    tmp_path: Path, history: History, repos_dir: Path
) -> None:
    (tmp_path / "w").mkdir()
    copy = RepositorySource(repos_dir=repos_dir).checkout_commit(REPO, history.base, tmp_path / "w")
    assert_only_the_base_history(copy, history)


def test_the_clone_cache_clones_once_and_fetches_a_missing_commit(
    tmp_path: Path, history: History
) -> None:
    remotes = tmp_path / "remotes"
    (remotes / "owner").mkdir(parents=True)
    git(tmp_path, "clone", "-q", "--bare", str(history.upstream), str(remotes / "owner/proj.git"))
    cache = tmp_path / "cache"
    source = RepositorySource(cache_dir=cache, base_url=f"file://{remotes}/")
    copy = source.checkout(instance(REPO, history.base), tmp_path / "w1")
    assert_only_the_base_history(copy, history)
    assert sorted(path.name for path in cache.iterdir()) == ["owner__proj.git"]
    # the remote moves on: a commit the cache lacks is fetched, once
    newer = commit_module(history.upstream, "five = 5\n", "2020-06-01T00:00:00Z")
    git(history.upstream, "push", "-q", str(remotes / "owner/proj.git"), "main")
    copy = source.checkout_commit(REPO, newer, tmp_path / "w2")
    assert (copy / "module.py").read_text() == "five = 5\n"
    # reused: with the remote gone, the cache still serves every commit it has
    shutil.rmtree(remotes)
    copy = source.checkout_commit(REPO, history.later, tmp_path / "w3")
    assert (copy / "module.py").read_text() == "four = 4  # the fix\n"
    assert git(copy, "for-each-ref", "--format=%(refname)", "refs/tags").split() == [
        "refs/tags/late-tag",
        "refs/tags/light",
        "refs/tags/v0.1",
        "refs/tags/v0.2",
    ]


def test_the_cache_cannot_clone_a_missing_repository(tmp_path: Path, history: History) -> None:
    cache = tmp_path / "cache"
    source = RepositorySource(cache_dir=cache, base_url=f"file://{tmp_path}/nowhere")
    with pytest.raises(DatasetError) as caught:
        source.checkout_commit(REPO, history.base, tmp_path / "w")
    message = str(caught.value)
    assert f"{REPO}: cannot clone file://{tmp_path}/nowhere/{REPO}.git into {cache}" in message
    assert "\n" not in message
    assert list(cache.iterdir()) == []  # no half-made clone left behind
    assert not (tmp_path / "w").exists()


def test_the_cache_reports_a_commit_the_remote_does_not_have(
    tmp_path: Path, history: History
) -> None:
    source = RepositorySource(cache_dir=tmp_path / "cache", base_url=str(tmp_path / "remotes"))
    (tmp_path / "remotes" / "owner").mkdir(parents=True)
    git(
        tmp_path,
        "clone",
        "-q",
        "--bare",
        str(history.upstream),
        str(tmp_path / "remotes/owner/proj.git"),
    )
    with pytest.raises(DatasetError, match=f"{REPO}: commit {'0' * 40} is not in .*cache"):
        source.checkout_commit(REPO, "0" * 40, tmp_path / "w")


def test_a_missing_mirror_names_repo_folder_and_commit(
    tmp_path: Path, history: History, repos_dir: Path
) -> None:
    source = RepositorySource(repos_dir=repos_dir)
    with pytest.raises(InputError) as caught:
        source.checkout(instance("psf/requests", history.base), tmp_path / "w")
    error = caught.value
    assert error.path == str(repos_dir)
    assert "no mirror psf__requests.git of psf/requests" in str(error)
    assert f"base commit {history.base}" in str(error)
    assert "git clone --mirror https://github.com/psf/requests.git" in str(error)
    assert "\n" not in str(error)
    assert not (tmp_path / "w").exists()


def test_a_missing_commit_names_repo_folder_and_commit(tmp_path: Path, repos_dir: Path) -> None:
    with pytest.raises(InputError) as caught:
        RepositorySource(repos_dir=repos_dir).checkout_commit(REPO, "1" * 40, tmp_path / "w")
    assert caught.value.path == str(repos_dir)
    assert f"{REPO}: commit {'1' * 40} is not in owner__proj.git" in str(caught.value)


def test_a_folder_that_is_not_a_git_directory(
    tmp_path: Path, history: History, repos_dir: Path
) -> None:
    (repos_dir / "owner__junk.git").mkdir()
    with pytest.raises(InputError, match=r"owner__junk.git \(owner/junk\) is not a git directory"):
        RepositorySource(repos_dir=repos_dir).checkout_commit(
            "owner/junk", history.base, tmp_path / "w"
        )


def test_a_mirror_missing_objects_leaves_nothing_behind(
    tmp_path: Path, history: History, repos_dir: Path
) -> None:
    broken = repos_dir / "owner__plain.git"  # loose objects: a file's blob can be taken away
    blob = git(history.upstream, "rev-parse", f"{history.base}:module.py")
    (broken / "objects" / blob[:2] / blob[2:]).unlink()
    (tmp_path / "w").mkdir()
    with pytest.raises(DatasetError, match="owner/plain: cannot copy commit"):
        RepositorySource(repos_dir=repos_dir).checkout_commit(
            "owner/plain", history.base, tmp_path / "w"
        )
    assert list((tmp_path / "w").iterdir()) == []


def test_bad_arguments(tmp_path: Path, history: History, repos_dir: Path) -> None:
    source = RepositorySource(repos_dir=repos_dir)
    with pytest.raises(ValueError, match="not a full commit id"):
        source.checkout_commit(REPO, "--upload-pack=touch /tmp/x", tmp_path / "w")
    with pytest.raises(ValueError, match="not a full commit id"):
        source.checkout_commit(REPO, history.base[:12], tmp_path / "w")
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("")
    with pytest.raises(FileExistsError):
        source.checkout_commit(REPO, history.base, tmp_path / "full")
    with pytest.raises(ValueError, match="either repos_dir or cache_dir"):
        RepositorySource()
    with pytest.raises(ValueError, match="either repos_dir or cache_dir"):
        RepositorySource(repos_dir=tmp_path, cache_dir=tmp_path)


@pytest.mark.parametrize(
    ("repo", "name"),
    [
        ("psf/requests", "psf__requests.git"),
        ("scikit-learn/scikit-learn", "scikit-learn__scikit-learn.git"),
        ("pylint-dev/pylint", "pylint-dev__pylint.git"),
        ("pydata/xarray", "pydata__xarray.git"),
    ],
)
def test_mirror_name(repo: str, name: str) -> None:
    assert mirror_name(repo) == name


@pytest.mark.parametrize("repo", ["requests", "a/b/c", "a/..", "../b", "a/b c", "", "/b"])
def test_mirror_name_refuses_what_is_not_owner_slash_name(repo: str) -> None:
    with pytest.raises(ValueError, match="owner/name"):
        mirror_name(repo)


# --------------------------------------------------- submodules the repository's setup bootstraps

AH_SETUP_CFG = "[ah_bootstrap]\nauto_use = True\n\n[metadata]\nname = proj\n"


@dataclasses.dataclass(frozen=True)
class WithSubmodule:
    repos_dir: Path
    base: str  # the superproject's commit, its gitlink naming `helper`
    helper: str  # the submodule's commit the gitlink names
    helper_later: str  # a later commit of the submodule: never in a working copy


def with_submodule(
    tmp_path: Path, setup_cfg: str = AH_SETUP_CFG, bootstrap: bool = True
) -> WithSubmodule:
    """A superproject whose base commit has `ah_bootstrap.py` (when `bootstrap`), `setup_cfg`
    and the git submodule `astropy_helpers` (a gitlink to `helper` of owner/helpers)."""
    helpers = tmp_path / "helpers"
    helpers.mkdir()
    git(helpers, "init", "-q", "--initial-branch=main")
    (helpers / "astropy_helpers").mkdir()
    (helpers / "astropy_helpers" / "__init__.py").write_text("VERSION = '3.0'\n")
    git(helpers, "add", "-A")
    git(helpers, "commit", "-q", "-m", "helpers 3.0", date="2020-01-01T00:00:00Z")
    helper = git(helpers, "rev-parse", "HEAD")
    helper_later = commit_module(helpers, "later = 1\n", "2020-06-01T00:00:00Z")
    upstream = tmp_path / "super"
    upstream.mkdir()
    git(upstream, "init", "-q", "--initial-branch=main")
    (upstream / "setup.cfg").write_text(setup_cfg)
    if bootstrap:
        (upstream / "ah_bootstrap.py").write_text("# imported by setup.py\n")
    (upstream / ".gitmodules").write_text(
        '[submodule "astropy_helpers"]\n\tpath = astropy_helpers\n'
        "\turl = https://github.com/owner/helpers.git\n"
    )
    (upstream / "astropy_helpers").mkdir()  # an unpopulated submodule's empty folder
    git(upstream, "add", "-A")
    git(upstream, "update-index", "--add", "--cacheinfo", f"160000,{helper},astropy_helpers")
    git(upstream, "commit", "-q", "-m", "with helpers", date="2020-02-01T00:00:00Z")
    base = git(upstream, "rev-parse", "HEAD")
    folder = tmp_path / "repos"
    folder.mkdir()
    git(tmp_path, "clone", "-q", "--mirror", str(upstream), str(folder / mirror_name(REPO)))
    git(tmp_path, "clone", "-q", "--mirror", str(helpers), str(folder / "owner__helpers.git"))
    return WithSubmodule(folder, base, helper, helper_later)


def test_the_submodule_ah_bootstrap_initializes_is_found(tmp_path: Path) -> None:
    made = with_submodule(tmp_path)
    found = bootstrapped_submodules(made.repos_dir / mirror_name(REPO), made.base)
    assert found == (Submodule("astropy_helpers", "owner/helpers", made.helper),)


@pytest.mark.parametrize(
    ("setup_cfg", "bootstrap"),
    [
        (AH_SETUP_CFG, False),  # no ah_bootstrap.py: nothing initializes the submodule
        ("[ah_bootstrap]\nauto_use = True\nuse_git = False\n", True),
        ("[ah_bootstrap]\noffline = True\n", True),
        ("[ah_bootstrap]\npath = other_helpers\n", True),  # it bootstraps another folder
    ],
)
def test_submodules_the_setup_does_not_initialize_stay_empty(
    tmp_path: Path, setup_cfg: str, bootstrap: bool
) -> None:
    made = with_submodule(tmp_path, setup_cfg, bootstrap)
    assert bootstrapped_submodules(made.repos_dir / mirror_name(REPO), made.base) == ()


def test_the_submodule_is_checked_out_as_git_submodule_update_init_leaves_it(
    tmp_path: Path,
) -> None:
    made = with_submodule(tmp_path)
    source = RepositorySource(repos_dir=made.repos_dir)
    copy = source.checkout_commit(REPO, made.base, tmp_path / "copy")
    (sub,) = bootstrapped_submodules(source.mirror(REPO), made.base)
    add_submodule(REPO, copy, sub.path, source.mirror(sub.repo, sub.commit), sub.commit)
    # " <sha> <path>": initialized and at the gitlink's commit, so ah_bootstrap does nothing
    status = git_output(copy, "submodule", "status")
    assert status.startswith(f" {made.helper} astropy_helpers")
    assert (copy / "astropy_helpers" / "astropy_helpers" / "__init__.py").is_file()
    assert (copy / "astropy_helpers" / ".git").is_file()  # absorbed under .git/modules
    assert git(copy, "status", "--porcelain") == ""
    kept = git(copy / "astropy_helpers", "rev-list", "--all").split()
    assert kept == [made.helper]  # nothing later of the submodule either
    assert made.helper_later not in kept
