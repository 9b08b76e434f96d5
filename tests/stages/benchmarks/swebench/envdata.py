"""Shared by the environment tests: the real SWE-bench rows and exports from ../shared, a dataset
row type with just what the environment code reads, and a wheel made by hand for offline builds."""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import shutil
import subprocess
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

VERIFIED = "swebench-verified.jsonl.gz"
LITE = "swebench-lite.jsonl.gz"
LITE_DEV = "swebench-lite-dev.jsonl.gz"
EXPORTS = "swebench-verified-environments.jsonl.gz"


@dataclass(frozen=True)
class Row:
    """The fields of a dataset row that environments read (instances.Instance has them too)."""

    instance_id: str
    repo: str
    version: str
    environment_setup_commit: str
    fail_to_pass: tuple[str, ...]
    pass_to_pass: tuple[str, ...]
    eval_script: str = ""


def raw_rows(path: Path) -> list[dict[str, Any]]:
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


def read_rows(path: Path) -> list[Row]:
    return [
        Row(
            raw["instance_id"],
            raw["repo"],
            raw["version"],
            raw["environment_setup_commit"],
            tuple(json.loads(raw["FAIL_TO_PASS"])),
            tuple(json.loads(raw["PASS_TO_PASS"])),
            raw["eval_script"],
        )
        for raw in raw_rows(path)
    ]


def make_wheel(folder: Path, name: str, version: str, module_source: str) -> Path:
    """A pure-Python wheel of one module `name`, written by hand (no build tools needed)."""
    dist_info = f"{name}-{version}.dist-info"
    files = {
        f"{name}.py": module_source.encode(),
        f"{dist_info}/METADATA": (
            f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
        ).encode(),
        f"{dist_info}/WHEEL": (
            b"Wheel-Version: 1.0\nGenerator: hand\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        ),
    }
    record_lines = []
    for path, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record_lines.append(f"{path},sha256={digest},{len(data)}")
    record_lines.append(f"{dist_info}/RECORD,,")
    files[f"{dist_info}/RECORD"] = ("\n".join(record_lines) + "\n").encode()
    wheel = folder / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for path, data in files.items():
            archive.writestr(path, data)
    return wheel


def bwrap_works() -> bool:
    if shutil.which("bwrap") is None:
        return False
    probe = ["bwrap", "--unshare-all", "--ro-bind", "/", "/", "--dev", "/dev", "true"]
    return subprocess.run(probe, capture_output=True, check=False).returncode == 0
