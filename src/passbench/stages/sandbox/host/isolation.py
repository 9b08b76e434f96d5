"""Which launcher a local sandbox gets: bubblewrap, or the rlimit-only fallback when the user
allowed it, or a refusal that says why and how to fix it.

No silent loss of isolation: the `local` backend never falls back on its own. The fallback runs
only when the user asked for it (`SandboxConfig.allow_unsandboxed`, the CLI's
`--allow-unsandboxed`) or named it (`local-rlimit`), and every result then records it.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

from passbench.core.errors import SandboxError
from passbench.core.records import Isolation
from passbench.stages.sandbox.base import SandboxConfig
from passbench.stages.sandbox.host.launch import BubblewrapLauncher, Launcher, RlimitLauncher
from passbench.stages.sandbox.host.workdirs import ScratchFolders

WarnCallback = Callable[[str], None]

_MISSING = "bubblewrap is not installed"
_INSTALL = "install bubblewrap (apt-get install bubblewrap)"
_NAMESPACES = (
    "allow unprivileged user namespaces (sysctl -w kernel.unprivileged_userns_clone=1; "
    "Ubuntu 24.04+: kernel.apparmor_restrict_unprivileged_userns=0; in a container: "
    "--security-opt seccomp=unconfined or a privileged container)"
)
_ALLOW = (
    "or pass --allow-unsandboxed to run samples with resource limits only "
    "(they can then read and change every file your user can)"
)


def bubblewrap_problem(
    config: SandboxConfig, private: Path, scratch: ScratchFolders
) -> tuple[Launcher | None, str]:
    """A working bubblewrap launcher, or None and why bubblewrap cannot isolate here (one
    line). Starts the real sandbox once (`python -c pass`) to find out."""
    missing = bubblewrap_missing()
    if missing is not None:
        return None, missing
    launcher = BubblewrapLauncher(config, private, scratch)
    found = launcher.probe()
    if found is None:
        return launcher, ""
    return None, "bubblewrap could not start a sandbox here: " + " ".join(found.split())


def bubblewrap_missing() -> str | None:
    """Why bubblewrap cannot isolate anything here because it is not installed, or None."""
    return f"{_MISSING} (no 'bwrap' on PATH)" if shutil.which("bwrap") is None else None


def refusal(problem: str, what: str = "samples", fallback: bool = True) -> str:
    """The one line that refuses to run `what` without isolation: why, and how to fix it
    (`fallback`: the caller offers --allow-unsandboxed)."""
    fix = _INSTALL if problem.startswith(_MISSING) else _NAMESPACES
    allow = f"; {_ALLOW}" if fallback else ""
    return f"refusing to run {what} without sandbox isolation: {problem}. Fix: {fix}{allow}"


def check_isolation(python: Path, scratch_dir: Path | None = None) -> str | None:
    """None when the `local` backend can isolate samples run by `python` on this machine,
    else the one line it would refuse with (`refusal`). Costs one sandbox start: a preflight
    before costly work (generating samples) that would otherwise end in the refusal."""
    config = SandboxConfig(python=python, scratch_dir=scratch_dir)
    scratch = ScratchFolders(config.scratch_dir)
    try:
        with tempfile.TemporaryDirectory(prefix="passbench-probe-") as private:
            launcher, problem = bubblewrap_problem(config, Path(private), scratch)
    finally:
        scratch.close()
    return None if launcher is not None else refusal(problem)


def choose_launcher(
    config: SandboxConfig,
    private: Path,
    scratch: ScratchFolders,
    force_fallback: bool,
    warn: WarnCallback,
) -> Launcher:
    """Bubblewrap when it works; the fallback when asked for by name (`force_fallback`) or
    allowed; otherwise SandboxError with `refusal`."""
    if force_fallback:
        problem = "the rlimit-only backend was chosen"
    else:
        launcher, problem = bubblewrap_problem(config, private, scratch)
        if launcher is not None:
            return launcher
        if not config.allow_unsandboxed:
            raise SandboxError(refusal(problem))
    fallback = RlimitLauncher(config, private, scratch)
    warn(
        "samples will run WITHOUT sandbox isolation (resource limits only): they can read "
        f"and change whatever this user can. Reason: {problem}. Every result records "
        f"isolation='{Isolation.RLIMIT.value}' and unsandboxed=true."
    )
    return fallback
