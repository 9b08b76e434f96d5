"""`compare` and `inspect` beside pass@k: pass@1 after each try of multi-turn runs (compared only
between runs of the same number of tries) and the per-language rows of a one-language run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from passbench.analysis.report.side_by_side import by_language, tries_comparison
from passbench.apps.cli import cli
from passbench.stages.results import load_results
from passbench.stages.results.write import eval_results_document


def _run(folder: Path, stem: str, passed: list[bool], rates: dict[str, float]) -> Path:
    """A multipl-e-js run of one sample per task, with its pass@k file as `run --tries` leaves
    it (pass@1, then pass_rate_1..N, then the rest)."""
    entries = [
        {
            "task_id": f"HumanEval_{i}_f",
            "solution": "",
            "status": "pass" if ok else "fail",
            "details": {} if ok else {"ALL": "boom"},
            "sample_index": 0,
            "category": None if ok else "assertion_failed",
        }
        for i, ok in enumerate(passed)
    ]
    meta = {"benchmark": "multipl-e-js", "split": "complete"}
    path = folder / f"{stem}_eval_results.json"
    path.write_text(json.dumps(eval_results_document(entries, meta)), encoding="utf-8")
    scores = {"pass@1": sum(passed) / len(passed), **rates, "model": stem}
    (folder / f"{stem}_pass_at_k.json").write_text(json.dumps(scores), encoding="utf-8")
    return path


def _invoke(*args: str) -> str:
    result = CliRunner().invoke(cli, [*args], env={"COLUMNS": "200"}, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.stdout


def test_pass_rates_after_each_try_are_read_in_order(tmp_path: Path) -> None:
    three = _run(
        tmp_path,
        "three",
        [True, True, False],
        {"pass_rate_1": 1 / 3, "pass_rate_2": 0.5, "pass_rate_3": 2 / 3},
    )
    one = _run(tmp_path, "one", [True, False, False], {"pass_rate_1": 1 / 3})
    assert load_results(three).try_pass_rates == {1: 1 / 3, 2: 0.5, 3: 2 / 3}
    # a benchmark's own pass_rate_1 (Aider's summary) alone is not a multi-turn run
    assert load_results(one).try_pass_rates == {}
    gap = _run(tmp_path, "gap", [True], {"pass_rate_1": 0.5, "pass_rate_3": 1.0})
    assert load_results(gap).try_pass_rates == {}  # no pass_rate_2: not a run of tries


def test_compare_sets_the_tries_side_by_side_for_the_same_number_of_tries(
    tmp_path: Path,
) -> None:
    a = _run(tmp_path, "a", [True, False, False, False], {"pass_rate_1": 0.25, "pass_rate_2": 0.5})
    b = _run(tmp_path, "b", [True, True, True, False], {"pass_rate_1": 0.5, "pass_rate_2": 0.75})
    data = json.loads(_invoke("compare", str(a), str(b), "--format", "json", "--bootstrap", "200"))
    assert data["pass_rates_by_try"] == {
        "tries": 2,
        "runs": {
            "a": {"pass_rate_1": 0.25, "pass_rate_2": 0.5},
            "b": {"pass_rate_1": 0.5, "pass_rate_2": 0.75},
        },
        "note": "",
    }
    assert data["by_language"] == []  # both runs in one language
    markdown = _invoke("compare", str(a), str(b), "--format", "markdown", "--bootstrap", "200")
    section = markdown.split("## Pass rate after each try", 1)[1]
    assert "| pass_rate_1 | 25.0% | 50.0% | +25.0 |" in section
    assert "| pass_rate_2 | 50.0% | 75.0% | +25.0 |" in section
    table = _invoke("compare", str(a), str(b), "--bootstrap", "200")
    assert "Pass rate after each try" in table and "pass_rate_2" in table


def test_compare_refuses_to_set_different_numbers_of_tries_side_by_side(tmp_path: Path) -> None:
    a = _run(tmp_path, "a", [True, False], {"pass_rate_1": 0.5, "pass_rate_2": 0.5})
    b = _run(
        tmp_path, "b", [True, True], {"pass_rate_1": 0.5, "pass_rate_2": 1.0, "pass_rate_3": 1.0}
    )
    plain = _run(tmp_path, "plain", [True, True], {})
    comparison = tries_comparison(["a", "b"], [load_results(a), load_results(b)])
    assert comparison is not None and comparison.tries == 0 and not comparison.rates
    assert comparison.note.endswith("(a 2, b 3)")
    mixed = tries_comparison(["a", "plain"], [load_results(a), load_results(plain)])
    assert mixed is not None and mixed.note.endswith("(a 2, plain 1)")
    assert tries_comparison(["plain"], [load_results(plain)]) is None
    markdown = _invoke("compare", str(a), str(b), "--format", "markdown", "--bootstrap", "200")
    section = markdown.split("## Pass rate after each try", 1)[1]
    assert "not compared: the runs made different tries (a 2, b 3)" in section
    assert "| pass_rate_" not in section


def test_inspect_shows_the_pass_rate_after_each_try(tmp_path: Path) -> None:
    path = _run(tmp_path, "m", [True, True, False], {"pass_rate_1": 1 / 3, "pass_rate_2": 2 / 3})
    data = json.loads(_invoke("inspect", str(path), "--format", "json"))
    assert data["summary"]["pass_rates_by_try"] == {
        "pass_rate_1": pytest.approx(1 / 3),
        "pass_rate_2": pytest.approx(2 / 3),
    }
    assert "pass_rate_2" in _invoke("inspect", str(path))
    markdown = _invoke("inspect", str(path), "--format", "markdown")
    assert "| pass_rate_2 | 66.7% (pass@1 after try 2) |" in markdown
    report = tmp_path / "report.html"
    _invoke("inspect", str(path), "--format", "html", "--output", str(report))
    assert "<td>pass_rate_2</td><td>66.7% (pass@1 after try 2)</td>" in report.read_text()


def test_a_run_in_one_language_has_no_language_rows(tmp_path: Path) -> None:
    run = load_results(_run(tmp_path, "m", [True, False], {}))
    assert by_language(["m"], [run]) == ()
