"""An evaluation environment's files are checked against the manifest recorded when it was
built: a file added (a .pth that runs code at every start), removed or changed, even with its
mtime put back, stops the evaluation in one line that says how to repair it."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from tests.stages.evalenv.conftest import make_venv

from passbench.apps.cli import cli
from passbench.core.errors import EnvironmentError_
from passbench.core.settings import Paths
from passbench.stages.evalenv.lock import packaged_lock_path, read_lock
from passbench.stages.evalenv.manifest import (
    MANIFEST_FILE,
    check_integrity,
    record_manifest,
    verify_manifest,
)
from passbench.stages.evalenv.metadata import EnvMetadata, write_metadata
from passbench.stages.evaluate import EvaluateSettings, Evaluator


def _env(root: Path) -> Path:
    """A real venv recorded as a complete BigCodeBench environment, with its manifest."""
    make_venv(root)
    write_metadata(
        root,
        EnvMetadata(
            name="bigcodebench",
            lock_file="bigcodebench-py311.txt",
            lock_sha256=read_lock(packaged_lock_path("bigcodebench-py311.txt")).sha256,
            python_version="3.11.7",
            created_at="2026-11-22T16:00:00+00:00",
        ),
    )
    record_manifest(root)
    return root


def _site_packages(root: Path) -> Path:
    return next((root / "lib").glob("python3*/site-packages"))


def test_a_fresh_manifest_verifies_fast_and_full(tmp_path: Path) -> None:
    root = _env(tmp_path / "env")
    fast = verify_manifest(root)
    assert fast.intact and fast.hashed == 0 and fast.files >= 5
    full = verify_manifest(root, full=True)
    assert full.intact and full.hashed == full.files == fast.files


def test_an_added_pth_file_is_caught(tmp_path: Path) -> None:
    root = _env(tmp_path / "env")
    planted = _site_packages(root) / "evil.pth"
    planted.write_text("import os\n")
    relative = planted.relative_to(root).as_posix()
    assert verify_manifest(root).change == f"{relative} was added"
    warnings: list[str] = []
    with pytest.raises(EnvironmentError_) as refused:
        check_integrity("bigcodebench", root, warnings.append)
    message = str(refused.value)
    assert "\n" not in message and relative in message
    assert f"passbench env create bigcodebench --force --path {root}" in message
    planted.unlink()
    assert verify_manifest(root).intact


def test_a_change_hidden_behind_the_old_mtime_is_caught(tmp_path: Path) -> None:
    root = _env(tmp_path / "env")
    target = root / "pyvenv.cfg"
    before = target.stat()
    text = target.read_text()
    target.write_text(text.replace("=", "~", 1))  # same size, different content
    os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))  # mtime put back
    assert target.stat().st_size == before.st_size
    assert verify_manifest(root).change == "pyvenv.cfg has different contents"


def test_a_removed_file_is_caught(tmp_path: Path) -> None:
    root = _env(tmp_path / "env")
    (root / "pyvenv.cfg").unlink()
    assert verify_manifest(root).change == "pyvenv.cfg was removed"


def test_new_times_with_the_same_content_are_accepted_and_remembered(tmp_path: Path) -> None:
    root = _env(tmp_path / "env")
    time.sleep(0.01)
    (root / "pyvenv.cfg").touch()
    first = verify_manifest(root)
    assert first.intact and first.hashed == 1
    assert verify_manifest(root).hashed == 0  # the manifest took the new times


def test_an_environment_without_a_manifest_gets_one_and_says_so(tmp_path: Path) -> None:
    root = _env(tmp_path / "env")
    (root / MANIFEST_FILE).unlink()
    warnings: list[str] = []
    outcome = check_integrity("bigcodebench", root, warnings.append)
    assert outcome.recorded and (root / MANIFEST_FILE).is_file()
    assert len(warnings) == 1 and "had no integrity manifest" in warnings[0]
    check_integrity("bigcodebench", root, warnings.append)
    assert len(warnings) == 1  # said once


def test_env_verify_command(tmp_path: Path) -> None:
    root = _env(tmp_path / "env")
    runner = CliRunner()
    intact = runner.invoke(cli, ["env", "verify", "bigcodebench", "--path", str(root)])
    assert intact.exit_code == 0, intact.output
    assert "intact" in intact.output
    (_site_packages(root) / "sitecustomize.py").write_text("print('hi')\n")
    changed = runner.invoke(cli, ["env", "verify", "bigcodebench", "--path", str(root)])
    assert changed.exit_code != 0
    assert "sitecustomize.py was added" in str(changed.exception)


def test_evaluation_refuses_a_changed_environment_before_running_anything(
    tmp_path: Path, data_dir: Path
) -> None:
    root = _env(tmp_path / "env")
    (_site_packages(root) / "zz.pth").write_text("import os\n")
    settings = EvaluateSettings(
        benchmark="bigcodebench", task_ids=("BigCodeBench/0",), env_dir=root, workers=1
    )
    evaluator = Evaluator(settings, Paths(cache_dir=tmp_path / "cache", data_dir=data_dir))
    with pytest.raises(EnvironmentError_, match=r"zz\.pth was added"):
        evaluator.run_ground_truth(tmp_path / "out")
    assert not (tmp_path / "out" / "ground_truth.json").exists()


def test_the_manifest_is_json_with_a_schema_version(tmp_path: Path) -> None:
    root = _env(tmp_path / "env")
    document = json.loads((root / MANIFEST_FILE).read_text())
    assert document["schema_version"] == 1
    names = [row[0] for row in document["files"]]
    assert "pyvenv.cfg" in names and "passbench-env.json" in names
    assert all(len(row[4]) == 64 for row in document["files"] if row[0] == "pyvenv.cfg")
