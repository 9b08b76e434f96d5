"""Results of a run whose tasks are in several languages (Aider's polyglot), end to end: the
evaluator records each sample's language, and `inspect` (HTML, Markdown, JSON) and `compare`
(table, Markdown, JSON) show pass@1 per language. Real exercises in the real sandbox: the
reference solutions of Python and Go exercises, and a stub that fails."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from passbench.apps.cli import cli
from passbench.stages.benchmarks import DataSettings, get_benchmark

EXERCISES = {"bowling/python", "zipper/python", "bowling/go"}


def _invoke(*args: str) -> str:
    env = {name: os.environ[name] for name in ("PASSBENCH_DATA_DIR", "PASSBENCH_CACHE_DIR")}
    env["COLUMNS"] = "200"
    result = CliRunner().invoke(cli, list(args), env=env, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.stdout


@pytest.fixture(scope="module")
def runs(data_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path]]:
    """Two evaluated runs of three exercises: A all references (every one passes); B the
    references but for Python's zipper, given its stub (fails)."""
    folder = tmp_path_factory.mktemp("polyglot")
    patch = pytest.MonkeyPatch()
    patch.setenv("PASSBENCH_DATA_DIR", str(data_dir))
    patch.setenv("PASSBENCH_CACHE_DIR", str(folder / "cache"))
    data = DataSettings(data_dir=data_dir, download=False)
    bench = get_benchmark("aider-polyglot")
    tasks = {
        f"{t.metadata['exercise']}/{t.metadata['language']}": t for t in bench.load(data=data).tasks
    }
    paths = []
    for name in ("a", "b"):
        rows = []
        for key in sorted(EXERCISES):
            task = tasks[key]
            code = bench.canonical_code(task)
            if name == "b" and key == "zipper/python":
                code = json.dumps({"files": task.metadata["stubs"]})
            rows.append({"task_id": task.task_id, "solution": code})
        samples = folder / f"model-{name}.jsonl"
        samples.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
        _invoke(
            "evaluate",
            "-b",
            "aider-polyglot",
            "--split",
            "whole",
            "--samples",
            str(samples),
            "--no-gt",
            "--output-dir",
            str(folder / name),
        )
        (found,) = (folder / name).glob("*_eval_results.json")
        paths.append(found)
    yield paths[0], paths[1]
    patch.undo()


@pytest.mark.bwrap
def test_the_evaluator_records_each_samples_language(runs: tuple[Path, Path]) -> None:
    document = json.loads(runs[1].read_text(encoding="utf-8"))
    languages = {
        task_id: [entry["language"] for entry in entries]
        for task_id, entries in document["eval"].items()
    }
    assert sorted(languages.values()) == [["Go"], ["Python"], ["Python"]]


@pytest.mark.bwrap
def test_compare_shows_pass_at_1_per_language_in_every_format(runs: tuple[Path, Path]) -> None:
    a, b = map(str, runs)
    data = json.loads(_invoke("compare", a, b, "--format", "json", "--bootstrap", "200"))
    names = [run["name"] for run in data["runs"]]
    rows: dict[str, Any] = {row["language"]: row["runs"] for row in data["by_language"]}
    assert set(rows) == {"Python", "Go"}
    assert rows["Python"][names[0]] == {"tasks": 2, "pass_at_1": 1.0, "solved": 2}
    assert rows["Python"][names[1]] == {"tasks": 2, "pass_at_1": 0.5, "solved": 1}
    assert rows["Go"][names[1]]["pass_at_1"] == 1.0
    assert data["pass_rates_by_try"] is None  # one try each

    markdown = _invoke("compare", a, b, "--format", "markdown", "--bootstrap", "200")
    section = markdown.split("## By language", 1)[1]
    assert "| Python | 100.0% (2) | 50.0% (2) | -50.0 |" in section
    assert "| Go | 100.0% (1) | 100.0% (1) | +0.0 |" in section

    table = _invoke("compare", a, b, "--bootstrap", "200")
    assert "By language" in table and "50.0% (2)" in table


@pytest.mark.bwrap
def test_inspect_reports_show_a_table_per_language(runs: tuple[Path, Path]) -> None:
    path = runs[1]
    data = json.loads(_invoke("inspect", str(path), "--format", "json"))
    by_language = {row["name"]: row for row in data["by_language"]}
    assert (by_language["Python"]["tasks"], by_language["Python"]["pass_at_1"]) == (2, 0.5)
    assert by_language["Go"]["solved"] == 1
    html_path = path.with_name("report.html")
    _invoke("inspect", str(path), "--format", "html", "--output", str(html_path))
    html = html_path.read_text(encoding="utf-8")
    section = html.split('<section id="by-language">', 1)[1].split("</section>", 1)[0]
    assert "<td>Python</td>" in section and "<td>Go</td>" in section
    assert "pass@1 by language" in section  # the chart
    assert "## By language" in _invoke("inspect", str(path), "--format", "markdown")
    # the runs listed together: by language across both, not one "language" per run
    several = json.loads(_invoke("inspect", str(runs[0]), str(path), "--format", "json"))
    pooled = {row["language"]: row for row in several["languages"]}
    assert (pooled["Python"]["tasks"], pooled["Python"]["passed"]) == (4, 3)
    assert pooled["Go"]["runs"] == 2
