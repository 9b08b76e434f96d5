"""Comparing runs: paired difference, McNemar's exact test, won/lost, leaderboards."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from scipy import stats

from passbench.analysis.report.analysis import Options, inspect_run
from passbench.analysis.report.compare import compare_all, compare_pair, unique_names
from passbench.analysis.report.compare_output import compare_json, compare_markdown, pair_dict
from passbench.analysis.report.leaderboard import (
    build_leaderboard,
    leaderboard_csv,
    leaderboard_json,
    leaderboard_markdown,
)
from passbench.stages.results import RunResults, SampleResult
from passbench.stages.results.taskinfo import TaskCatalog

FAST = Options(resamples=1000, engine="python")


def run(name: str, verdicts: dict[str, str]) -> RunResults:
    """A run from "task -> verdict string", e.g. {"T/1": "PPF"}: P pass, F fail."""
    tasks = {
        task_id: tuple(
            SampleResult(task_id, i, "pass" if v == "P" else "fail", "", {})
            for i, v in enumerate(text)
        )
        for task_id, text in verdicts.items()
    }
    return RunResults(path=Path(f"{name}_eval_results.json"), date=None, tasks=tasks)


def test_single_sample_runs(official_run: RunResults, our_run: RunResults) -> None:
    a = run("a", {f"T/{i}": "P" if i < 30 else "F" for i in range(60)})
    # B solves 10 of A's failures and loses 2 of A's passes: discordant 2 vs 10
    b_verdicts = {f"T/{i}": "P" if i < 30 else "F" for i in range(60)}
    for i in range(30, 40):
        b_verdicts[f"T/{i}"] = "P"
    b_verdicts["T/0"] = b_verdicts["T/1"] = "F"
    pair = compare_pair(a, run("b", b_verdicts), FAST)
    assert pair.tasks_both == 60
    assert (pair.solved_only_a, pair.solved_only_b) == (2, 10)
    assert (pair.won_a, pair.won_b, pair.tied) == (2, 10, 48)
    assert pair.pass_at_1_a == pytest.approx(0.5) and pair.pass_at_1_b == pytest.approx(38 / 60)
    assert pair.diff == pytest.approx(8 / 60)
    assert pair.mcnemar_p == pytest.approx(stats.binomtest(2, 12, 0.5).pvalue)
    assert pair.diff_ci.low <= pair.diff <= pair.diff_ci.high
    assert pair.solved_both + pair.solved_only_a + pair.solved_only_b + pair.solved_neither == 60


def test_a_clear_difference_is_called_distinguishable() -> None:
    a = run("a", {f"T/{i}": "F" for i in range(100)})
    b = run("b", {f"T/{i}": "P" if i < 40 else "F" for i in range(100)})
    pair = compare_pair(a, b, FAST)
    assert pair.distinguishable
    assert pair.diff_ci.low > 0
    assert pair.verdict.startswith("b beats a by 40.0 points: distinguishable from noise")


def test_a_small_difference_is_called_noise() -> None:
    a = run("a", {f"T/{i}": "P" if i % 2 else "F" for i in range(100)})
    b_verdicts = {f"T/{i}": "P" if i % 2 else "F" for i in range(100)}
    b_verdicts["T/0"] = "P"
    pair = compare_pair(a, run("b", b_verdicts), FAST)
    assert not pair.distinguishable
    assert pair.diff_ci.low <= 0 <= pair.diff_ci.high
    assert pair.mcnemar_p == 1.0
    assert pair.verdict.startswith("No distinguishable difference")


def test_identical_runs() -> None:
    a = run("a", {"T/1": "P", "T/2": "F"})
    pair = compare_pair(a, run("b", {"T/1": "P", "T/2": "F"}), FAST)
    assert pair.diff == 0 and pair.mcnemar_p == 1.0 and pair.verdict.startswith("Identical")


def test_different_sample_counts_and_task_sets() -> None:
    a = run("a", {"T/1": "PPFF", "T/2": "PFFF", "T/3": "PPPF", "T/9": "P"})
    b = run("b", {"T/1": "P", "T/2": "F", "T/3": "F", "T/4": "P"})
    pair = compare_pair(a, b, FAST, rule="majority")
    assert pair.tasks_both == 3 and pair.only_a == ("T/9",) and pair.only_b == ("T/4",)
    assert pair.pass_at_1_a == pytest.approx((0.5 + 0.25 + 0.75) / 3)
    assert pair.pass_at_1_b == pytest.approx(1 / 3)
    # majority: A solves only T/3 (2/4 is not more than half); B solves only T/1
    assert (pair.solved_only_a, pair.solved_only_b, pair.solved_both) == (1, 1, 0)
    any_rule = compare_pair(a, b, FAST, rule="any")
    # any: A solves all three; B solves T/1
    assert (any_rule.solved_both, any_rule.solved_only_a, any_rule.solved_only_b) == (1, 2, 0)
    with pytest.raises(ValueError):
        compare_pair(a, b, FAST, rule="most")


def test_no_shared_tasks() -> None:
    pair = compare_pair(run("a", {"T/1": "P"}), run("b", {"T/2": "P"}), FAST)
    assert pair.tasks_both == 0 and "share no tasks" in pair.verdict and not pair.distinguishable


def test_pair_json_has_the_documented_fields(official_run: RunResults, our_run: RunResults) -> None:
    (pair,) = compare_all([official_run, our_run], FAST)
    data = pair_dict(pair)
    for key in (
        "pass_at_1_a",
        "pass_at_1_b",
        "diff",
        "diff_ci95",
        "mcnemar_p",
        "tasks_both",
        "only_a",
        "only_b",
    ):
        assert key in data
    assert data["tasks_both"] == 13 and data["only_a"] == 1 and data["only_b"] == 1
    assert data["only_a_task_ids"] == ["BigCodeBench/108"]
    assert data["only_b_task_ids"] == ["BigCodeBench/120"]
    assert len(data["diff_ci95"]) == 2
    document = json.loads(compare_json([{"name": "x"}], [pair]))
    assert document["pairs"][0]["a"] == "demo-model"
    assert "## demo-model (A) vs demo-model-v2 (B)" in compare_markdown([pair])


def test_unique_names_when_models_clash(official_run: RunResults) -> None:
    names = unique_names([official_run, official_run])
    assert len(set(names)) == 2


def test_leaderboard_ranks_and_marks_ties(official_run: RunResults, our_run: RunResults) -> None:
    strong = run("strong", {f"BigCodeBench/{i}": "P" for i in range(13, 200)})
    runs = [official_run, our_run, strong]
    pairs = compare_all(runs, FAST)
    names = unique_names(runs)
    summaries = [
        (n, inspect_run(r, TaskCatalog(), FAST).summary) for n, r in zip(names, runs, strict=True)
    ]
    rows = build_leaderboard(summaries, pairs)
    assert [row.name for row in rows] == ["strong", "demo-model-v2", "demo-model"]
    assert [row.rank for row in rows] == [1, 2, 3]
    assert rows[-1].separable_from_next is None
    assert rows[1].separable_from_next is False  # 14 tasks cannot separate 56% from 43%

    table = list(csv.DictReader(io.StringIO(leaderboard_csv(rows))))
    assert [line["name"] for line in table] == ["strong", "demo-model-v2", "demo-model"]
    assert float(table[2]["pass@1"]) == pytest.approx(6 / 14)
    assert table[2]["pass@5"] == ""  # one sample a task: no pass@5
    document = json.loads(leaderboard_json(rows, {"seed": 0}))
    assert document["rows"][1]["isolation"] == "bubblewrap"
    markdown = leaderboard_markdown(rows, 0.95)
    assert "| 2 ≈ | demo-model-v2 |" in markdown
