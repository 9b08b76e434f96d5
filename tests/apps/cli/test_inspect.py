"""`passbench inspect` end to end on the fixture result files (tests/analysis/report/data)."""

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
    result = CliRunner().invoke(cli, ["inspect", *arguments, "--bootstrap", "300"])
    assert result.exit_code == 0, result.output
    return result


def test_terminal_summary() -> None:
    output = invoke(str(OFFICIAL)).output
    assert "42.9%" in output  # pass@1 = 6/14
    assert "exact (Clopper-Pearson)" in output
    assert "Failures by category" in output and "exception:KeyError" in output
    assert "By domain" in output and "visualization" in output
    assert "8 failing tasks" in output


def test_json_recomputes_pass_at_k() -> None:
    data = json.loads(invoke(str(OURS), "--format", "json", "--pass-k", "1,3,5").output)
    summary = data["summary"]
    assert set(summary["pass_at_k"]) == {"pass@1", "pass@3", "pass@5"}
    assert summary["pass_at_k"]["pass@1"] == pytest.approx(summary["stored_pass_at_k"]["pass@1"])
    assert summary["ci"]["pass@1"]["method"] == "bootstrap-percentile"
    assert summary["ci"]["pass@1"]["seed"] == 0 and summary["ci"]["pass@1"]["resamples"] == 300
    assert summary["isolation"] == "bubblewrap"
    assert len(data["tasks"]) == 14
    assert {g["label"] for g in data["failures"]} >= {"killed", "tampered", "out_of_memory"}


def test_the_same_seed_gives_the_same_intervals() -> None:
    first = json.loads(invoke(str(OURS), "--format", "json").output)["summary"]["ci"]
    again = json.loads(invoke(str(OURS), "--format", "json").output)["summary"]["ci"]
    other = json.loads(invoke(str(OURS), "--format", "json", "--seed", "5").output)["summary"]["ci"]
    assert first == again
    assert first != other


def test_filters_narrow_the_task_list() -> None:
    rows = list(
        csv.DictReader(
            io.StringIO(invoke(str(OFFICIAL), "--format", "csv", "--category", "timeout").output)
        )
    )
    assert [row["task_id"] for row in rows] == ["BigCodeBench/17", "BigCodeBench/101"]
    rows = list(
        csv.DictReader(
            io.StringIO(
                invoke(
                    str(OFFICIAL), "--format", "csv", "--lib", "seaborn", "--status", "fail"
                ).output
            )
        )
    )
    assert [row["task_id"] for row in rows] == [
        "BigCodeBench/37",
        "BigCodeBench/99",
        "BigCodeBench/101",
    ]
    assert rows[0]["main_label"] == "exception:KeyError"


def test_task_detail_in_every_format() -> None:
    text = invoke(str(OURS), "--task", "BigCodeBench/37").output
    assert "sample 0: fail (exception:KeyError)" in text and "canonical solution" in text
    detail = json.loads(invoke(str(OURS), "--task", "BigCodeBench/37", "--format", "json").output)
    assert [s["status"] for s in detail["samples"]] == ["fail", "fail", "pass", "fail", "fail"]
    assert "class TestCases" in detail["test"]
    markdown = invoke(str(OURS), "--task", "BigCodeBench/37", "--format", "markdown").output
    assert markdown.startswith("# BigCodeBench/37")


def test_markdown_and_html_outputs(tmp_path: Path) -> None:
    markdown = invoke(str(OFFICIAL), "--format", "markdown").output
    assert markdown.startswith("# demo-model") and "## Failures by category" in markdown
    target = tmp_path / "report.html"
    invoke(str(OURS), "--format", "html", "--output", str(target))
    html = target.read_text(encoding="utf-8")
    assert html.startswith("<!doctype html>") and 'id="task-table"' in html


def test_html_defaults_to_a_file_beside_the_results(tmp_path: Path) -> None:
    copy = tmp_path / OFFICIAL.name
    copy.write_bytes(OFFICIAL.read_bytes())
    output = invoke(str(copy), "--format", "html").output
    expected = (
        tmp_path
        / "demo-model--bigcodebench-hard-complete--official-0-1-sanitized-calibrated_report.html"
    )
    assert expected.is_file() and str(expected) in output


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["missing_eval_results.json"], "file not found"),
        ([str(OFFICIAL), "--task", "BigCodeBench/9999"], "no task 'BigCodeBench/9999'"),
        ([str(OFFICIAL), "--pass-k", "1,x"], "--pass-k"),
        ([str(OFFICIAL), "--pass-k", "0"], "expected positive integers"),
        ([str(OFFICIAL), "--task", "BigCodeBench/13", "--format", "csv"], "--task shows one task"),
    ],
)
def test_bad_input_exits_with_code_2(
    arguments: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as caught:
        main(["inspect", *arguments])
    assert caught.value.code == 2
    assert message in capsys.readouterr().err


def test_several_results_are_listed_with_their_language_and_broken_down(tmp_path: Path) -> None:
    from tests.analysis.report.multiple_runs import write_js, write_lua

    js, lua = write_js(tmp_path), write_lua(tmp_path)
    table = invoke(str(OURS), str(js), str(lua)).output
    assert "By language" in table
    for cell in ("JavaScript", "Lua", "Python", "multipl-e-js", "SyntaxError", "75.0%"):
        assert cell in table
    data = json.loads(invoke(str(OURS), str(js), str(lua), "--format", "json").output)
    assert [run["language"] for run in data["runs"]] == ["Python", "JavaScript", "Lua"]
    by_language = {row["language"]: row for row in data["languages"]}
    assert by_language["Lua"]["statuses"] == {
        "OK": 1,
        "SyntaxError": 0,
        "Exception": 1,
        "Timeout": 1,
    }
    assert by_language["Python"]["statuses"] == {}
    markdown = invoke(str(js), str(lua), "--format", "markdown").output
    assert "| JavaScript | multipl-e-js | 1 | 2 | 4 | 75.0% | 2 | 3 | 1 | 0 | 0 |" in markdown
    # one language: the runs, no breakdown
    single = invoke(str(js), str(js)).output
    assert "JavaScript" in single and "By language" not in single


def test_one_run_names_its_language(tmp_path: Path) -> None:
    from tests.analysis.report.multiple_runs import write_lua

    output = invoke(str(write_lua(tmp_path))).output
    assert "language" in output and "Lua" in output
    assert "Python" in invoke(str(OFFICIAL)).output


def test_several_results_refuse_single_run_options(tmp_path: Path) -> None:
    from tests.analysis.report.multiple_runs import write_js

    js = write_js(tmp_path)
    result = CliRunner().invoke(cli, ["inspect", str(OURS), str(js), "--task", "HumanEval_0_a"])
    assert result.exit_code != 0
    assert "read one RESULTS file" in str(result.exception)
