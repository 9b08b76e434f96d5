"""The HTML report's run-to-run sections, from result files the evaluator really wrote
(HumanEval-style programs executed in the sandbox): flaky samples with their verdict counts,
the flaky rate and the pass@1 bounds (`--runs`), pass@1 per epoch with its mean and interval
(`--epochs`), and the references a ground-truth stability run quarantined."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from tests.analysis.report.stability_runs import RUNS

from passbench.apps.cli import cli
from passbench.core.settings import Paths
from passbench.stages.evaluate import EvaluateSettings, Evaluator

pytestmark = pytest.mark.bwrap  # the `measured` fixture (conftest) executes in the sandbox


class Page(HTMLParser):
    """The rendered sections' text (by section id) and the rows of every table with an id."""

    def __init__(self) -> None:
        super().__init__()
        self.sections: dict[str, str] = {}
        self.tables: dict[str, list[list[str]]] = {}
        self._section: str | None = None
        self._table: str | None = None
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "section" and found.get("id"):
            self._section = str(found["id"])
            self.sections[self._section] = ""
        elif tag == "table" and found.get("id"):
            self._table = str(found["id"])
            self.tables[self._table] = []
        elif tag == "tr" and self._table:
            self.tables[self._table].append([])
        elif tag in ("td", "th") and self._table:
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "section":
            self._section = None
        elif tag == "table":
            self._table = None
        elif tag in ("td", "th") and self._cell is not None and self._table:
            self.tables[self._table][-1].append("".join(self._cell))
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._section:
            self.sections[self._section] += data
        if self._cell is not None:
            self._cell.append(data)


def _report(results: Path, target: Path) -> Page:
    outcome = CliRunner().invoke(
        cli, ["inspect", str(results), "--format", "html", "-o", str(target), "--bootstrap", "200"]
    )
    assert outcome.exit_code == 0, outcome.output
    page = Page()
    page.feed(target.read_text(encoding="utf-8"))
    return page


def test_flaky_section_lists_the_flaky_sample_with_its_counts(measured: dict[str, Any]) -> None:
    page = _report(measured["outcome"].eval_results_path, measured["folder"] / "report.html")
    coin = measured["eval"]["HumanEval/0"][0]
    assert coin["flaky"] is True
    counts = coin["runs"]
    header, *rows = page.tables["flaky-table"]
    assert header == ["task", "sample", *counts]  # pass, fail
    assert rows == [["HumanEval/0", "0", *(str(n) for n in counts.values())]]
    assert sum(counts.values()) == RUNS and 0 < counts["pass"] < RUNS

    text = page.sections["flaky"]
    assert "Flaky samples (12 runs)" in text
    # the scored samples only: HumanEval/1 is quarantined, so 1 flaky sample of 6
    stability = measured["pass_file"]["stability"]
    assert stability["n_samples"] == 6 and stability["flaky_rate"] == pytest.approx(1 / 6)
    assert "16.7%" in text and "1 of 6 samples, 1 tasks" in text
    # pass@1 bounds: HumanEval/0 1/3 (coin failing) or 2/3 (passing), HumanEval/2 1
    assert "66.67% to 83.33%" in text
    assert "pass@k counts the first run" in text


def test_epoch_section_gives_each_epoch_the_mean_and_the_interval(
    measured: dict[str, Any],
) -> None:
    page = _report(measured["outcome"].eval_results_path, measured["folder"] / "report.html")
    epochs = measured["pass_file"]["epochs"]
    coin_first = measured["eval"]["HumanEval/0"][0]["status"] == "pass"
    expected = [(float(coin_first) + 1) / 2, 1.0, 0.5]
    assert epochs["pass@1_per_epoch"] == pytest.approx(expected)
    header, *rows = page.tables["epoch-table"]
    assert header == ["epoch", "pass@1"]
    assert rows == [[str(e + 1), f"{100 * v:.2f}%"] for e, v in enumerate(expected)]
    low, high = epochs["pass@1_ci"]
    text = page.sections["epochs"]
    assert f"pass@1 over 3 epochs{100 * epochs['pass@1_mean']:.2f}%" in text
    assert f"95% CI {100 * low:.2f}% to {100 * high:.2f}% (Student-t)" in text
    assert f"{100 * epochs['pass@1_stderr']:.2f}%" in text


def test_quarantine_note_names_the_unstable_reference(measured: dict[str, Any]) -> None:
    page = _report(measured["outcome"].eval_results_path, measured["folder"] / "report.html")
    unstable = measured["truth"]["unstable_tasks"]
    assert list(unstable) == ["HumanEval/1"]
    header, *rows = page.tables["quarantine-table"]
    assert header == ["task", "reference verdicts over the runs"]
    counts = ", ".join(f"{status} {n}" for status, n in unstable["HumanEval/1"].items())
    assert rows == [["HumanEval/1", counts]]
    text = page.sections["quarantine"]
    assert "Score denominator: 2 tasks: the tasks with samples, less 1 quarantined" in text
    summary = page.sections["summary"]
    assert "references are unstable over a ground-truth stability run): HumanEval/1" in summary
    assert "oracle self-check" not in summary


def test_a_plain_run_has_none_of_these_sections(
    measured: dict[str, Any], data_dir: Path, tmp_path: Path
) -> None:
    """The same samples evaluated once, with a cache no stability run has seen."""
    settings = EvaluateSettings(
        benchmark="humaneval-openai",
        dataset_path=measured["folder"] / "tasks.jsonl",
        workers=2,
        pass_k=(1,),
        check_ground_truth=False,
    )
    paths = Paths(cache_dir=tmp_path / "cache", data_dir=data_dir)
    samples = measured["folder"] / "model--humaneval-openai-complete.jsonl"
    outcome = Evaluator(settings, paths).evaluate_samples(samples, tmp_path / "out")
    page = _report(outcome.eval_results_path, tmp_path / "plain.html")
    assert not {"flaky", "epochs", "quarantine"} & set(page.sections)
    assert "summary" in page.sections and "tasks" in page.sections
