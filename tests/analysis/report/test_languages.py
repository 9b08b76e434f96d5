"""Several runs by language: the run list's language column and the per-language breakdown."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.analysis.report.conftest import OURS
from tests.analysis.report.multiple_runs import write_js, write_lua

from passbench.analysis.report.languages import language_breakdown, run_rows, several_languages
from passbench.stages.benchmarks import benchmark_language
from passbench.stages.results import load_results


def test_language_of_each_benchmark() -> None:
    assert benchmark_language("multipl-e-cpp") == "C++"
    assert benchmark_language("multipl-e-rs") == "Rust"
    assert benchmark_language("bigcodebench") == benchmark_language("mbppplus") == "Python"
    assert benchmark_language(None) == "Python"  # official files are Python's


def test_breakdown_counts_pass_at_1_and_multiple_statuses(tmp_path: Path) -> None:
    runs = [load_results(OURS), load_results(write_js(tmp_path)), load_results(write_lua(tmp_path))]
    assert several_languages(runs) and not several_languages(runs[:1])
    rows = run_rows(runs)
    assert [(row.benchmark, row.language) for row in rows] == [
        ("bigcodebench", "Python"),
        ("multipl-e-js", "JavaScript"),
        ("multipl-e-lua", "Lua"),
    ]
    python, js, lua = language_breakdown(runs)
    assert python.statuses == {}  # MultiPL-E's statuses only for MultiPL-E
    assert (js.tasks, js.samples, js.passed, js.solved) == (2, 4, 3, 2)
    assert js.pass_at_1 == pytest.approx(0.75)
    assert js.statuses == {"OK": 3, "SyntaxError": 1, "Exception": 0, "Timeout": 0}
    assert lua.pass_at_1 == pytest.approx(1 / 3)
    assert lua.statuses == {"OK": 1, "SyntaxError": 0, "Exception": 1, "Timeout": 1}


def test_runs_of_one_language_are_pooled(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first, second = write_js(tmp_path / "a"), write_js(tmp_path / "b")
    (score,) = language_breakdown([load_results(first), load_results(second)])
    assert (score.runs, score.tasks, score.samples) == (2, 4, 8)
    assert score.statuses["OK"] == 6
