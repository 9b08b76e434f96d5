"""NLTK data for an evaluation environment: copied from a local folder, or downloaded.

Tasks find the data through NLTK_DATA, which the evaluator points at `<env>/nltk_data`.
Two sources, tried in this order for each package still missing:

1. a local folder in NLTK's own layout (`--nltk-data DIR`, or `$PASSBENCH_DATA_DIR/nltk_data`):
   copied, so the environment does not depend on that folder staying put;
2. NLTK's downloader, run by the environment's interpreter. Offline machines must not wait
   on it: the index fetch gets a short deadline, and if it misses it nothing else is tried.
"""

from __future__ import annotations

import json
import selectors
import shutil
import subprocess
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from passbench.stages.evalenv.hostenv import host_environment

NLTK_DIR_NAME = "nltk_data"

#: Seconds the downloader may take to fetch NLTK's index before we call the machine offline.
DEFAULT_PROBE_TIMEOUT_S = 15.0

#: Seconds all downloads together may take once the index was fetched.
DEFAULT_DOWNLOAD_TIMEOUT_S = 600.0

# Run by the environment's interpreter (NLTK lives there, not in passbench's environment).
# It prints one JSON line after the index fetch, then one with the per-package outcome.
_DOWNLOAD_SCRIPT = r"""
import json, socket, sys
socket.setdefaulttimeout(float(sys.argv[2]))
try:
    from nltk.downloader import Downloader
    downloader = Downloader()
    downloader.index()
except Exception as error:
    print(json.dumps({"index": False, "error": f"{type(error).__name__}: {error}"}), flush=True)
    sys.exit(0)
print(json.dumps({"index": True}), flush=True)
result = {}
for package in sys.argv[3:]:
    try:
        result[package] = bool(downloader.download(package, download_dir=sys.argv[1], quiet=True))
    except Exception:
        result[package] = False
print(json.dumps({"result": result}), flush=True)
"""


@dataclass
class NltkOutcome:
    """Where each package came from; `download_error` says why the downloader was not used."""

    sources: dict[str, str] = field(default_factory=dict)  # package -> "present", ...
    download_error: str = ""

    @property
    def missing(self) -> list[str]:
        return sorted(name for name, source in self.sources.items() if source == "missing")


def find_package(root: Path, package: str) -> Path | None:
    """The package's folder or zip inside an NLTK data tree (any category: corpora, ...)."""
    if not root.is_dir():
        return None
    for category in sorted(root.iterdir()):
        if not category.is_dir():
            continue
        for candidate in (category / package, category / f"{package}.zip"):
            if candidate.exists():
                return candidate
    return None


def missing_packages(root: Path, packages: Iterable[str]) -> list[str]:
    """Packages of `packages` that `root` does not contain."""
    return [package for package in packages if find_package(root, package) is None]


def copy_package(source_root: Path, dest_root: Path, package: str) -> bool:
    """Copy one package (folder or zip, and its .xml description) from source to dest."""
    found = find_package(source_root, package)
    if found is None:
        return False
    category = dest_root / found.parent.name
    category.mkdir(parents=True, exist_ok=True)
    if found.is_dir():
        shutil.copytree(found, category / found.name, dirs_exist_ok=True)
    else:
        shutil.copy2(found, category / found.name)
    description = found.parent / f"{package}.xml"
    if description.is_file():
        shutil.copy2(description, category / description.name)
    return True


def download_packages(
    python: Path,
    dest_root: Path,
    packages: list[str],
    *,
    probe_timeout_s: float = DEFAULT_PROBE_TIMEOUT_S,
    download_timeout_s: float = DEFAULT_DOWNLOAD_TIMEOUT_S,
) -> tuple[dict[str, bool], str]:
    """Run NLTK's downloader in the environment; return (package -> ok, error text or '')."""
    dest_root.mkdir(parents=True, exist_ok=True)
    command = [
        str(python),
        "-c",
        _DOWNLOAD_SCRIPT,
        str(dest_root),
        str(probe_timeout_s),
        *packages,
    ]
    with host_environment(network=True) as env:
        return _download(command, packages, env, probe_timeout_s, download_timeout_s)


def _download(
    command: list[str],
    packages: list[str],
    env: dict[str, str],
    probe_timeout_s: float,
    download_timeout_s: float,
) -> tuple[dict[str, bool], str]:
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env
    )
    assert process.stdout is not None
    try:
        first = _read_line(process, probe_timeout_s + 5.0)
        if first is None:
            return {}, f"no answer from NLTK's index within {probe_timeout_s:.0f} s (offline?)"
        probe = json.loads(first)
        if not probe.get("index"):
            return {}, str(probe.get("error", "NLTK's index could not be fetched"))
        rest, _ = process.communicate(timeout=download_timeout_s)
    except subprocess.TimeoutExpired:
        return {}, f"NLTK downloads did not finish within {download_timeout_s:.0f} s"
    except json.JSONDecodeError:
        return {}, "NLTK's downloader printed something unexpected"
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    for line in rest.splitlines():
        if line.startswith("{"):
            result = json.loads(line).get("result", {})
            return {name: bool(result.get(name)) for name in packages}, ""
    return {}, "NLTK's downloader exited without a result"


def _read_line(process: subprocess.Popen[str], timeout_s: float) -> str | None:
    """One line of the process's stdout, or None when none comes before the deadline."""
    assert process.stdout is not None
    deadline = time.monotonic() + timeout_s
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        while time.monotonic() < deadline:
            if selector.select(timeout=max(0.0, deadline - time.monotonic())):
                line = process.stdout.readline()
                return line or None
    return None


def provision(
    python: Path,
    dest_root: Path,
    packages: Iterable[str],
    *,
    local_source: Path | None,
    download: bool,
    probe_timeout_s: float = DEFAULT_PROBE_TIMEOUT_S,
) -> NltkOutcome:
    """Make `dest_root` hold `packages`: keep what is there, copy, then download the rest."""
    outcome = NltkOutcome()
    wanted = list(packages)
    dest_root.mkdir(parents=True, exist_ok=True)
    for package in wanted:
        outcome.sources[package] = "present" if find_package(dest_root, package) else "missing"
    if local_source is not None:
        for package in outcome.missing:
            if copy_package(local_source, dest_root, package):
                outcome.sources[package] = f"copied from {local_source}"
    if download and outcome.missing:
        result, error = download_packages(
            python, dest_root, outcome.missing, probe_timeout_s=probe_timeout_s
        )
        outcome.download_error = error
        for package, ok in result.items():
            if ok and find_package(dest_root, package) is not None:
                outcome.sources[package] = "downloader"
    elif not download and outcome.missing:
        outcome.download_error = "downloads disabled"
    return outcome
