"""A stored contamination check on the model page: the number of the run's tasks it flags and
pass@1 on the clean tasks beside every task's, the figures `passbench inspect
--exclude-contaminated` gives for the same run and overlap file; through the app's `model` API
with gradio_client; and the board's clean pass@1 column."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from tests.apps.leaderboard.web.conftest import OURS, PLANTED, SHARED_MODEL, overlap_file

from passbench.apps.cli import cli
from passbench.apps.leaderboard.store.contamination import import_contamination
from passbench.apps.leaderboard.store.database import Store, open_store
from passbench.apps.leaderboard.store.importing import import_results
from passbench.apps.leaderboard.web import board as boards
from passbench.apps.leaderboard.web.app import _model_markdown
from passbench.apps.leaderboard.web.board import BoardRow
from passbench.apps.leaderboard.web.filters import table
from passbench.stages.results import load_results


def _inspect_scores(data_dir: Path, folder: Path, monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """`passbench inspect OURS --exclude-contaminated overlap.json --format json`'s scores."""
    monkeypatch.setenv("PASSBENCH_DATA_DIR", str(data_dir))
    monkeypatch.setenv("PASSBENCH_CACHE_DIR", str(folder / "cache"))
    monkeypatch.setenv("PASSBENCH_OFFLINE", "1")
    path = overlap_file(data_dir, folder)
    result = CliRunner().invoke(
        cli, ["inspect", str(OURS), "--exclude-contaminated", str(path), "--format", "json"]
    )
    assert result.exit_code == 0, result.output
    scores: list[Any] = json.loads(result.stdout)["contamination"]["scores"]
    return scores


def _page(store: Store, name: str) -> boards.ModelPage:
    with store.transaction() as session:
        model = boards.model_named(session, name)
        assert model is not None
        page = boards.model_page(session, model.id)
        assert page is not None
        return page


def test_the_model_page_gives_inspects_figures_without_the_flagged_tasks(
    filled: tuple[Store, dict[str, int]],
    data_dir: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    store, runs = filled
    expected = _inspect_scores(data_dir, tmp_path, monkeypatch)
    page = _page(store, "demo-model-v2")
    [found] = page.contamination
    assert found.run_id == runs["demo-model-v2"]
    assert [{"tasks": s.label, "count": s.tasks, "pass@1": s.pass_at_1} for s in found.scores] == (
        expected
    )
    # the planted tasks: one always solved, one never: the clean score is not the full one
    counts = load_results(OURS).counts()
    assert found.contaminated.tasks == len(PLANTED) and found.flagged == len(PLANTED)
    clean = [c / n for task, (n, c) in counts.items() if task not in PLANTED]
    assert found.clean.pass_at_1 == pytest.approx(sum(clean) / len(clean))
    assert found.clean.pass_at_1 != pytest.approx(found.all_tasks.pass_at_1)
    assert (found.checked, found.n) == (148, 10)
    text = _model_markdown(page)
    assert "### Contamination checks" in text and "corpus.jsonl" in text
    assert f"**2** of the run's {len(counts)}" in text
    assert f"**{100 * found.clean.pass_at_1:.1f}% of {len(counts) - 2}**" in text
    # the official evaluator's file names no dataset: it matches on benchmark, split, subset
    [official] = _page(store, SHARED_MODEL).contamination
    assert official.run_id == runs[SHARED_MODEL] and official.contaminated.tasks == 2
    # a model without runs has no checks to show
    assert not _page(store, "GPT-4o-2024-05-13").contamination


def test_gradio_client_reads_the_contamination_of_a_models_runs(
    server: str, filled: tuple[Store, dict[str, int]]
) -> None:
    pytest.importorskip("gradio_client")
    from gradio_client import Client
    from gradio_client.exceptions import AppError

    store, runs = filled
    client = Client(server, verbose=False)
    document: dict[str, Any] = client.predict("demo-model-v2", api_name="/model")
    [run] = document["runs"]
    assert (run["run_id"], run["badge"]) == (runs["demo-model-v2"], "verified")
    [check] = run["contamination"]
    [found] = _page(store, "demo-model-v2").contamination
    assert check["tasks_flagged"] == 2 and check["tasks_checked"] == 148
    assert "corpus.jsonl" in check["corpus"] and check["corpus_sha256"] == found.corpus_sha256
    assert check["scores"] == [
        {"tasks": s.label, "count": s.tasks, "pass@1": s.pass_at_1} for s in found.scores
    ]
    assert run["pass_at_1"] == pytest.approx(check["scores"][0]["pass@1"])
    reported = _page(store, SHARED_MODEL).reported
    shared = client.predict(SHARED_MODEL, api_name="/model")
    assert len(shared["reported"]) == len(reported) > 0
    with pytest.raises(AppError, match="no model 'no-such-model'"):
        client.predict("no-such-model", api_name="/model")


def test_the_board_shows_clean_pass_at_1_once_a_check_is_imported(
    data_dir: Path, tmp_path: Path
) -> None:
    store = open_store(f"sqlite:///{tmp_path / 'store.db'}")
    try:
        run_id = import_results(store, OURS, provenance="verified").run_id

        def row() -> tuple[tuple[object, ...], BoardRow]:
            with store.transaction() as session:
                view = boards.find_view(boards.views(session), "bigcodebench-hard-complete")
                assert view is not None
                [found] = boards.board(session, view)
                return boards.stamp(session), found

        before, plain = row()
        assert plain.clean_pass_at_1 is None and plain.contaminated_tasks is None
        import_contamination(store, overlap_file(data_dir, tmp_path))
        after, checked = row()
        assert after != before  # the app's cache of boards is recomputed
        [found] = _page(store, "demo-model-v2").contamination
        assert checked.run_id == found.run_id == run_id
        assert checked.clean_pass_at_1 == 100 * found.clean.pass_at_1
        assert checked.contaminated_tasks == 2
        assert checked.pass_at_1 == pytest.approx(100 * found.all_tasks.pass_at_1)
        headers, [cells] = table([checked], ["model", "pass1", "clean"])
        assert headers == ["Model", "pass@1 %", "Clean pass@1 %"]
        assert cells[2] == f"{checked.clean_pass_at_1:.1f} (−2)"
    finally:
        store.close()
