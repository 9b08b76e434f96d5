"""Building an evaluation environment from its lock: `passbench env create NAME`.

    choose Python X.Y -> its lock -> venv -> pip install --no-deps -r LOCK -> NLTK data
    -> passbench-env.json -> passbench-manifest.json (every file's sha256, manifest.py)

A spec may ship one lock per Python minor version: `--python` picks the lock of its version;
without it, an existing environment keeps its version (so the rebuild hint `locate_env` gives
rebuilds like with like), and a new one gets the official evaluator's version when an
interpreter of it is on the machine (interpreters.py), else the spec's default version; the
result says which and why.

The metadata file is written last, so an interrupted build never looks complete, and a
second run with the same lock finds it and returns at once (idempotent and fast in CI).
"""

from __future__ import annotations

import fcntl
import platform
import shutil
import subprocess
import sys
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Literal

from passbench.core.errors import EnvironmentError_, InputError
from passbench.core.progress import NullProgress, Progress
from passbench.stages.evalenv import nltk_data
from passbench.stages.evalenv.hostenv import host_environment
from passbench.stages.evalenv.interpreters import find_interpreter
from passbench.stages.evalenv.locate import EnvInfo, locate_env
from passbench.stages.evalenv.location import default_nltk_source, env_path, env_python
from passbench.stages.evalenv.lock import Lock, packaged_lock_path, read_lock
from passbench.stages.evalenv.manifest import record_manifest
from passbench.stages.evalenv.metadata import EnvMetadata, read_metadata, write_metadata
from passbench.stages.evalenv.specs import EnvSpec, get_spec, minor_version

CreateStatus = Literal["created", "up-to-date"]
OutputCallback = Callable[[str], None]

_PIP_FLAGS = (
    "--no-deps",  # the lock is complete: nothing may be resolved on the day
    "--no-input",
    "--disable-pip-version-check",
    "--no-warn-script-location",
    "--progress-bar",
    "off",
)


@dataclass(frozen=True)
class CreateResult:
    """What `create_env` did."""

    info: EnvInfo
    status: CreateStatus
    seconds: float
    nltk: nltk_data.NltkOutcome
    warnings: tuple[str, ...] = ()
    python_choice: str = ""  # which interpreter and lock a build used, and why (one line)


def create_env(
    name: str,
    *,
    path: str | Path | None = None,
    python: str | Path | None = None,
    nltk_source: str | Path | None = None,
    download_nltk: bool = True,
    force: bool = False,
    pip_args: Sequence[str] = (),
    progress: Progress | None = None,
    on_output: OutputCallback | None = None,
) -> CreateResult:
    """Build environment `name` from its lock, or return at once when it is up to date.

    `nltk_source` is a local NLTK data folder (default: $PASSBENCH_DATA_DIR/nltk_data);
    `pip_args` are passed to pip (e.g. `--find-links DIR --no-index` for offline installs);
    `on_output` receives every line pip prints.
    """
    report = progress or NullProgress()
    started = time.monotonic()
    spec = get_spec(name)
    root = env_path(name, path)
    explicit = _explicit_python(spec, python) if python is not None else None
    if explicit is not None:
        minor = minor_version(explicit[1])
        build_python: Path | None = explicit[0]
        choice = f"Python {explicit[1]} ({explicit[0]}, from --python), {spec.lock_for(minor)}"
    else:
        minor, build_python, choice = _default_python(spec, root)
    lock_file = spec.lock_for(minor)
    lock = read_lock(packaged_lock_path(lock_file))
    local_nltk = Path(nltk_source).expanduser() if nltk_source is not None else None
    if local_nltk is not None and not local_nltk.is_dir():
        raise InputError("NLTK data folder does not exist", path=local_nltk, field="--nltk-data")
    local_nltk = local_nltk or default_nltk_source()

    # One build at a time per environment (parallel CI jobs, two terminals): the second
    # waits, then finds the first one's environment up to date.
    with _exclusive(root):
        if not force and _is_up_to_date(root, lock):
            info, outcome = _top_up_nltk(name, path, spec, local_nltk)
            return CreateResult(info, "up-to-date", time.monotonic() - started, outcome)
        outcome, warnings = _build(
            root,
            spec,
            lock,
            build_python or find_python(spec, minor=minor),
            pip_args,
            report,
            on_output,
            local_nltk=local_nltk,
            download_nltk=download_nltk,
        )
        metadata = EnvMetadata(
            name=name,
            lock_file=lock_file,
            lock_sha256=lock.sha256,
            python_version=_python_version(env_python(root)),
            created_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
            passbench_version=_passbench_version(),
            platform=f"{platform.system()}-{platform.machine()}",
            install_seconds=round(time.monotonic() - started, 1),
            nltk_packages=dict(outcome.sources),
        )
        write_metadata(root, metadata)  # its presence means the build completed
        record_manifest(root)  # and then what every later run checks the files against
        return CreateResult(
            locate_env(name, path),
            "created",
            time.monotonic() - started,
            outcome,
            warnings,
            python_choice=choice,
        )


def _top_up_nltk(
    name: str, path: str | Path | None, spec: EnvSpec, local_nltk: Path | None
) -> tuple[EnvInfo, nltk_data.NltkOutcome]:
    """On an up-to-date env, copy NLTK packages that a local folder now has. Never download
    here, so a re-run on an offline machine costs nothing."""
    root = env_path(name, path)
    outcome = nltk_data.provision(
        env_python(root),
        root / nltk_data.NLTK_DIR_NAME,
        spec.nltk_packages,
        local_source=local_nltk,
        download=False,
    )
    info = locate_env(name, path)
    if any(source.startswith("copied") for source in outcome.sources.values()):
        write_metadata(root, _with_nltk(info.metadata, outcome))
        record_manifest(root)
        info = locate_env(name, path)
    return info, outcome


def _default_python(spec: EnvSpec, root: Path) -> tuple[str, Path | None, str]:
    """Without --python: (minor version, interpreter if already found, why, in one line).

    An environment already at `root` keeps its version (rebuilds are like for like). A new
    one gets the official evaluator's Python when an interpreter of it is on the machine, so
    that verdicts are the official ones by default; else the spec's default version, and the
    message says what that costs and how to get the official one.
    """
    kept = _existing_minor(spec, root)
    if kept is not None:
        hint = ""
        if spec.official_python and kept != spec.official_python:
            hint = (
                f"; `--python python{spec.official_python} --force` rebuilds it with the "
                "official evaluator's Python"
            )
        return (
            kept,
            None,
            (f"keeping Python {kept} of the environment at {root} ({spec.lock_for(kept)}){hint}"),
        )
    official = spec.official_python
    if official is None or official == spec.python:
        return spec.python, None, f"Python {spec.python}, {spec.lock_for(spec.python)}"
    found = find_interpreter(official)
    if found is not None:
        return (
            official,
            found.path,
            (
                f"Python {found.version} ({found.source}: {found.path}), the official "
                f"evaluator's version, with its pins ({spec.lock_for(official)})"
            ),
        )
    return (
        spec.python,
        None,
        (
            f"Python {official}, the official evaluator's, is not on this machine (PATH, pyenv, "
            f"uv): using Python {spec.python} with {spec.lock_for(spec.python)}, where a few "
            f"verdicts differ from the official ones (docs/evalenv.md); install Python {official} "
            f"and run `passbench env create {spec.name} --force` for the official environment"
        ),
    )


def _existing_minor(spec: EnvSpec, root: Path) -> str | None:
    """The Python version of the environment already at `root`, when the spec has a lock
    for it; None when there is none (or its record is unreadable: it is rebuilt)."""
    try:
        metadata = read_metadata(root)
    except EnvironmentError_:
        return None
    if metadata is not None and minor_version(metadata.python_version) in spec.locks:
        return minor_version(metadata.python_version)
    return None


def _build(
    root: Path,
    spec: EnvSpec,
    lock: Lock,
    interpreter: Path,
    pip_args: Sequence[str],
    report: Progress,
    on_output: OutputCallback | None,
    *,
    local_nltk: Path | None,
    download_nltk: bool,
) -> tuple[nltk_data.NltkOutcome, tuple[str, ...]]:
    """venv + packages + NLTK data, from scratch; returns the NLTK outcome and warnings."""
    if (platform.system(), platform.machine()) != ("Linux", "x86_64"):
        report.warn(
            f"the {spec.name} lock was resolved for Linux x86_64; on "
            f"{platform.system()} {platform.machine()} some pinned wheels may not exist"
        )
    _clear(root)
    version = _python_version(interpreter)
    report.start(1, f"creating a Python {version} virtual environment at {root}")
    _run([str(interpreter), "-m", "venv", str(root)], "creating the virtual environment", on_output)
    report.advance()
    _pip_install(root, lock, pip_args, report, on_output)
    warnings = _pip_check(root)
    for warning in warnings:
        report.warn(warning)

    if spec.nltk_packages:  # a tool environment (security) has none
        report.start(len(spec.nltk_packages), "fetching NLTK data")
    outcome = nltk_data.provision(
        env_python(root),
        root / nltk_data.NLTK_DIR_NAME,
        spec.nltk_packages,
        local_source=local_nltk,
        download=download_nltk,
    )
    report.advance(len(spec.nltk_packages))
    if outcome.missing:
        report.warn(
            f"NLTK data missing: {', '.join(outcome.missing)} ({outcome.download_error}); "
            "tasks that load it will fail. Re-run with --nltk-data DIR to add it."
        )
    report.finish()
    return outcome, tuple(warnings)


def find_python(
    spec: EnvSpec, python: str | Path | None = None, *, minor: str | None = None
) -> Path:
    """An interpreter to build the environment from.

    `python` (the user's --python) may be of any version the spec has a lock for. Without it:
    one of version `minor` (default: the spec's default version), the interpreter running
    passbench when it is that version, else pythonX.Y on PATH.
    """
    if python is not None:
        return _explicit_python(spec, python)[0]
    wanted = minor or spec.python
    if f"{sys.version_info.major}.{sys.version_info.minor}" == wanted:
        return Path(sys.executable)
    on_path = shutil.which(f"python{wanted}")
    if on_path is not None:
        return Path(on_path)
    raise EnvironmentError_(
        f"Python {wanted} was not found (the {spec.name} lock {spec.lock_for(wanted)} is for "
        f"it): install it (e.g. apt-get install python{wanted} python{wanted}-venv) or pass "
        "--python PATH"
    )


def _explicit_python(spec: EnvSpec, python: str | Path) -> tuple[Path, str]:
    """The --python interpreter and its full version; InputError when it does not run or
    the spec has no lock for its version (the message lists the supported versions)."""
    candidate = Path(python).expanduser()
    resolved = shutil.which(str(candidate)) if not candidate.exists() else str(candidate)
    if resolved is None:
        raise InputError("no such interpreter", path=candidate, field="--python")
    try:
        found = _python_version(Path(resolved))
    except EnvironmentError_ as error:
        raise InputError(str(error), field="--python") from error
    if minor_version(found) not in spec.locks:
        raise InputError(
            f"is Python {found}, but the {spec.name} environment has locks only for Python "
            f"{spec.supported_pythons}",
            path=resolved,
            field="--python",
        )
    return Path(resolved), found


@contextmanager
def _exclusive(root: Path) -> Iterator[None]:
    """Hold an advisory lock on `root` (a sibling file, so deleting `root` keeps it)."""
    root.parent.mkdir(parents=True, exist_ok=True)
    with open(root.parent / f".{root.name}.lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _is_up_to_date(root: Path, lock: Lock) -> bool:
    try:
        metadata = read_metadata(root)
    except EnvironmentError_:
        return False  # unreadable record: rebuild
    return (
        metadata is not None and metadata.lock_sha256 == lock.sha256 and env_python(root).exists()
    )


def _clear(root: Path) -> None:
    """Remove a previous (stale or broken) environment; refuse to delete anything else."""
    if not root.exists():
        root.parent.mkdir(parents=True, exist_ok=True)
        return
    if not root.is_dir():
        raise InputError("exists and is not a folder", path=root, field="--path")
    if any(root.iterdir()) and not (root / "pyvenv.cfg").exists():
        raise InputError(
            "exists, is not empty and is not a virtual environment; refusing to replace it",
            path=root,
            field="--path",
        )
    shutil.rmtree(root)


def _pip_install(
    root: Path,
    lock: Lock,
    pip_args: Sequence[str],
    report: Progress,
    on_output: OutputCallback | None,
) -> None:
    command = [
        str(env_python(root)),
        "-m",
        "pip",
        "install",
        *_PIP_FLAGS,
        "-r",
        lock.path,
        *pip_args,
    ]
    report.start(len(lock.pins), f"downloading {len(lock.pins)} pinned packages")
    installing = False
    tail: deque[str] = deque(maxlen=25)
    with host_environment(network=True, pip=True) as env:
        process = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1, env=env
        )
        assert process.stdout is not None
        with process:
            for raw in process.stdout:
                line = raw.rstrip("\n")
                tail.append(line)
                if on_output is not None:
                    on_output(line)
                # "Collecting x==1" (index) or "Processing /path/x.whl" (local file) per package
                if line.startswith(("Collecting ", "Processing ")) and not installing:
                    report.advance(info=line.split(" ", 1)[1].split(" ", 1)[0])
                elif line.startswith("Installing collected packages") and not installing:
                    installing = True
                    report.start(1, "installing (unpacking wheels)")
    if process.returncode != 0:
        raise EnvironmentError_(
            f"pip could not install {lock.path} into {root} (exit code {process.returncode}); "
            "its last lines:\n" + "\n".join(tail)
        )
    report.advance()


def _pip_check(root: Path) -> list[str]:
    """Inconsistencies pip sees among the installed packages (a lock should have none)."""
    result = _host_run(
        [str(env_python(root)), "-m", "pip", "check", "--disable-pip-version-check"], pip=True
    )
    if result.returncode == 0:
        return []
    return [f"pip check: {line}" for line in result.stdout.splitlines() if line.strip()]


def _run(command: list[str], what: str, on_output: OutputCallback | None) -> None:
    result = _host_run(command)
    if on_output is not None:
        for line in (result.stdout + result.stderr).splitlines():
            on_output(line)
    if result.returncode != 0:
        raise EnvironmentError_(
            f"{what} failed (exit code {result.returncode}): {result.stderr.strip()[-2000:]}"
        )


def _python_version(python: Path) -> str:
    result = _host_run([str(python), "-c", "import platform; print(platform.python_version())"])
    if result.returncode != 0:
        raise EnvironmentError_(f"{python} does not run: {result.stderr.strip()[-500:]}")
    return result.stdout.strip()


def _host_run(command: list[str], *, pip: bool = False) -> subprocess.CompletedProcess[str]:
    """Run an interpreter (the environment's, or the one building it) with the scrubbed host
    environment: no API keys, a private HOME (hostenv.py)."""
    with host_environment(pip=pip) as env:
        return subprocess.run(command, capture_output=True, text=True, check=False, env=env)


def _passbench_version() -> str:
    try:
        return version("passbench")
    except PackageNotFoundError:
        return "unknown"


def _with_nltk(metadata: EnvMetadata, outcome: nltk_data.NltkOutcome) -> EnvMetadata:
    sources = dict(metadata.nltk_packages)
    for package, source in outcome.sources.items():
        if source != "present" or package not in sources:
            sources[package] = source
    return EnvMetadata(**{**metadata.__dict__, "nltk_packages": sources})
