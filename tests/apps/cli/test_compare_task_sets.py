"""`passbench compare` refuses to rank runs of different task versions together, and reads a file
without a task-set identity as unknown (a warning, not a crash)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.analysis.report.result_files import OFFICIAL, OURS

from passbench.apps.cli import main


@pytest.fixture(autouse=True)
def environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, data_dir: Path) -> None:
    monkeypatch.setenv("PASSBENCH_DATA_DIR", str(data_dir))
    monkeypatch.setenv("PASSBENCH_CACHE_DIR", str(tmp_path / "cache"))


def _copy(tmp_path: Path, name: str, **block: object) -> Path:
    """OURS under another model name, its passbench block changed by `block`."""
    target = tmp_path / f"{name}--bigcodebench-hard-complete--0.8-5_eval_results.json"
    document = json.loads(OURS.read_text(encoding="utf-8"))
    document["passbench"].update(block)
    target.write_text(json.dumps(document), encoding="utf-8")
    return target


@pytest.fixture
def compare(capsys: pytest.CaptureFixture[str]) -> Compare:
    def run(*paths: Path, extra: tuple[str, ...] = ()) -> tuple[int, str, str]:
        arguments = ["compare", *map(str, paths), "--bootstrap", "200", "--format", "json"]
        try:
            main([*arguments, *extra])
            code = 0
        except SystemExit as exit_:
            code = int(exit_.code or 0)
        captured = capsys.readouterr()
        return code, captured.out, captured.err

    return run


Compare = Callable[..., tuple[int, str, str]]


def _task_set(version: str, sha: str) -> dict[str, object]:
    return {
        "benchmark": "bigcodebench",
        "version": version,
        "files": [{"name": "BigCodeBench.jsonl.gz", "sha256": sha}],
    }


def test_runs_of_different_versions_are_refused_in_one_line(
    tmp_path: Path, compare: Compare
) -> None:
    a = _copy(tmp_path, "a", task_set=_task_set("v0.1.4", "1" * 64))
    b = _copy(tmp_path, "b", task_set=_task_set("v0.1.3", "2" * 64))
    code, _, err = compare(a, b)
    assert code == 2
    message = [line for line in err.splitlines() if line.strip()]
    assert len(message) == 1
    assert "different task versions" in message[0]
    assert "v0.1.4" in message[0] and "v0.1.3" in message[0]
    # the leaderboard built from the same runs is refused as well
    code, _, err = compare(a, b, extra=("--leaderboard", str(tmp_path / "board.md")))
    assert code == 2 and not (tmp_path / "board.md").exists()


def test_same_version_with_other_bytes_is_refused(tmp_path: Path, compare: Compare) -> None:
    a = _copy(tmp_path, "a", task_set=_task_set("v0.1.4", "1" * 64))
    b = _copy(tmp_path, "b", task_set=_task_set("v0.1.4", "3" * 64))
    code, _, err = compare(a, b)
    assert code == 2 and "sha256 333333333333" in err


def test_a_correction_is_not_ranked_with_the_release_it_corrects(
    tmp_path: Path, compare: Compare
) -> None:
    plus = {
        "benchmark": "bigcodebench-plus",
        "version": "v1.0.2",
        "files": [{"name": "BigCodeBench-Plus-v1.0.2.jsonl.gz", "sha256": "4" * 64}],
    }
    a = _copy(tmp_path, "a", task_set=_task_set("v0.1.4", "1" * 64))
    b = _copy(tmp_path, "b", benchmark="bigcodebench-plus", task_set=plus)
    code, _, err = compare(a, b)
    assert code == 2 and "bigcodebench-plus v1.0.2" in err


def test_same_task_set_compares_and_is_reported(tmp_path: Path, compare: Compare) -> None:
    a = _copy(tmp_path, "a", task_set=_task_set("v0.1.4", "1" * 64))
    b = _copy(tmp_path, "b", task_set=_task_set("v0.1.4", "1" * 64))
    code, out, err = compare(a, b)
    assert code == 0, err
    runs = json.loads(out)["runs"]
    assert [run["task_set"]["version"] for run in runs] == ["v0.1.4", "v0.1.4"]


def test_old_and_official_files_are_unknown_or_derived_never_a_crash(
    tmp_path: Path, compare: Compare
) -> None:
    # OURS predates the field: its benchmark, dataset_version and dataset_sha256 give the key
    old = tmp_path / OURS.name
    shutil.copy(OURS, old)
    derived = _copy(tmp_path, "c", task_set=_task_set("v0.1.4", "9" * 64))
    code, _, err = compare(old, derived)
    assert code == 2 and "different task versions" in err
    # the official evaluator's file records no identity: a warning names it, the comparison runs
    code, out, err = compare(OFFICIAL, old)
    assert code == 0, err
    assert f"warning: {OFFICIAL.name}: task set unknown" in err
    assert json.loads(out)["runs"][0]["task_set"] is None
