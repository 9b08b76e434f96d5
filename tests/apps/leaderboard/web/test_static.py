"""`passbench leaderboard build`: results.json in the public board's schema (identical to the
public file for what was imported from it), a readable Parquet matrix of the runs' per-task
pass rates, and an HTML page holding every row."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path

import pytest
from tests.apps.leaderboard.web.conftest import OFFICIAL, OURS, SHARED_MODEL, leaderboard_file

from passbench.apps.cli import main
from passbench.apps.leaderboard.store.database import Store, open_store
from passbench.apps.leaderboard.store.official_leaderboard import import_official
from passbench.apps.leaderboard.web import board as boards
from passbench.apps.leaderboard.web.static import build
from passbench.stages.results import load_results, task_order


def _scored(document: dict[str, dict]) -> dict[str, dict]:  # type: ignore[type-arg]
    """The public file's models that have a score (a model with none has no row to rebuild)."""
    return {
        name: entry
        for name, entry in document.items()
        if any(score is not None for score in entry["pass@1"].values())
    }


def test_results_json_is_the_public_file_for_imported_scores(
    data_dir: Path, tmp_path: Path
) -> None:
    store = open_store(f"sqlite:///{tmp_path / 'store.db'}")
    try:
        for subset in ("full", "hard"):
            import_official(store, leaderboard_file(data_dir, subset))
        with store.transaction() as session:
            build(session, tmp_path / "site")
    finally:
        store.close()
    for subset, name in (("full", "results.json"), ("hard", "results-hard.json")):
        public = _scored(json.loads(leaderboard_file(data_dir, subset).read_text()))
        ours = json.loads((tmp_path / "site" / name).read_text())
        assert len(public) > 100
        assert ours == public  # same models, fields, values (percent), nulls
        assert list(ours) == list(public)  # and the same order


def test_the_build_holds_the_runs_and_every_row(
    filled: tuple[Store, dict[str, int]], tmp_path: Path
) -> None:
    store, runs = filled
    with store.transaction() as session:
        built = build(session, tmp_path)
        hard = boards.board(session, boards.View("bigcodebench", "hard", "complete"))
    assert built.views == 4

    # results.json: our verified run is a model of its own; the published score wins over a
    # run imported from files
    results = json.loads((tmp_path / "results-hard.json").read_text())
    assert results["demo-model-v2"]["pass@1"] == {"instruct": None, "complete": 55.7}
    assert results[SHARED_MODEL]["pass@1"]["complete"] == 12.8

    # the Parquet matrix: a row per task, a column per run, pass rate c / n
    import pyarrow.parquet as pq

    table = pq.read_table(tmp_path / "matrix-bigcodebench-hard-complete.parquet")
    assert table.column_names == ["task_id", "demo-model-v2", SHARED_MODEL]
    frame = table.to_pydict()
    ours, official = load_results(OURS).counts(), load_results(OFFICIAL).counts()
    assert frame["task_id"] == sorted(set(ours) | set(official), key=task_order)
    for index, task in enumerate(frame["task_id"]):
        for column, counts in (("demo-model-v2", ours), (SHARED_MODEL, official)):
            expected = counts[task][1] / counts[task][0] if task in counts else None
            assert frame[column][index] == pytest.approx(expected)
    assert None in frame[SHARED_MODEL] and None in frame["demo-model-v2"]  # 13 shared tasks
    assert json.loads(table.schema.metadata[b"runs"]) == {
        "demo-model-v2": runs["demo-model-v2"],
        SHARED_MODEL: runs[SHARED_MODEL],
    }

    # the page: every row of the view, in rank order, with its badge
    class Rows(HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.rows: list[tuple[str | None, str | None]] = []
            self.view: str | None = None

        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            found = dict(attrs)
            if tag == "table":
                self.view = found.get("data-view")
            if tag == "tr" and "data-model" in found:
                self.rows.append((self.view, found["data-model"]))

    page = Rows()
    page.feed((tmp_path / "index.html").read_text(encoding="utf-8"))
    in_view = [model for view, model in page.rows if view == "bigcodebench-hard-complete"]
    assert in_view == [row.model for row in hard]
    assert len(page.rows) == built.rows
    board_json = json.loads((tmp_path / "board.json").read_text())
    assert [v["key"] for v in board_json["views"]][2] == "bigcodebench-hard-complete"
    assert board_json["views"][2]["rows"][0]["model"] == hard[0].model


def test_the_command_builds_from_the_store_it_is_given(
    filled: tuple[Store, dict[str, int]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store, _ = filled
    main(["leaderboard", "build", "--db", store.url, "--output", str(tmp_path / "out")])
    assert (tmp_path / "out" / "results.json").is_file()
    assert "4 views" in capsys.readouterr().err
