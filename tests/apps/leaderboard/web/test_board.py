"""The board's rows from the store: scores from verdicts with their intervals, published
scores marked reported, rank bands from overlapping intervals, hidden runs left out, and the
filters and sort a URL describes."""

from __future__ import annotations

import datetime as _dt
import json
from dataclasses import replace
from pathlib import Path

import pytest
from sqlalchemy import select
from tests.apps.leaderboard.web.conftest import OFFICIAL, OURS, SHARED_MODEL, leaderboard_file

from passbench.analysis.report.analysis import Options
from passbench.analysis.report.compare import compare_pair
from passbench.apps.cli import main
from passbench.apps.leaderboard.store.database import Store
from passbench.apps.leaderboard.store.models import Model
from passbench.apps.leaderboard.web import board as boards
from passbench.apps.leaderboard.web.board import BoardRow, View
from passbench.apps.leaderboard.web.filters import BoardState
from passbench.apps.leaderboard.web.static import build
from passbench.core import scoring
from passbench.stages.results import load_results, task_order

HARD_COMPLETE = View("bigcodebench", "hard", "complete")


def _rows(store: Store, view: View = HARD_COMPLETE) -> list[BoardRow]:
    with store.transaction() as session:
        return boards.board(session, view)


def test_views_are_the_public_boards_and_the_runs(filled: tuple[Store, dict[str, int]]) -> None:
    store, _ = filled
    with store.transaction() as session:
        found = boards.views(session)
    assert [v.key for v in found] == [
        "bigcodebench-full-complete",
        "bigcodebench-full-instruct",
        "bigcodebench-hard-complete",
        "bigcodebench-hard-instruct",
    ]
    assert found[3].label == "BigCodeBench · Hard · Instruct"


def test_runs_are_scored_from_verdicts_and_published_scores_are_reported(
    filled: tuple[Store, dict[str, int]], data_dir: Path
) -> None:
    store, runs = filled
    rows = _rows(store)
    published = json.loads(leaderboard_file(data_dir, "hard").read_text())
    with_complete = {n for n, e in published.items() if e["pass@1"]["complete"] is not None}
    reported = {row.model: row for row in rows if row.badge == "reported"}
    assert set(reported) == with_complete
    assert reported[SHARED_MODEL].pass_at_1 == 12.8
    # an interval for a published number assumes one greedy sample on each of the 148 tasks
    low, high = scoring.clopper_pearson(round(0.128 * 148), 148)
    assert (reported[SHARED_MODEL].ci_low, reported[SHARED_MODEL].ci_high) == pytest.approx(
        (100 * low, 100 * high)
    )
    assert "assuming" in reported[SHARED_MODEL].ci_method

    verified = next(row for row in rows if row.badge == "verified")
    assert (verified.model, verified.run_id) == ("demo-model-v2", runs["demo-model-v2"])
    run = load_results(OURS)
    counts = run.counts()
    assert list(counts) == sorted(counts, key=task_order)  # the file lists tasks in order
    interval = scoring.pass_at_k_intervals(counts, [1])["pass@1"]
    assert verified.pass_at_1 == pytest.approx(
        100 * scoring.mean_pass_at_k(run.counts().values(), 1)
    )
    assert (verified.ci_low, verified.ci_high) == pytest.approx(
        (100 * interval.low, 100 * interval.high)
    )
    assert verified.ci_method == "bootstrap-percentile"  # five samples a task
    assert (verified.n_tasks, verified.n_samples) == (14, 70)

    # the model the public board lists and we hold a run of has both rows, never merged
    shared = [row for row in rows if row.model == SHARED_MODEL]
    assert {row.badge for row in shared} == {"reported", "imported"}
    imported = next(row for row in shared if row.badge == "imported")
    assert imported.pass_at_1 == pytest.approx(100 * 6 / 14)
    assert imported.ci_method == "clopper-pearson"  # one sample a task: exact
    assert imported.link == reported[SHARED_MODEL].link and imported.size_b == 6.7


def test_postgresql_gives_the_same_board_as_sqlite(
    filled: tuple[Store, dict[str, int]], filled_postgres: tuple[Store, dict[str, int]]
) -> None:
    (sqlite, sqlite_runs), (postgres, postgres_runs) = filled, filled_postgres
    assert postgres.engine.dialect.name == "postgresql"
    with sqlite.transaction() as session:
        expected = {view: boards.board(session, view) for view in boards.views(session)}
        sqlite_ids = {m.id: m.name for m in session.scalars(select(Model))}
    with postgres.transaction() as session:
        found = {view: boards.board(session, view) for view in boards.views(session)}
        postgres_ids = {m.id: m.name for m in session.scalars(select(Model))}
    sqlite_run_model = {run: name for name, run in sqlite_runs.items()}
    postgres_run_model = {run: name for name, run in postgres_runs.items()}

    def portable(
        rows: list[BoardRow], ids: dict[int, str], run_model: dict[int, str]
    ) -> list[tuple[BoardRow, str, str | None]]:
        """Rows without database ids (they may differ): what the ids point at instead."""
        return [
            (
                replace(row, model_id=0, run_id=None),
                ids[row.model_id],
                None if row.run_id is None else run_model[row.run_id],
            )
            for row in rows
        ]

    assert list(found) == list(expected) and len(expected) == 4
    for view, rows in expected.items():
        assert len(rows) > 100
        assert portable(found[view], postgres_ids, postgres_run_model) == portable(
            rows, sqlite_ids, sqlite_run_model
        ), view.key


def test_rows_are_ranked_with_bands_where_intervals_overlap(
    filled: tuple[Store, dict[str, int]],
) -> None:
    store, _ = filled
    rows = _rows(store)
    assert [row.pass_at_1 for row in rows] == sorted((row.pass_at_1 for row in rows), reverse=True)
    for row in rows:
        assert row.rank_best <= row.rank <= row.rank_worst
    for better in rows:
        for worse in rows:
            assert better.ci_low is not None and worse.ci_high is not None
            if better.ci_low > worse.ci_high:  # surely better: its whole band is higher
                assert better.rank_best < worse.rank_best
                assert better.rank_worst < worse.rank_worst
    assert any(row.rank_best < row.rank_worst for row in rows)  # overlaps make bands
    assert rows[0].rank_best == 1 and rows[-1].rank_worst == len(rows)


def _row(name: str, score: float, low: float, high: float) -> BoardRow:
    return BoardRow(
        model_id=0, model=name, badge="verified", pass_at_1=score, ci_low=low, ci_high=high,
        ci_method="", n_tasks=None, n_samples=None, run_id=None, link=None, size_b=None,
        active_params_b=None, moe=None, open_data=None, release_date=None, prompted=None,
        prefill=None,
    )  # fmt: skip


def test_a_band_spans_exactly_the_ranks_the_intervals_allow() -> None:
    ranked = boards.rank(
        [
            _row("c", 50, 45, 55),
            _row("a", 90, 85, 95),
            _row("b", 80, 75, 88),
            _row("d", 50, 40, 60),
        ]
    )
    assert [(r.model, r.rank, r.rank_band) for r in ranked] == [
        ("a", 1, "1–2"),  # b's interval reaches into a's
        ("b", 2, "1–2"),
        ("c", 3, "3–4"),  # equal scores share a rank
        ("d", 3, "3–4"),
    ]


def test_a_hidden_run_leaves_every_view(filled: tuple[Store, dict[str, int]]) -> None:
    store, runs = filled
    with store.transaction() as session:
        boards.set_hidden(session, runs["demo-model-v2"])
    try:
        assert "demo-model-v2" not in {row.model for row in _rows(store)}
        with store.transaction() as session:
            assert (
                boards.model_page(session, boards.model_named(session, "demo-model-v2").id).runs
                == []
            )  # type: ignore[union-attr]
    finally:
        with store.transaction() as session:
            boards.set_hidden(session, runs["demo-model-v2"], hidden=False)
    assert "demo-model-v2" in {row.model for row in _rows(store)}


def test_an_admin_hides_a_published_score_from_the_board_and_the_build(
    filled: tuple[Store, dict[str, int]], tmp_path: Path
) -> None:
    store, runs = filled
    hide = ["leaderboard", "hide", "--db", store.url, "--reported", SHARED_MODEL]
    main([*hide, "--subset", "hard"])
    try:
        shared = [(row.badge, row.run_id) for row in _rows(store) if row.model == SHARED_MODEL]
        assert shared == [("imported", runs[SHARED_MODEL])]  # the run we hold stays
        full = _rows(store, View("bigcodebench", "full", "complete"))
        assert ("reported", SHARED_MODEL) in {(row.badge, row.model) for row in full}
        with store.transaction() as session:
            build(session, tmp_path / "site")
        board_json = json.loads((tmp_path / "site" / "board.json").read_text())
        hard_rows = [r for v in board_json["views"] if "-hard-" in v["key"] for r in v["rows"]]
        assert not [r for r in hard_rows if (r["model"], r["badge"]) == (SHARED_MODEL, "reported")]
        hard_json = json.loads((tmp_path / "site" / "results-hard.json").read_text())
        assert hard_json[SHARED_MODEL]["pass@1"]["instruct"] is None  # only the hidden one had it
    finally:
        main([*hide, "--show"])
    assert ("reported", SHARED_MODEL) in {(row.badge, row.model) for row in _rows(store)}
    with pytest.raises(SystemExit) as refused:
        main(["leaderboard", "hide", "--db", store.url, "--reported", "no-such-model"])
    assert refused.value.code == 2


def test_the_url_state_filters_and_sorts_and_counts_what_it_hides(
    filled: tuple[Store, dict[str, int]],
) -> None:
    store, _ = filled
    rows = _rows(store, View("bigcodebench", "full", "instruct"))
    query = {"sort": "-size", "moe": "no", "size_max": "16", "from": "2024-06-01", "q": "coder"}
    state = BoardState.from_query(query)
    assert state.to_query() == query
    shown, hidden = state.apply(rows)
    expected = [
        r
        for r in rows
        if r.moe is False and r.size_b is not None and r.size_b <= 16
        and r.release_date is not None and r.release_date >= _dt.date(2024, 6, 1)
        and "coder" in r.model.lower()
    ]  # fmt: skip
    assert shown and sorted(r.model for r in shown) == sorted(r.model for r in expected)
    assert hidden == len(rows) - len(expected)
    sizes = [r.size_b for r in shown]
    assert sizes == sorted(sizes, reverse=True)  # type: ignore[type-var]

    # what does not parse is ignored; an unknown column does not sort
    broken = BoardState.from_query({"size_min": "big", "sort": "nope", "moe": "maybe"})
    assert broken == BoardState()
    assert BoardState.from_query({"badge": "reported,verified"}).apply(rows)[0][0].badge in (
        "reported",
        "verified",
    )


def test_the_comparison_is_the_one_passbench_compare_makes(
    filled: tuple[Store, dict[str, int]], tmp_path: Path
) -> None:
    store, runs = filled
    options = Options(resamples=300)
    with store.transaction() as session:
        stored = boards.compare(session, runs[SHARED_MODEL], runs["demo-model-v2"], options)
    from_files = compare_pair(
        load_results(OFFICIAL),
        load_results(OURS),
        options,
    )
    assert stored.tasks_both == from_files.tasks_both == 13
    assert stored.only_a == from_files.only_a and stored.tasks == from_files.tasks
    assert stored.diff == pytest.approx(from_files.diff)
    assert stored.diff_ci == from_files.diff_ci
    assert stored.mcnemar_p == from_files.mcnemar_p
    assert (stored.a, stored.b) == (SHARED_MODEL, "demo-model-v2")
