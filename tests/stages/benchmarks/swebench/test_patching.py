"""The official patch-apply fallback chain on real git working copies, and the files a diff
touches."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from tests.gitrepo import git_output

from passbench.core.errors import EnvironmentError_
from passbench.stages.benchmarks.swebench.patching import (
    ALREADY_APPLIED_CHECK,
    APPLY_COMMANDS,
    APPLY_PATCH_FAIL,
    APPLY_PATCH_PASS,
    apply_patch,
    diff_path,
    touched_files,
)

LINES = "".join(f"line {n}\n" for n in range(1, 13))


def commit_all(repo: Path, message: str) -> None:
    git_output(repo, "add", "-A")
    git_output(repo, "commit", "-q", "-m", message)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A working copy: a.txt (12 lines), crlf.txt (CRLF lines), blob.bin (binary)."""
    path = tmp_path / "repo"
    path.mkdir()
    git_output(path, "init", "-q")
    (path / "a.txt").write_text(LINES)
    (path / "crlf.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    (path / "blob.bin").write_bytes(b"\x00\x01old")
    commit_all(path, "base")
    return path


def diff_of(repo: Path, change: dict[str, bytes], *flags: str) -> str:
    """The `git diff` (with `flags`) that makes `change`, taken and then undone."""
    for name, data in change.items():
        (repo / name).write_bytes(data)
    git_output(repo, "add", "-A", "-N")
    patch = git_output(repo, "diff", *flags)
    git_output(repo, "reset", "-q")
    git_output(repo, "checkout", "-q", "--", ".")
    git_output(repo, "clean", "-fdq")
    return patch


def untracked(repo: Path) -> list[str]:
    return sorted(git_output(repo, "ls-files", "--others").split())


def test_a_clean_patch_applies_with_the_first_command(repo: Path) -> None:
    patch = diff_of(repo, {"a.txt": LINES.replace("line 6\n", "line six\n").encode()})
    outcome = apply_patch(repo, patch)
    assert (outcome.applied, outcome.command) == (True, "git apply --verbose")
    assert "Applied patch a.txt cleanly" in outcome.output
    assert "line six\n" in (repo / "a.txt").read_text()
    assert outcome.log() == f"{APPLY_PATCH_PASS}:\n{outcome.output}"


def test_three_way_merges_a_patch_whose_context_changed_when_git_has_the_old_blob(
    repo: Path,
) -> None:
    patch = diff_of(repo, {"a.txt": LINES.replace("line 6\n", "line six\n").encode()})
    (repo / "a.txt").write_text(LINES.replace("line 3\n", "line three\n"))
    commit_all(repo, "the context moves on")
    outcome = apply_patch(repo, patch)
    assert (outcome.applied, outcome.command) == (True, "git apply --verbose --3way")
    assert (repo / "a.txt").read_text() == LINES.replace("line 3\n", "line three\n").replace(
        "line 6\n", "line six\n"
    )
    assert outcome.log().splitlines()[0] == "Failed to apply patch: git apply --verbose"


def test_a_patch_only_gnu_patch_applies_with_fuzz_after_resets(repo: Path) -> None:
    """Context drifted and the diff names no blobs, so no `git apply` can use it; `--reject`
    leaves a .rej behind, which the reset before `patch` removes; `patch` applies the hunk with
    fuzz and, as officially, keeps a .orig backup because the patch did not match exactly."""
    patch = (
        "--- a/a.txt\n+++ b/a.txt\n@@ -4,7 +4,7 @@\n"
        " line 4\n line five\n line 6\n-line 7\n+line seven\n line 8\n line 9\n line 10\n"
    )
    (repo / "a.txt").write_text(LINES.replace("line 5\n", "line 5 changed\n"))
    commit_all(repo, "drift")
    outcome = apply_patch(repo, patch)
    assert (outcome.applied, outcome.command) == (True, APPLY_COMMANDS[-1])
    assert "fuzz" in outcome.output
    assert "line seven\n" in (repo / "a.txt").read_text()
    assert untracked(repo) == ["a.txt.orig"]  # no a.txt.rej from the --reject attempt
    log = outcome.log().splitlines()
    assert log[:3] == [f"Failed to apply patch: {command}" for command in APPLY_COMMANDS[:3]]
    assert log[3] == f"{APPLY_PATCH_PASS}:"


def test_a_crlf_patch_applies_only_with_gnu_patch_which_writes_lf(repo: Path) -> None:
    patch = diff_of(repo, {"a.txt": LINES.replace("line 6\n", "line six\n").encode()})
    outcome = apply_patch(repo, patch.replace("\n", "\r\n"))
    assert (outcome.applied, outcome.command) == (True, APPLY_COMMANDS[-1])
    assert "Stripping trailing CRs from patch" in outcome.output
    assert (repo / "a.txt").read_bytes() == LINES.replace("line 6\n", "line six\n").encode()
    assert untracked(repo) == []


def test_a_patch_of_a_crlf_file_applies_with_git_apply(repo: Path) -> None:
    patch = diff_of(repo, {"crlf.txt": b"one\r\nTWO\r\nthree\r\n"})
    assert "\r\n" in patch
    outcome = apply_patch(repo, patch)
    assert (outcome.applied, outcome.command) == (True, "git apply --verbose")
    assert (repo / "crlf.txt").read_bytes() == b"one\r\nTWO\r\nthree\r\n"


def test_a_git_binary_patch_applies_with_git_apply(repo: Path) -> None:
    patch = diff_of(repo, {"blob.bin": b"\x00\x02new", "new.bin": b"\x00fresh"}, "--binary")
    assert "GIT binary patch" in patch
    outcome = apply_patch(repo, patch)
    assert (outcome.applied, outcome.command) == (True, "git apply --verbose")
    assert (repo / "blob.bin").read_bytes() == b"\x00\x02new"
    assert (repo / "new.bin").read_bytes() == b"\x00fresh"


def test_a_binary_diff_without_content_counts_as_applied_without_its_content(repo: Path) -> None:
    """'Binary files ... differ': every git apply refuses it, GNU patch exits 0 having changed
    nothing but creating the new file empty. Officially that is "Applied Patch"."""
    patch = diff_of(repo, {"blob.bin": b"\x00\x02new", "new.bin": b"\x00fresh"})
    assert "Binary files a/blob.bin and b/blob.bin differ" in patch
    outcome = apply_patch(repo, patch)
    assert (outcome.applied, outcome.command) == (True, APPLY_COMMANDS[-1])
    assert (repo / "blob.bin").read_bytes() == b"\x00\x01old"
    assert (repo / "new.bin").read_bytes() == b""


def test_a_patch_that_applies_nowhere_fails_with_the_last_output(repo: Path) -> None:
    patch = "--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n nothing\n-like\n+this\n here\n"
    outcome = apply_patch(repo, patch)
    assert (outcome.applied, outcome.command) == (False, APPLY_COMMANDS[-1])
    assert "FAILED" in outcome.output  # GNU patch: "Hunk #1 FAILED at 1."
    log = outcome.log().splitlines()
    assert log[:4] == [f"Failed to apply patch: {command}" for command in APPLY_COMMANDS]
    assert log[4] == f"{APPLY_PATCH_FAIL}:"
    assert (repo / "a.txt").read_text() == LINES


def test_text_without_a_diff_fails(repo: Path) -> None:
    outcome = apply_patch(repo, "I could not find the bug.\n")
    assert not outcome.applied
    assert "Only garbage was found in the patch input" in outcome.output


def test_an_empty_patch_is_applied_by_gnu_patch(repo: Path) -> None:
    """Every git apply refuses empty input, GNU patch accepts it. The official run never gets
    here: it sets empty patches aside as "empty patch" instances first."""
    outcome = apply_patch(repo, "")
    assert (outcome.applied, outcome.command) == (True, APPLY_COMMANDS[-1])
    assert git_output(repo, "status", "--porcelain") == ""


def test_a_patch_already_applied_is_verified_by_the_reverse_check(repo: Path) -> None:
    """Without index lines --3way has no blobs to merge (with them it would merge the identical
    change cleanly); GNU patch --forward skips a patch it finds applied and exits 1."""
    patch = diff_of(repo, {"a.txt": LINES.replace("line 6\n", "line six\n").encode()})
    patch = "".join(line for line in patch.splitlines(True) if not line.startswith("index "))
    (repo / "a.txt").write_text(LINES.replace("line 6\n", "line six\n"))
    commit_all(repo, "the change is in already")
    outcome = apply_patch(repo, patch)
    assert (outcome.applied, outcome.command, outcome.output) == (True, ALREADY_APPLIED_CHECK, "")
    assert outcome.log().endswith(f"{APPLY_PATCH_PASS}: verified already applied")


def test_user_git_configuration_cannot_change_the_answer(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With apply.whitespace=error a user's git refuses trailing spaces; the official container
    has no such configuration, and neither has the chain here."""
    patch = diff_of(repo, {"a.txt": LINES.replace("line 6\n", "line six   \n").encode()})
    config = tmp_path / "gitconfig"
    config.write_text("[apply]\n\twhitespace = error\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    monkeypatch.setenv("GIT_DIR", str(tmp_path / "elsewhere"))  # would point git elsewhere
    refused = subprocess.run(
        ["git", "-C", str(repo), "--git-dir", str(repo / ".git"), "apply", "--check", "-"],
        input=patch,
        text=True,
        capture_output=True,
    )
    assert refused.returncode != 0  # the user's git would refuse it
    outcome = apply_patch(repo, patch)
    assert (outcome.applied, outcome.command) == (True, "git apply --verbose")


def test_a_patch_git_cannot_encode_is_not_applied(repo: Path) -> None:
    outcome = apply_patch(repo, "--- a/a.txt\n+++ b/a.txt\n\ud800\n")
    assert (outcome.applied, outcome.command) == (False, "")
    assert "UTF-8" in outcome.output
    assert outcome.log() == f"{APPLY_PATCH_FAIL}:\n{outcome.output}"


def test_the_working_copy_must_be_a_git_one(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="not a git working copy"):
        apply_patch(tmp_path, "")


def test_a_missing_tool_is_an_environment_error(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    git_path = shutil.which("git")
    assert git_path is not None
    (bin_dir / "git").symlink_to(git_path)
    monkeypatch.setenv("PATH", str(bin_dir))
    with pytest.raises(EnvironmentError_, match="'patch' is not installed"):
        apply_patch(repo, "")


def test_touched_files_names_every_path_once_in_order(repo: Path) -> None:
    (repo / "d").mkdir()
    (repo / "d" / "old.py").write_text("x = 1\n" * 5)
    (repo / "gone.py").write_text("bye\n")
    (repo / "run.sh").write_text("echo\n")
    (repo / "café.py").write_text("a\n")
    commit_all(repo, "more files")
    git_output(repo, "mv", "d/old.py", "d/new.py")
    git_output(repo, "rm", "-q", "gone.py")
    (repo / "a.txt").write_text(LINES + "more\n")
    (repo / "blob.bin").write_bytes(b"\x00\x09")
    (repo / "run.sh").chmod(0o755)
    (repo / "café.py").write_text("b\n")
    (repo / "new file.py").write_text("new\n")
    git_output(repo, "add", "-A")
    patch = git_output(repo, "diff", "--cached", "-M")
    assert '"a/caf\\303\\251.py"' in patch  # git quotes the name
    assert touched_files(patch) == (
        "a.txt",
        "blob.bin",
        "café.py",
        "d/old.py",
        "d/new.py",
        "gone.py",
        "new file.py",
        "run.sh",
    )
    assert touched_files(patch.replace("\n", "\r\n")) == touched_files(patch)
    assert touched_files(patch + patch) == touched_files(patch)


def test_touched_files_of_text_without_a_diff_is_empty() -> None:
    assert touched_files("") == ()
    assert touched_files("I could not find the bug.\n") == ()


def test_touched_files_refuses_malformed_hunks() -> None:
    with pytest.raises(ValueError, match="not a valid unified diff"):
        touched_files("--- a/x.py\n+++ b/x.py\n@@ -1,3 +1,3 @@\n-only one line\n")


@pytest.mark.parametrize(
    ("name", "path"),
    [
        ("a/x/y.py", "x/y.py"),
        ("b/x.py", "x.py"),
        ("/dev/null", None),
        ('"b/t\\tab.py"', "t\tab.py"),
        ('"a/caf\\303\\251.py"', "café.py"),
        ("src/x.py", "x.py"),  # -p1 strips the first component whatever it is
        ("x.py", "x.py"),
        ("a/x.py\r", "x.py"),
    ],
)
def test_diff_path(name: str, path: str | None) -> None:
    assert diff_path(name) == path
