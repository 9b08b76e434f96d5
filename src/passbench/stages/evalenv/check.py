"""`passbench env check`: what an evaluation environment lacks, item by item.

Each check is one CheckItem (ok or not, with a line saying why), grouped by kind:

    environment  the interpreter, the metadata record, the lock it was built from
    module       every module the benchmark imports, imported by the environment's Python
    nltk         every NLTK data package, in <env>/nltk_data
    program      host programs tasks run (the sandbox shows the host's /usr read-only)
    repository   a benchmark's per-task environments, summed per repository (SWE-bench)
    task         one task's environment: what it is built from, whether it is built, why not

Missing things are data in the report, not exceptions: a user wants the whole list at once.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from passbench.core.errors import EnvironmentError_
from passbench.stages.evalenv.hostenv import host_environment
from passbench.stages.evalenv.location import env_path, env_python
from passbench.stages.evalenv.lock import packaged_lock_path, read_lock
from passbench.stages.evalenv.metadata import read_metadata
from passbench.stages.evalenv.nltk_data import NLTK_DIR_NAME, find_package
from passbench.stages.evalenv.specs import EnvSpec, get_spec, minor_version

CheckKind = Literal["environment", "module", "nltk", "program", "repository", "task"]

#: The PATH samples get besides the environment's own bin folder (see EnvInfo).
SAMPLE_SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"

#: Seconds the import probe may take (tensorflow alone takes several on a small machine).
IMPORT_TIMEOUT_S = 300.0

# Run by the environment's interpreter: import each module, one JSON line per module.
_IMPORT_PROBE = r"""
import importlib, json, sys
for name in sys.argv[1:]:
    try:
        importlib.import_module(name)
        error = ""
    except BaseException as exc:
        lines = str(exc).strip().splitlines()
        error = f"{type(exc).__name__}: {lines[-1] if lines else ''}"
    print(json.dumps({"module": name, "error": error}), flush=True)
"""


@dataclass(frozen=True)
class CheckItem:
    kind: CheckKind
    name: str
    ok: bool
    detail: str = ""


@dataclass(frozen=True)
class EnvReport:
    """Every check on one environment."""

    name: str
    root: Path
    items: tuple[CheckItem, ...]

    @property
    def ok(self) -> bool:
        return all(item.ok for item in self.items)

    @property
    def problems(self) -> list[CheckItem]:
        return [item for item in self.items if not item.ok]


def check_env(name: str, path: str | Path | None = None, *, modules: bool = True) -> EnvReport:
    """Check environment `name` (at `path` or the default location); `modules=False` skips
    the slow import probe."""
    spec = get_spec(name)
    root = env_path(name, path)
    python = env_python(root)
    items: list[CheckItem] = []
    if not python.exists():
        items.append(
            CheckItem(
                "environment",
                "interpreter",
                False,
                f"{python} does not exist: run passbench env create {name}",
            )
        )
        return EnvReport(name, root, tuple(items))
    items.append(CheckItem("environment", "interpreter", True, str(python)))
    items.extend(_metadata_items(spec, root))
    if modules:
        items.extend(check_imports(python, spec.modules))
    items.extend(
        CheckItem("nltk", package, True, str(found))
        if (found := find_package(root / NLTK_DIR_NAME, package)) is not None
        else CheckItem("nltk", package, False, f"not in {root / NLTK_DIR_NAME}")
        for package in spec.nltk_packages
    )
    for program in spec.executables:
        where = shutil.which(program.name, path=SAMPLE_SYSTEM_PATH)
        items.append(
            CheckItem("program", program.name, True, where)
            if where is not None
            else CheckItem(
                "program",
                program.name,
                False,
                f"not on {SAMPLE_SYSTEM_PATH} (apt-get install {program.apt_package}; "
                f"used by tasks {program.used_by})",
            )
        )
    return EnvReport(name, root, tuple(items))


def _metadata_items(spec: EnvSpec, root: Path) -> list[CheckItem]:
    name = spec.name
    try:
        metadata = read_metadata(root)
    except EnvironmentError_ as error:
        return [CheckItem("environment", "metadata", False, str(error))]
    if metadata is None:
        return [
            CheckItem(
                "environment",
                "metadata",
                False,
                f"no record in {root}: creation was interrupted or failed; "
                f"run passbench env create {name}",
            )
        ]
    items = [CheckItem("environment", "metadata", True, f"created {metadata.created_at}")]
    minor = minor_version(metadata.python_version)
    if minor not in spec.locks:
        items.append(
            CheckItem(
                "environment",
                "python",
                False,
                f"Python {metadata.python_version}, expected one of {spec.supported_pythons}: "
                f"run passbench env create {name} --python PATH",
            )
        )
        return items
    # The lock of the env's own Python version: each version has its own.
    lock_file = spec.lock_for(minor)
    lock = read_lock(packaged_lock_path(lock_file))
    if metadata.lock_sha256 == lock.sha256:
        items.append(
            CheckItem("environment", "lock", True, f"{lock_file}, sha256 {lock.sha256[:12]}")
        )
    else:
        items.append(
            CheckItem(
                "environment",
                "lock",
                False,
                f"built from sha256 {metadata.lock_sha256[:12]}, this passbench ships "
                f"{lock.sha256[:12]} ({lock_file}): run passbench env create {name}",
            )
        )
    items.append(CheckItem("environment", "python", True, f"Python {metadata.python_version}"))
    return items


def check_imports(python: Path, modules: tuple[str, ...] | list[str]) -> list[CheckItem]:
    """Import each module in a fresh interpreter; one CheckItem per module."""
    try:
        with host_environment() as environ:
            environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
            result = subprocess.run(
                [str(python), "-c", _IMPORT_PROBE, *modules],
                capture_output=True,
                text=True,
                timeout=IMPORT_TIMEOUT_S,
                check=False,
                env=environ,
                cwd=python.parent,  # not the caller's folder: its files must not shadow modules
            )
        output, crash = result.stdout, result.returncode != 0
    except subprocess.TimeoutExpired as expired:
        raw = expired.stdout or b""
        output = raw.decode() if isinstance(raw, bytes) else raw
        crash = True
    seen: dict[str, str] = {}
    for line in output.splitlines():
        if line.startswith("{"):
            record = json.loads(line)
            seen[record["module"]] = record["error"]
    items = []
    culprit_reported = False
    for module in modules:
        if module in seen:
            problem = seen[module]
            items.append(CheckItem("module", module, not problem, problem or "imports"))
        elif crash and not culprit_reported:
            culprit_reported = True
            items.append(
                CheckItem(
                    "module", module, False, "the interpreter crashed or hung while importing it"
                )
            )
        else:
            items.append(
                CheckItem(
                    "module",
                    module,
                    False,
                    "not checked (an earlier import crashed the interpreter)",
                )
            )
    return items
