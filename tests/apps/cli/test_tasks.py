"""`passbench tasks list` and `passbench tasks show` on the real benchmark data."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from passbench.apps.cli import main

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(autouse=True)
def data_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, data_dir: Path) -> Path:
    """The shared data folder, a private cache, no downloads."""
    monkeypatch.setenv("PASSBENCH_DATA_DIR", str(data_dir))
    monkeypatch.setenv("PASSBENCH_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("PASSBENCH_OFFLINE", "1")
    return data_dir


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        main(argv)
        code = 0
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_list_json_hard_with_libs(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        ["tasks", "list", "--subset", "hard", "--libs", "pandas", "--format", "json"], capsys
    )
    assert code == 0
    listing = json.loads(out)
    assert (listing["benchmark"], listing["version"], listing["subset"]) == (
        "bigcodebench",
        "v0.1.4",
        "hard",
    )
    assert 0 < listing["count"] == len(listing["tasks"]) < 148
    assert all("pandas" in task["libs"] for task in listing["tasks"])
    assert listing["dataset_sha256"] == (
        "5d5d0bd4f513e4a17bbd1f7ec7c7110b6d60776b12566e09acd10ae8cfcc79f2"
    )


def test_list_libs_must_all_match(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(["tasks", "list", "--libs", "pandas,sklearn", "--format", "json"], capsys)
    both = json.loads(out)["tasks"]
    _, out, _ = run(["tasks", "list", "--libs", "pandas", "--format", "json"], capsys)
    pandas = json.loads(out)["tasks"]
    assert 0 < len(both) < len(pandas)
    assert all({"pandas", "sklearn"} <= set(task["libs"]) for task in both)


def test_list_table(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["tasks", "list", "-b", "humaneval"], capsys)
    assert code == 0
    assert "HumanEval v0.1.10, full subset" in out
    assert "HumanEval/163" in out and "164 of 164 tasks" in out
    code, out, _ = run(["tasks", "list", "-b", "humaneval-openai"], capsys)
    assert code == 0 and "HumanEval (original tests) v1, full subset" in out


def test_show_raw_fields(capsys: pytest.CaptureFixture[str], data_env: Path) -> None:
    raw = {
        row["task_id"]: row
        for row in map(
            json.loads,
            gzip.decompress((data_env / "humaneval/HumanEval.jsonl.gz").read_bytes()).splitlines(),
        )
    }
    openai = ["-b", "humaneval-openai"]
    code, out, _ = run(["tasks", "show", "HumanEval/7", *openai, "--field", "prompt"], capsys)
    assert code == 0 and out == raw["HumanEval/7"]["prompt"]
    _, out, _ = run(["tasks", "show", "HumanEval/7", *openai, "--field", "solution"], capsys)
    assert out == raw["HumanEval/7"]["prompt"] + raw["HumanEval/7"]["canonical_solution"]


def test_show_number_and_split(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["tasks", "show", "13", "--split", "instruct", "--field", "prompt"], capsys)
    assert code == 0 and out.startswith("Download all files from a specific directory")


def test_show_all(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["tasks", "show", "HumanEval/32", "-b", "humanevalplus"], capsys)
    assert code == 0
    assert "find_zero" in out and "100 base, 788 plus" in out and "canonical solution" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["tasks", "list", "-b", "apps"], "'apps' is not one of"),
        (["tasks", "list", "--subset", "tiny"], "unknown subset 'tiny' for bigcodebench"),
        (["tasks", "list", "--version", "v9"], "choose one of: v0.1.4, v0.1.5"),
        (["tasks", "show", "HumanEval/999"], "no task 'HumanEval/999'"),
        (["tasks", "show", "HumanEval/1", "--split", "instruct"], "unknown split 'instruct'"),
    ],
)
def test_bad_input_exits_2(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(argv, capsys)
    assert code == 2
    assert message in err


def test_dataset_path_and_missing_data(
    capsys: pytest.CaptureFixture[str],
    data_env: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    code, out, _ = run(
        [
            "tasks",
            "list",
            "-b",
            "humanevalplus",
            "--dataset-path",
            str(data_env / "humaneval/HumanEvalPlus.jsonl.gz"),
            "--format",
            "json",
        ],
        capsys,
    )
    assert code == 0 and json.loads(out)["dataset_source"].endswith("(file)")
    monkeypatch.delenv("PASSBENCH_DATA_DIR")
    code, _, err = run(["tasks", "list", "-b", "humaneval"], capsys)
    assert code == 1 and "downloads are off" in err
    code, _, _ = run(["tasks", "list", "-b", "humaneval", "--data-dir", str(data_env)], capsys)
    assert code == 0


def test_tasks_carry_their_language(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "160")
    code, out, _ = run(["tasks", "list", "-b", "multipl-e-cpp", "--format", "json"], capsys)
    assert code == 0
    listing = json.loads(out)
    assert listing["language"] == "C++"
    assert {task["language"] for task in listing["tasks"]} == {"C++"}
    code, out, _ = run(["tasks", "list", "-b", "multipl-e-rs", "--subset", "mbpp"], capsys)
    assert code == 0
    header = next(line for line in out.splitlines() if "task" in line and "language" in line)
    assert header.index("task") < header.index("language") < header.index("summary")
    assert "mbpp_3_is_not_prime" in out and " Rust " in out
    code, out, _ = run(["tasks", "list", "-b", "humaneval"], capsys)
    assert " Python " in out
    code, out, _ = run(["tasks", "show", "HumanEval_53_add", "-b", "multipl-e-lua"], capsys)
    assert code == 0 and "Lua" in out
