"""A small SWE-bench in a temporary folder: a real git repository with a bug and its issue, the
gold and test patches, eval scripts in the official shape, a mirror folder (`--repos`) and the
dataset files laid out like ../shared/datasets. CI cannot reach GitHub and ../shared holds no
repositories, so the tests of the SWE-bench benchmarks run on this.

The repository `octo/calc`: `calc/__init__.py` with `add` returning `a - b` (the bug) and
`sub`; `tests/test_calc.py` with `test_sub`. The gold patch fixes `add`; the test patch adds
`test_add` (FAIL_TO_PASS) beside `test_sub` (PASS_TO_PASS). Commits and a tag after the base
commit exist in the mirror and must never reach a working copy.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from tests.gitrepo import git, git_output

CALC_BUGGY = "def add(a, b):\n    return a - b\n\n\ndef sub(a, b):\n    return a - b\n"
CALC_FIXED = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"
TESTS_BASE = "from calc import sub\n\n\ndef test_sub():\n    assert sub(3, 1) == 2\n"
TESTS_NEW = (
    "from calc import add, sub\n\n\ndef test_sub():\n    assert sub(3, 1) == 2\n\n\n"
    "def test_add():\n    assert add(2, 2) == 4\n"
)
ISSUE = "add(2, 2) returns 0 instead of 4.\n"


@dataclass(frozen=True)
class SmallBench:
    data_dir: Path  # laid out like ../shared/datasets (swebench/*.jsonl.gz)
    repos_dir: Path  # <owner>__<name>.git mirrors
    rows: tuple[dict[str, object], ...]
    gold_patch: str
    test_patch: str
    base_commit: str


def _diff(work: Path, path: str, new_text: str) -> str:
    (work / path).write_text(new_text)
    patch = git_output(work, "diff", "--", path)
    git(work, "checkout", "--", path)
    return patch


def eval_script(base: str, test_file: str, test_patch: str, also_run: tuple[str, ...] = ()) -> str:
    """An eval script in the official 5.0 shape (conda activation, git setup, reset, test patch
    heredoc, the test command between the markers, reset); the command runs `test_file` and the
    files `also_run`."""
    return "\n".join(
        [
            "#!/bin/bash",
            "set -uxo pipefail",
            "source /opt/miniconda3/bin/activate",
            "conda activate testbed",
            "cd /testbed",
            "git config --global --add safe.directory /testbed",
            "cd /testbed",
            "git status",
            "git show",
            f"git -c core.fileMode=false diff {base}",
            "source /opt/miniconda3/bin/activate",
            "conda activate testbed",
            f"git checkout {base} {test_file}",
            "git apply -v - <<'EOF_114329324912'",
            test_patch,
            "EOF_114329324912",
            ": '>>>>> Start Test Output'",
            f"pytest -rA {' '.join((test_file, *also_run))}",
            ": '>>>>> End Test Output'",
            f"git checkout {base} {test_file}",
            "",
        ]
    )


def _submodule_repo(
    root: Path, repos_dir: Path, path: str, repo: str, files: Mapping[str, str]
) -> str:
    """A repository holding `files`, mirrored into `repos_dir`; its first commit's id (a later
    commit exists as well)."""
    work = root / f"submodule-{path}"
    work.mkdir(parents=True)
    git(work, "init", "-q", "-b", "main")
    for name, text in files.items():
        (work / name).parent.mkdir(parents=True, exist_ok=True)
        (work / name).write_text(text)
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", "the submodule's commit")
    first = git(work, "rev-parse", "HEAD")
    (work / "LATER.txt").write_text("a later commit of the submodule\n")
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", "later")
    owner, name = repo.split("/")
    git(root, "clone", "-q", "--mirror", str(work), str(repos_dir / f"{owner}__{name}.git"))
    return first


def make_small_bench(
    root: Path,
    repos: tuple[str, ...] = ("octo/calc",),
    *,
    version: str = "0.1",
    base_files: Mapping[str, str] | None = None,
    also_passing: tuple[str, ...] = (),
    submodule: tuple[str, str, Mapping[str, str]] | None = None,
) -> SmallBench:
    """The repository, its mirrors (one per name in `repos`, all the same history) and a
    dataset with one instance per repository, written as Verified, Lite test and Lite dev.
    `version` is the rows' version (a real repository's name and version bring its spec);
    `base_files` are committed in the base commit too, and `also_passing` (node ids in them)
    are PASS_TO_PASS tests the test command runs besides tests/test_calc.py. `submodule`
    (path, GitHub repository, files): the base commit has a git submodule at path, a commit
    of that repository holding the files (mirrored beside the others, with a later commit)."""
    work = root / "work"
    work.mkdir(parents=True)
    repos_dir = root / "repos"
    repos_dir.mkdir()
    gitlink = None if submodule is None else _submodule_repo(root, repos_dir, *submodule)
    git(work, "init", "-q", "-b", "main")
    (work / "calc").mkdir()
    (work / "calc" / "__init__.py").write_text(CALC_BUGGY)
    (work / "tests").mkdir()
    # a package: pytest puts the repository root on sys.path, so `calc` imports uninstalled
    (work / "tests" / "__init__.py").write_text("")
    (work / "tests" / "test_calc.py").write_text(TESTS_BASE)
    for path, text in (base_files or {}).items():
        (work / path).parent.mkdir(parents=True, exist_ok=True)
        (work / path).write_text(text)
    git(work, "add", "-A")
    if submodule is not None and gitlink is not None:
        path, repo, _ = submodule
        (work / ".gitmodules").write_text(
            f'[submodule "{path}"]\n\tpath = {path}\n\turl = https://github.com/{repo}.git\n'
        )
        (work / path).mkdir()  # what a clone without --recurse-submodules leaves
        git(work, "add", ".gitmodules")
        git(work, "update-index", "--add", "--cacheinfo", f"160000,{gitlink},{path}")
    git(work, "commit", "-q", "-m", "calc with a bug")
    git(work, "tag", "v0.1")
    base = git(work, "rev-parse", "HEAD")
    gold = _diff(work, "calc/__init__.py", CALC_FIXED)
    test_patch = _diff(work, "tests/test_calc.py", TESTS_NEW)
    # the future: the fix itself, and a tag on it, must never reach a working copy
    (work / "calc" / "__init__.py").write_text(CALC_FIXED)
    git(work, "commit", "-q", "-am", "the fix (later than the base)")
    git(work, "tag", "v0.2")
    rows = []
    for number, repo in enumerate(repos, start=1):
        owner, name = repo.split("/")
        mirror = repos_dir / f"{owner}__{name}.git"
        git(root, "clone", "-q", "--mirror", str(work), str(mirror))
        rows.append(
            {
                "repo": repo,
                "instance_id": f"{owner}__{name}-{number}",
                "base_commit": base,
                "patch": gold,
                "test_patch": test_patch,
                "problem_statement": ISSUE,
                "hints_text": "",
                "created_at": "2024-01-01T00:00:00Z",
                "version": version,
                "FAIL_TO_PASS": json.dumps(["tests/test_calc.py::test_add"]),
                "PASS_TO_PASS": json.dumps(["tests/test_calc.py::test_sub", *also_passing]),
                "environment_setup_commit": base,
                "difficulty": "<15 min fix",
                "eval_script": eval_script(
                    base,
                    "tests/test_calc.py",
                    test_patch,
                    tuple(dict.fromkeys(test.split("::")[0] for test in also_passing)),
                ),
                "log_parser": "parse_log_pytest",
                "eval_type": "pass_and_fail",
                "image": f"swebench/sweb.eval.x86_64.{owner}_1776_{name}-{number}:latest",
            }
        )
    data_dir = root / "data"
    (data_dir / "swebench").mkdir(parents=True)
    text = "".join(json.dumps(row) + "\n" for row in rows).encode()
    for name in ("swebench-verified", "swebench-lite", "swebench-lite-dev"):
        (data_dir / "swebench" / f"{name}.jsonl.gz").write_bytes(gzip.compress(text, mtime=0))
    return SmallBench(data_dir, repos_dir, tuple(rows), gold, test_patch, base)
