"""The public BigCodeBench leaderboard's results into the store as reported scores: all 202
models, the numbers as published, never mixed with runs, imported once."""

from __future__ import annotations

import datetime as _dt
import json
from pathlib import Path

import pytest
from sqlalchemy import func, select

from passbench.apps.leaderboard.store.database import Store
from passbench.apps.leaderboard.store.importing import import_results
from passbench.apps.leaderboard.store.models import Model, ReportedScore, ReportedSource, Run
from passbench.apps.leaderboard.store.official_leaderboard import guess_subset, import_official
from passbench.core.errors import ResultsFileError

DEMO = (
    Path(__file__).resolve().parents[3]
    / "analysis"
    / "report"
    / "data"
    / "demo-model--bigcodebench-hard-complete--official-0-1-sanitized-calibrated_eval_results.json"
)


def _file(data_dir: Path, subset: str) -> Path:
    path = data_dir / "leaderboard" / f"bigcodebench-results-{subset}.json"
    if not path.is_file():
        pytest.fail(f"{path} not found; set PASSBENCH_DATA_DIR to the shared datasets folder")
    return path


def _scores(store: Store, subset: str) -> dict[tuple[str, str], float]:
    with store.transaction() as session:
        rows = session.execute(
            select(Model.name, ReportedScore.split, ReportedScore.pass_at_1_percent)
            .join(ReportedScore.model)
            .where(ReportedScore.subset == subset)
        ).all()
    return {(name, split): percent for name, split, percent in rows}


def test_both_leaderboards_are_stored_as_published(store: Store, data_dir: Path) -> None:
    for subset in ("full", "hard"):
        path = _file(data_dir, subset)
        done = import_official(store, path)
        assert done.created and done.subset == subset and done.n_models == 202
        published = json.loads(path.read_text())
        expected = {
            (name, split): float(score)
            for name, entry in published.items()
            for split, score in entry["pass@1"].items()
            if score is not None
        }
        assert _scores(store, subset) == expected
    full, hard = _scores(store, "full"), _scores(store, "hard")
    assert full[("Magicoder-S-DS-6.7B", "complete")] == 47.6
    assert full[("Magicoder-S-DS-6.7B", "instruct")] == 36.2
    assert hard[("Magicoder-S-DS-6.7B", "instruct")] == 13.5
    with store.transaction() as session:
        assert session.scalar(select(func.count()).select_from(Model)) == 202
        assert session.scalar(select(func.count()).select_from(Run)) == 0  # reported, not runs
        model = session.scalar(select(Model).where(Model.name == "StarCoder2-15B-Instruct-v0.1"))
        assert model is not None
        assert model.link == "https://huggingface.co/bigcode/starcoder2-15b-instruct-v0.1"
        assert (model.open_data, model.size_b, model.moe, model.prompted) == (
            "Full",
            15.0,
            False,
            True,
        )
        assert model.release_date == _dt.date(2024, 4, 30)


def test_importing_a_leaderboard_again_adds_nothing(store: Store, data_dir: Path) -> None:
    path = _file(data_dir, "hard")
    first = import_official(store, path)
    again = import_official(store, path)
    assert not again.created and again.source_id == first.source_id
    assert again.n_scores == first.n_scores
    with store.transaction() as session:
        assert session.scalar(select(func.count()).select_from(ReportedSource)) == 1
        count = session.scalar(select(func.count()).select_from(ReportedScore))
    assert count == first.n_scores


def test_a_run_and_reported_scores_share_the_model_but_not_the_table(
    store: Store, data_dir: Path, tmp_path: Path
) -> None:
    """A model we ran and the leaderboard reported is one model row with both kinds of
    result; the run's pass@1 stays the verdicts', the reported one stays the file's."""
    document = json.loads(DEMO.read_text())
    run_file = tmp_path / DEMO.name.replace("demo-model", "Magicoder-S-DS-6.7B")
    run_file.write_text(json.dumps(document))
    (tmp_path / run_file.name.replace("eval_results", "pass_at_k")).write_text(
        json.dumps({"pass@1": 6 / 14, "model": "Magicoder-S-DS-6.7B"})
    )
    import_results(store, run_file)
    import_official(store, _file(data_dir, "hard"))
    with store.transaction() as session:
        model = session.scalar(select(Model).where(Model.name == "Magicoder-S-DS-6.7B"))
        assert model is not None
        assert [run.pass_at_1 for run in model.runs] == [pytest.approx(6 / 14)]
        assert {(r.split, r.pass_at_1_percent) for r in model.reported} == {
            ("complete", 12.8),
            ("instruct", 13.5),
        }
        assert model.link is not None  # the leaderboard's metadata filled in


def test_a_malformed_leaderboard_names_the_field_and_writes_nothing(
    store: Store, data_dir: Path, tmp_path: Path
) -> None:
    published = json.loads(_file(data_dir, "full").read_text())
    name = list(published)[150]
    published[name]["pass@1"]["instruct"] = "36.2%"
    bad = tmp_path / "results.json"
    bad.write_text(json.dumps(published))
    with pytest.raises(ResultsFileError) as raised:
        import_official(store, bad)
    assert str(raised.value) == (
        f"{bad}: field '[{name!r}].pass@1.instruct': must be a percentage (0 to 100), got '36.2%'"
    )
    with store.transaction() as session:
        assert session.scalar(select(func.count()).select_from(Model)) == 0
        assert session.scalar(select(func.count()).select_from(ReportedSource)) == 0


def test_the_subset_comes_from_the_file_name_unless_given(
    store: Store, data_dir: Path, tmp_path: Path
) -> None:
    assert guess_subset(Path("results-hard.json")) == "hard"
    assert guess_subset(Path("results.json")) == "full"
    copy = tmp_path / "results.json"
    copy.write_bytes(_file(data_dir, "hard").read_bytes())
    assert import_official(store, copy, "hard").subset == "hard"
    assert set(_scores(store, "hard")) and not _scores(store, "full")


def test_a_hidden_reported_score_stays_hidden_when_a_newer_file_lists_it(
    store: Store, data_dir: Path, tmp_path: Path
) -> None:
    from passbench.apps.leaderboard.web import board as boards

    path = _file(data_dir, "hard")
    import_official(store, path)
    name = next(iter(json.loads(path.read_text())))
    with store.transaction() as session:
        changed = boards.set_reported_hidden(session, name, split="complete")
        assert [(s.split, s.hidden) for s in changed] == [("complete", True)]
    # the next snapshot of the public board (new bytes, so a new source) lists it again
    newer = tmp_path / "bigcodebench-results-hard.json"
    newer.write_text(json.dumps(json.loads(path.read_text()), indent=1))
    assert import_official(store, newer).created
    with store.transaction() as session:
        rows = session.execute(
            select(ReportedScore.source_id, ReportedScore.split, ReportedScore.hidden)
            .join(ReportedScore.model)
            .where(Model.name == name)
            .order_by(ReportedScore.source_id, ReportedScore.split)
        ).all()
        assert [(split, hidden) for _, split, hidden in rows] == [
            ("complete", True),
            ("instruct", False),
        ] * 2
        with pytest.raises(LookupError, match="no reported score"):
            boards.set_reported_hidden(session, "no such model")
