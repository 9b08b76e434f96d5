"""`passbench compare` end to end on the fixture result files (tests/analysis/report/data)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from tests.analysis.report.result_files import OFFICIAL, OURS

from passbench.apps.cli import cli, main


@pytest.fixture(autouse=True)
def environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, data_dir: Path) -> None:
    monkeypatch.setenv("PASSBENCH_DATA_DIR", str(data_dir))
    monkeypatch.setenv("PASSBENCH_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("COLUMNS", "160")


def invoke(*arguments: str) -> Result:
    result = CliRunner().invoke(cli, ["compare", *arguments, "--bootstrap", "500"])
    assert result.exit_code == 0, result.output
    return result


def test_terminal_comparison_says_whether_it_is_noise() -> None:
    output = invoke(str(OFFICIAL), str(OURS)).stdout
    assert "demo-model (A) vs demo-model-v2 (B)" in output
    assert "McNemar exact p" in output
    assert "No distinguishable difference" in output or "Borderline" in output


def test_json_per_pair_fields() -> None:
    data = json.loads(invoke(str(OFFICIAL), str(OURS), "--format", "json").stdout)
    (pair,) = data["pairs"]
    assert pair["tasks_both"] == 13 and pair["only_a"] == 1 and pair["only_b"] == 1
    rates_a = {t["task_id"]: t["rate_a"] for t in pair["tasks"]}
    rates_b = {t["task_id"]: t["rate_b"] for t in pair["tasks"]}
    assert pair["pass_at_1_a"] == pytest.approx(sum(rates_a.values()) / 13)
    assert pair["pass_at_1_b"] == pytest.approx(sum(rates_b.values()) / 13)
    assert pair["diff"] == pytest.approx(pair["pass_at_1_b"] - pair["pass_at_1_a"])
    low, high = pair["diff_ci95"]
    assert low <= pair["diff"] <= high
    assert 0 < pair["mcnemar_p"] <= 1
    assert [run["name"] for run in data["runs"]] == ["demo-model", "demo-model-v2"]


def test_three_runs_give_three_pairs() -> None:
    data = json.loads(invoke(str(OFFICIAL), str(OURS), str(OFFICIAL), "--format", "json").stdout)
    assert len(data["pairs"]) == 3
    assert len({run["name"] for run in data["runs"]}) == 3  # clashing names made unique


def test_leaderboard_file_and_formats(tmp_path: Path) -> None:
    board = tmp_path / "board.csv"
    invoke(str(OFFICIAL), str(OURS), "--leaderboard", str(board))
    rows = list(csv.DictReader(io.StringIO(board.read_text(encoding="utf-8"))))
    assert [row["name"] for row in rows] == ["demo-model-v2", "demo-model"]
    assert rows[0]["rank"] == "1" and rows[0]["isolation"] == "bubblewrap"
    markdown = invoke(str(OFFICIAL), str(OURS), "--format", "leaderboard-md").stdout
    assert markdown.startswith("| rank | model |")
    document = json.loads(invoke(str(OURS), "--format", "leaderboard-json").stdout)
    assert document["rows"][0]["name"] == "demo-model-v2"


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ([str(OFFICIAL)], "at least two result files"),
        ([str(OFFICIAL), str(OURS), "--leaderboard", "board.txt"], ".md, .csv or .json"),
        ([str(OFFICIAL), "nowhere_eval_results.json"], "file not found"),
    ],
)
def test_bad_input_exits_with_code_2(
    arguments: list[str],
    message: str,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as caught:
        main(["compare", *arguments])
    assert caught.value.code == 2
    assert message in capsys.readouterr().err


def test_runs_are_listed_with_their_language(tmp_path: Path) -> None:
    from tests.analysis.report.multiple_runs import write_js, write_lua

    js, lua = write_js(tmp_path), write_lua(tmp_path)
    markdown = invoke(str(OURS), str(js), str(lua), "--format", "leaderboard-md").stdout
    assert markdown.startswith("| rank | model | language |")
    languages = {line.split(" | ")[2] for line in markdown.splitlines()[2:] if "|" in line}
    assert languages == {"Python", "JavaScript", "Lua"}
    board = tmp_path / "board.csv"
    invoke(str(OURS), str(js), "--leaderboard", str(board))
    rows = csv.DictReader(io.StringIO(board.read_text(encoding="utf-8")))
    assert {row["benchmark"]: row["language"] for row in rows} == {
        "bigcodebench": "Python",
        "multipl-e-js": "JavaScript",
    }
    document = json.loads(invoke(str(OURS), str(lua), "--format", "json").stdout)
    assert [run["language"] for run in document["runs"]] == ["Python", "Lua"]
