"""git for the real repositories tests build in a temporary folder: one fixed identity and none
of this machine's configuration or `GIT_*` variables, so a developer's ~/.gitconfig (or a git
hook running the tests with GIT_DIR set) cannot change what a test builds."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.org",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.org",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
}


def run_git(
    repo: Path, *args: str, date: str | None = None, check: bool = True
) -> subprocess.CompletedProcess[bytes]:
    """`git -C repo args...`; `date` is both the author and the committer date."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
    env.update(GIT_ENV)
    if date is not None:
        env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = date
    command = ["git", "-C", str(repo), *args]
    return subprocess.run(command, env=env, capture_output=True, check=check)


def git_output(repo: Path, *args: str, date: str | None = None) -> str:
    """What git printed, exactly (read as bytes: text mode would turn a diff's CRLF into LF)."""
    return run_git(repo, *args, date=date).stdout.decode("utf-8")


def git(repo: Path, *args: str, date: str | None = None) -> str:
    """What git printed, without the surrounding blank space (a hash, a ref, a list)."""
    return git_output(repo, *args, date=date).strip()


def commit_module(repo: Path, text: str, date: str) -> str:
    """Commit `module.py` holding `text` (its first line the message) at `date`; its hash."""
    (repo / "module.py").write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", text.strip(), date=date)
    return git(repo, "rev-parse", "HEAD")
