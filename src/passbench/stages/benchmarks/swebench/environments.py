"""SWE-bench test environments without Docker or conda: one Python environment per lock.

    EnvironmentLock (locks.py) ──► build_environment: a Python prefix made from pyenv's
        interpreter of the lock's version (its own binary and site-packages, the standard
        library linked; not a venv, see `_make_prefix`), `pip install --no-deps` of the exact
        pins, build backends aside, checks, evalenv's manifest ──► published atomically in the
        cache under the lock's sha256

**Builds.** In `<cache>/builds/<sha>-<token>/`, a folder that never moves (pip's scripts hold
absolute paths, so a built environment cannot be renamed), then published by renaming a fresh
symbolic link to `<cache>/<sha>`: a reader sees either no environment or a complete one. An
advisory lock per sha256 makes a concurrent builder wait and then find the first one's result; a
crashed build leaves only an unpublished folder. The sandbox must mount the environment at its
real path (`BuiltEnvironment.root`) and the base interpreter's prefix, both read-only.

**Installing the repository offline** (`repository_install_command`, `instance_environment`).
The official images run the spec's `install` (mostly `pip install -e .`) in /testbed, online,
with pip's build isolation. Here the environment is read-only and there is no network, so:
- build backends the environment lacks (setuptools_scm, flit_core, cython...) are installed at
  build time into `<env>/passbench-build-tools`, on PYTHONPATH only during the install step;
- pip runs with `--no-build-isolation --no-deps --no-index` and `--prefix <env>/instance`, an
  empty folder of the environment that the sandbox covers with a writable per-instance bind
  mount;
- a `.pth` file in the environment's site-packages adds `<env>/instance/lib/pythonX.Y/
  site-packages` with `site.addsitedir`, so the editable install's own `.pth` (or egg-link) is
  honoured by every interpreter the tests start, tox and xdist included, with no variable to
  pass along; `<env>/instance/bin` (the repository's console scripts, such as pytest's own
  `pytest`) comes first on PATH.
setuptools_scm (pytest, xarray, astropy) reads the working copy's git metadata: `git` must be in
the sandbox and the working copy must keep its tags reachable from the base commit; git's
ownership check is turned off through GIT_CONFIG_* variables, not a global git config.
`evaluate` runs the install and the tests in one sandbox run, as the official eval script does
(it reinstalls right before the tests), with a fresh empty folder of that run mounted writable
over `<env>/instance`: what the tests do to the install stays in their own run, and the rest of
the environment stays read-only.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import platform
import secrets
import shlex
import shutil
import subprocess
import tempfile
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal

from passbench.core.errors import EnvironmentError_, InputError
from passbench.core.records import RepositoryEnvironment
from passbench.stages.benchmarks.swebench.locks import (
    EnvironmentChoice,
    EnvironmentLock,
    Requirement,
)
from passbench.stages.benchmarks.swebench.specs import RepoSpec
from passbench.stages.evalenv.hostenv import host_environment
from passbench.stages.evalenv.interpreters import find_interpreter
from passbench.stages.evalenv.lock import normalize_name
from passbench.stages.evalenv.manifest import record_manifest, verify_manifest

RECORD_FILE = "passbench-swebench-env.json"
#: The environment cache the test environments (and the loopback httpbin's tool environment)
#: are in, by name, as a machine that does not share this one's files finds it
#: ($PASSBENCH_SWEBENCH_ENV_DIR, else envs/swebench in its user data folder:
#: testenvs.environments_folder).
ENVIRONMENT_CACHE = "swebench"
LOCK_FILE = "passbench-lock.txt"
BUILD_TOOLS_DIR = "passbench-build-tools"
INSTANCE_DIR = "instance"
SITE_HOOK_FILE = "_passbench_instance_site.pth"
#: Set by `instance_environment`; the install command installs under it.
SITE_PREFIX_VARIABLE = "PASSBENCH_SITE_PREFIX"
SITE_PACKAGES_VARIABLE = "PASSBENCH_SITE_PACKAGES"

OutputCallback = Callable[[str], None]

# ------------------------------------------------------------------------------- interpreters


@dataclass(frozen=True)
class Interpreter:
    """A base interpreter to make environments from (never itself a venv or a pyenv shim)."""

    path: Path
    version: str  # "3.9.18"
    source: str  # "pyenv (exact patch)", "pyenv", "PATH", "uv", "this Python"
    base_prefix: Path  # what the sandbox must show read-only beside the environment


_PROBE = (
    "import os, sys, platform; print(platform.python_version()); print(sys.base_prefix); "
    "print(os.path.realpath(getattr(sys, '_base_executable', None) or sys.executable))"
)


def choose_interpreter(python: str) -> Interpreter | None:
    """pyenv's exact patch of `python` ("3.9.20") when installed, else any interpreter of its
    minor version (evalenv.interpreters: this Python, PATH, pyenv newest patch, uv)."""
    parts = python.split(".")
    minor = ".".join(parts[:2])
    pyenv = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv")
    exact = pyenv / "versions" / python / "bin" / f"python{minor}"
    if len(parts) == 3 and exact.is_file():
        return _resolve(exact, "pyenv (exact patch)")
    found = find_interpreter(minor)
    return None if found is None else _resolve(found.path, found.source)


def _resolve(python: Path, source: str) -> Interpreter | None:
    try:
        answer = subprocess.run(
            [str(python), "-I", "-c", _PROBE],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
            env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"},
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if answer.returncode != 0:
        return None
    version, base_prefix, executable = answer.stdout.split("\n")[:3]
    minor = ".".join(version.split(".")[:2])
    base = Path(base_prefix) / "bin" / f"python{minor}"
    return Interpreter(
        base if base.is_file() else Path(executable), version, source, Path(base_prefix)
    )


# --------------------------------------------------------------------------------------- builds


@dataclass(frozen=True)
class BuiltEnvironment:
    """A complete environment in the cache, and what results record about it."""

    repo: str
    lock_sha256: str
    lock_kind: str
    python_pin: str  # from the lock ("3.9.20")
    python_version: str  # of the interpreter inside ("3.9.18")
    interpreter: str  # the base interpreter it was made from, and where that was found
    root: Path  # the real path: scripts' shebangs name it, so the sandbox mounts it here
    base_prefix: Path  # the base interpreter's prefix: read-only in the sandbox as well
    site_packages: str  # relative to root and to the instance prefix: "lib/python3.9/site-packages"
    status: Literal["built", "cached"]
    seconds: float
    warnings: tuple[str, ...] = ()  # `pip check` findings (the official images have some too)
    resolved: tuple[str, ...] = ()  # name==version pip chose for UNPINNED parts (allow_unpinned)

    @property
    def python(self) -> Path:
        return self.root / "bin" / "python"

    @property
    def build_tools(self) -> Path:
        return self.root / BUILD_TOOLS_DIR

    @property
    def instance_prefix(self) -> Path:
        """Where the repository is installed; the sandbox binds a writable folder here."""
        return self.root / INSTANCE_DIR

    @property
    def readonly_paths(self) -> tuple[Path, ...]:
        return (self.root, self.base_prefix)

    def by_identity(self, rewrite: tuple[str, ...] = ()) -> RepositoryEnvironment:
        """This environment as another machine finds its own build of the same lock; the
        program's files named in `rewrite` name its folders, so they are rewritten there."""
        return RepositoryEnvironment(
            cache=ENVIRONMENT_CACHE,
            lock_sha256=self.lock_sha256,
            python_version=self.python_version,
            root=str(self.root),
            base_prefix=str(self.base_prefix),
            record=RECORD_FILE,
            rewrite=rewrite,
        )

    def identity(self, choice: EnvironmentChoice) -> dict[str, str]:
        """What a result records about the environment an instance ran in."""
        if choice.lock.sha256 != self.lock_sha256:
            raise ValueError(f"{choice.instance_id}'s lock is not this environment's")
        return {
            "key": str(choice.key),
            "lock_source": choice.source,
            "borrowed_from": choice.borrowed_from,
            "lock_sha256": self.lock_sha256,
            "lock_kind": self.lock_kind,
            "python_pin": self.python_pin,
            "python": self.python_version,
        }


def build_environment(
    lock: EnvironmentLock,
    cache_dir: Path,
    *,
    force: bool = False,
    allow_unpinned: bool = False,
    pip_args: Sequence[str] = (),
    interpreter: Interpreter | None = None,
    on_output: OutputCallback | None = None,
) -> BuiltEnvironment:
    """The environment of `lock` under `cache_dir`: the cached one (integrity-checked), or a new
    build. `pip_args` go to every pip install (`--no-index --find-links DIR` offline).

    Raises EnvironmentError_ when no interpreter of the lock's Python version is found, pip
    fails, the installed versions differ from the pins, or a cached environment was changed
    (rebuild with `force=True`); InputError for a lock with unpinned parts unless allowed."""
    started = time.monotonic()
    if lock.unpinned and not allow_unpinned:
        raise InputError(
            f"the lock of {lock.repo} {lock.sha256[:12]} leaves {len(lock.unpinned)} parts "
            f"unpinned ({lock.unpinned[0].label}...); building it would not be "
            "reproducible (allow_unpinned=True resolves them today)"
        )
    cache_dir = cache_dir.expanduser().absolute()
    (cache_dir / "builds").mkdir(parents=True, exist_ok=True)
    with _exclusive(cache_dir / f".{lock.sha256}.lock"):
        if not force:
            cached = open_environment(lock, cache_dir)
            if cached is not None:
                return cached
        chosen = interpreter or choose_interpreter(lock.python)
        if chosen is None:
            raise EnvironmentError_(
                f"no Python {lock.python_minor} on this machine (pyenv, uv, "
                f"PATH) for {lock.repo} {lock.sha256[:12]}: pyenv install {lock.python}"
            )
        root = cache_dir / "builds" / f"{lock.sha256[:16]}-{secrets.token_hex(4)}"
        try:
            built = _build(lock, root, chosen, pip_args, allow_unpinned, on_output, started)
        except BaseException:
            shutil.rmtree(root, ignore_errors=True)
            raise
        _publish(cache_dir / lock.sha256, root)
        return built


def open_environment(
    lock: EnvironmentLock, cache_dir: Path, *, full: bool = False
) -> BuiltEnvironment | None:
    """The published environment of `lock`, after the integrity check, or None. The check
    compares sizes and times with the manifest (fast); `full` hashes every file."""
    link = cache_dir.expanduser().absolute() / lock.sha256
    if not link.is_dir():
        return None
    root = link.resolve()
    record = _read_record(root)
    if record is None or record.get("lock_sha256") != lock.sha256:
        return None
    outcome = verify_manifest(root, full=full)
    if not outcome.intact:
        raise EnvironmentError_(
            f"the environment of {lock.repo} {lock.sha256[:12]} at {root} changed after it was "
            f"built: {outcome.change}; rebuild it (force=True)"
        )
    return _from_record(record, root, "cached", 0.0)


def _build(
    lock: EnvironmentLock,
    root: Path,
    interpreter: Interpreter,
    pip_args: Sequence[str],
    allow_unpinned: bool,
    on_output: OutputCallback | None,
    started: float,
) -> BuiltEnvironment:
    _make_prefix(root, interpreter)
    python = root / "bin" / "python"
    _run([str(python), "-m", "ensurepip", "--default-pip"], "ensurepip", on_output)
    site = Path(_ask(python, "import sysconfig; print(sysconfig.get_paths()['purelib'])"))
    _install_packages(lock, root, python, pip_args, on_output)
    installed = _installed(python)
    _check_pins(lock, installed)
    pinned = {pin.key for pin in lock.pins}
    resolved = [f"{n}=={v}" for n, v in sorted(installed.items()) if n not in pinned]
    instance_site = root / INSTANCE_DIR / site.relative_to(root)
    instance_site.mkdir(parents=True)
    (root / INSTANCE_DIR / "bin").mkdir()
    # site.addsitedir, not a PYTHONPATH entry: the .pth files of the editable install inside
    # it must be processed, in every interpreter the tests start (tox drops unknown variables)
    hook = f"import site; site.addsitedir({str(instance_site)!r})\n"
    (site / SITE_HOOK_FILE).write_text(hook, encoding="utf-8")
    (root / LOCK_FILE).write_text(lock.text, encoding="utf-8")
    record = {
        "schema_version": 1,
        "repo": lock.repo,
        "lock_sha256": lock.sha256,
        "lock_kind": lock.kind,
        "python_pin": lock.python,
        "python_version": _ask(python, "import platform; print(platform.python_version())"),
        "interpreter": f"{interpreter.path} ({interpreter.source})",
        "base_prefix": str(interpreter.base_prefix),
        "site_packages": str(site.relative_to(root)),
        "warnings": _pip_check(python),
        # what pip chose for the UNPINNED parts of a spec lock (allow_unpinned), or what the
        # interpreter seeded (ensurepip) and the lock does not pin
        "resolved": resolved,
        "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "platform": f"{platform.system()}-{platform.machine()}",
        "build_seconds": round(time.monotonic() - started, 1),
    }
    (root / RECORD_FILE).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    record_manifest(root)
    return _from_record(record, root, "built", time.monotonic() - started)


def _install_packages(
    lock: EnvironmentLock,
    root: Path,
    python: Path,
    pip_args: Sequence[str],
    on_output: OutputCallback | None,
) -> None:
    """The runtime pins into the environment, the build backends into their own folder."""
    pip = [str(python), "-m", "pip", "install", "--no-input", "--disable-pip-version-check",
           "--no-warn-script-location", "--progress-bar", "off"]  # fmt: skip
    with _requirements(lock.pins) as runtime:
        if lock.unpinned:  # allowed by the caller: pip resolves the rest today, around the pins
            wanted = [item.requirement for item in lock.unpinned if item.requirement]
            command = [*pip, "-r", str(runtime), *wanted, *pip_args]
        else:
            command = [*pip, "--no-deps", "-r", str(runtime), *pip_args]
        _run(command, "pip install", on_output, net=True)
    if lock.build_pins:
        target = ["--no-deps", "--target", str(root / BUILD_TOOLS_DIR)]
        with _requirements(lock.build_pins) as build:
            command = [*pip, *target, "-r", str(build), *pip_args]
            _run(command, "installing build backends", on_output, net=True)


def _make_prefix(root: Path, interpreter: Interpreter) -> None:
    """A Python installation at `root` that shares the base one's files.

    Not a venv: a symlink to a venv's python starts the base interpreter without the venv
    (CPython looks for pyvenv.cfg beside the path it was started by, before following links),
    and tox-current-env, which runs Sphinx's tests, starts Python through exactly such a link.
    CPython finds its prefix from its binary's real location instead (the `lib/pythonX.Y/os.py`
    landmark), so the binary is copied (a few kB beside the shared libpython) and the standard
    library is linked entry by entry; site-packages is the environment's own. This is what a
    conda environment is too: a prefix with its own interpreter.
    """
    minor = ".".join(interpreter.version.split(".")[:2])
    base = interpreter.base_prefix
    stdlib = base / "lib" / f"python{minor}"
    if not (stdlib / "os.py").is_file():
        raise EnvironmentError_(f"{base} has no standard library at {stdlib}")
    (root / "bin").mkdir(parents=True)
    shutil.copy2(interpreter.path, root / "bin" / f"python{minor}")
    for alias in ("python", "python3"):
        (root / "bin" / alias).symlink_to(f"python{minor}")
    library = root / "lib" / f"python{minor}"
    library.mkdir(parents=True)
    for entry in sorted(stdlib.iterdir()):
        if entry.name != "site-packages":
            (library / entry.name).symlink_to(entry)
    (library / "site-packages").mkdir()
    if (base / "include").is_dir():  # headers for the C extensions astropy builds
        (root / "include").symlink_to(base / "include")


def _check_pins(lock: EnvironmentLock, installed: Mapping[str, str]) -> None:
    wrong = [
        f"{pin.name}=={pin.version} (installed: {installed.get(pin.key, 'nothing')})"
        for pin in lock.pins
        if not _same_version(installed.get(pin.key, ""), pin.version)
    ]
    if wrong:
        raise EnvironmentError_(
            f"the environment of {lock.repo} {lock.sha256[:12]} does not match its lock: "
            + ", ".join(wrong)
        )


def _same_version(installed: str, pinned: str) -> bool:
    def release(text: str) -> str:
        text = text.lower().lstrip("v")
        while text.endswith(".0") and text.count(".") > 1:
            text = text[:-2]
        return text

    return bool(installed) and release(installed) == release(pinned)


def _installed(python: Path) -> dict[str, str]:
    listing = _ask(python, "", pip=["list", "--format=json", "--disable-pip-version-check"])
    return {normalize_name(row["name"]): row["version"] for row in json.loads(listing)}


def _pip_check(python: Path) -> list[str]:
    with host_environment(pip=True) as env:
        result = subprocess.run(
            [str(python), "-m", "pip", "check", "--disable-pip-version-check"],
            capture_output=True,
            text=True,
            check=False,
            env=env,
        )
    if result.returncode == 0:
        return []
    return [line for line in result.stdout.splitlines() if line.strip()]


def _ask(python: Path, code: str, *, pip: Sequence[str] = ()) -> str:
    command = [str(python), "-m", "pip", *pip] if pip else [str(python), "-c", code]
    with host_environment(pip=bool(pip)) as env:
        result = subprocess.run(command, capture_output=True, text=True, check=False, env=env)
    if result.returncode != 0:
        raise EnvironmentError_(f"{python} failed: {result.stderr.strip()[-1000:]}")
    return result.stdout.strip()


def _run(
    command: list[str], what: str, on_output: OutputCallback | None, net: bool = False
) -> None:
    tail: deque[str] = deque(maxlen=30)
    with host_environment(network=net, pip=True) as env:
        process = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env
        )
        assert process.stdout is not None
        with process:
            for raw in process.stdout:
                tail.append(raw.rstrip("\n"))
                if on_output is not None:
                    on_output(raw.rstrip("\n"))
    if process.returncode != 0:
        raise EnvironmentError_(
            f"{what} failed (exit code {process.returncode}); its last lines:\n" + "\n".join(tail)
        )


@contextlib.contextmanager
def _requirements(pins: Iterable[Requirement]) -> Iterator[Path]:
    """A requirements file of `pins`, outside the environment (not part of its manifest)."""
    with tempfile.TemporaryDirectory(prefix="passbench-lock-") as folder:
        path = Path(folder) / "requirements.txt"
        path.write_text("".join(f"{p.name}=={p.version}\n" for p in pins), encoding="utf-8")
        yield path


@contextlib.contextmanager
def _exclusive(path: Path) -> Iterator[None]:
    with open(path, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _publish(link: Path, root: Path) -> None:
    """Point `link` at `root` in one step: a fresh link renamed over the old one."""
    fresh = link.with_name(f".{link.name}.{secrets.token_hex(4)}")
    os.symlink(os.path.relpath(root, link.parent), fresh)
    os.replace(fresh, link)


def _read_record(root: Path) -> dict[str, Any] | None:
    try:
        data: Any = json.loads((root / RECORD_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and data.get("schema_version") == 1 else None


def _from_record(
    record: Mapping[str, Any], root: Path, status: Literal["built", "cached"], seconds: float
) -> BuiltEnvironment:
    return BuiltEnvironment(
        repo=record["repo"],
        lock_sha256=record["lock_sha256"],
        lock_kind=record["lock_kind"],
        python_pin=record["python_pin"],
        python_version=record["python_version"],
        interpreter=record["interpreter"],
        root=root,
        base_prefix=Path(record["base_prefix"]),
        site_packages=record["site_packages"],
        status=status,
        seconds=seconds,
        warnings=tuple(record["warnings"]),
        resolved=tuple(record["resolved"]),
    )


# ------------------------------------------------------------------ installing the repository

_OFFLINE_PIP = (
    "--no-build-isolation",  # the backends are in the environment's build-tools folder
    "--no-deps",  # the lock holds every dependency
    "--no-index",  # no network in the sandbox
    "--no-cache-dir",
    "--disable-pip-version-check",
    "--no-input",
    "--no-warn-script-location",
)
_PREFIX = f'"${SITE_PREFIX_VARIABLE}"'


def repository_install_command(spec: RepoSpec) -> str | None:
    """The spec's `install`, rewritten to run offline into the per-instance prefix (None when
    the spec installs nothing). pip keeps the spec's target, extras and flags (`-e`, `.[test]`,
    `--no-use-pep517`, `-v`); `setup.py install|develop` gets `--prefix`. InputError for a
    command it cannot rewrite."""
    if not spec.install:
        return None
    steps: list[str] = []
    for part in _split_shell(spec.install):
        if part in (";", "&&"):
            steps.append(part)
            continue
        words = shlex.split(part)
        if words[:4] == ["python", "-m", "pip", "install"] or words[:2] == ["pip", "install"]:
            rest = words[4:] if words[0] == "python" else words[2:]
            flags = [flag for flag in _OFFLINE_PIP if flag not in rest]
            steps.append(
                f"python -m pip install {shlex.join(flags)} --prefix {_PREFIX} " + shlex.join(rest)
            )
        elif words[:2] == ["python", "setup.py"] and words[2:3] in (["install"], ["develop"]):
            steps.append(f"{shlex.join(words)} --prefix {_PREFIX}")
        elif words[:3] == ["python", "setup.py", "build"]:
            steps.append(shlex.join(words))
        else:
            raise InputError(
                f"cannot run {part!r} offline", field=f"install of {spec.repo} {spec.version}"
            )
    return f'mkdir -p "${SITE_PACKAGES_VARIABLE}" && ' + " ".join(steps)


def _split_shell(command: str) -> list[str]:
    parts: list[str] = []
    for chunk in command.split("&&"):
        pieces = chunk.split(";")
        for index, piece in enumerate(pieces):
            if index:
                parts.append(";")
            parts.append(piece.strip())
        parts.append("&&")
    return [part for part in parts[:-1] if part]


def instance_environment(
    env: BuiltEnvironment, *, step: Literal["install", "test"], home: str
) -> dict[str, str]:
    """The variables of the install step or of the test step inside the sandbox (besides what
    the sandbox sets itself). The build backends are on PYTHONPATH during the install only.
    No VIRTUAL_ENV: the environment is a Python prefix, as the official conda one is."""
    prefix = env.instance_prefix
    variables = {
        "PATH": f"{prefix}/bin:{env.root}/bin:/usr/local/bin:/usr/bin:/bin",
        "HOME": home,
        SITE_PREFIX_VARIABLE: str(prefix),
        SITE_PACKAGES_VARIABLE: str(prefix / env.site_packages),
        # the working copy may belong to another user id than the sandbox's: no git refusal
        "GIT_CONFIG_COUNT": "1",
        "GIT_CONFIG_KEY_0": "safe.directory",
        "GIT_CONFIG_VALUE_0": "*",
    }
    if step == "install":
        path = [str(prefix / env.site_packages)]  # setup.py develop wants its target there
        if env.build_tools.is_dir():
            path.append(str(env.build_tools))
        variables.update(
            {"PYTHONPATH": ":".join(path), "PIP_CONFIG_FILE": os.devnull, "PIP_NO_INDEX": "1"}
        )
    return variables
