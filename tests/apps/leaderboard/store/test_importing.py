"""Result files into the store, on SQLite and PostgreSQL: what is stored matches the files,
importing twice adds nothing, and a bad file changes nothing and says which field is wrong."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from sqlalchemy import func, select
from tests.analysis.report.result_files import OFFICIAL, OURS

from passbench.apps.leaderboard.store.database import Store
from passbench.apps.leaderboard.store.importing import import_results
from passbench.apps.leaderboard.store.models import Model, Run, SampleVerdict, TaskResult
from passbench.core.errors import ResultsFileError
from passbench.stages.results import load_results


def _counts(store: Store) -> dict[str, int]:
    with store.transaction() as session:
        return {
            table.__tablename__: session.scalar(select(func.count()).select_from(table)) or 0
            for table in (Model, Run, TaskResult, SampleVerdict)
        }


def test_a_passbench_run_is_stored_with_every_verdict_and_its_provenance(store: Store) -> None:
    done = import_results(store, OURS)
    expected = load_results(OURS)
    assert done.created and done.model == "demo-model-v2"
    with store.transaction() as session:
        run = session.get(Run, done.run_id)
        assert run is not None
        assert (run.origin, run.provenance) == ("passbench", "imported")
        assert (run.benchmark, run.dataset_version, run.subset, run.split) == (
            "bigcodebench",
            "v0.1.4",
            "hard",
            "complete",
        )
        assert run.harness_version == expected.meta["passbench_version"]
        assert run.dataset_sha256 == expected.meta["dataset_sha256"]
        assert run.isolation == "bubblewrap"
        assert run.meta == expected.meta
        # pass@1 from the stored verdicts is what the file's own _pass_at_k.json says
        side = json.loads(expected.pass_at_k_path.read_text())  # type: ignore[union-attr]
        assert run.pass_at_1 == pytest.approx(side["pass@1"])
        assert run.pass_at_k["pass@5"] == pytest.approx(side["pass@5"])
        assert run.n_samples == 70
        for task in run.tasks:
            samples = expected.tasks[task.task_id]
            assert (task.n, task.c) == (len(samples), sum(s.passed for s in samples))
            stored = sorted(task.samples, key=lambda verdict: verdict.sample_index)
            assert [(v.status, v.solution, v.details) for v in stored] == [
                (s.status, s.solution, dict(s.details)) for s in samples
            ]
            assert [v.category for v in stored] == [
                s.category.value if s.category else None for s in samples
            ]


def test_an_official_run_is_stored_with_what_it_says(store: Store) -> None:
    done = import_results(store, OFFICIAL)
    with store.transaction() as session:
        run = session.get(Run, done.run_id)
        assert run is not None
        assert run.origin == "official" and run.meta == {}
        assert run.harness_version is None and run.isolation is None
        assert run.pass_at_1 == pytest.approx(6 / 14)
        assert run.model.name == "demo-model"


def test_importing_the_same_files_twice_adds_nothing(store: Store) -> None:
    first = [import_results(store, OURS), import_results(store, OFFICIAL)]
    before = _counts(store)
    again = import_results(store, OURS)
    via_pass_at_k = import_results(store, str(OFFICIAL).replace("eval_results", "pass_at_k"))
    assert not again.created and again.run_id == first[0].run_id
    assert not via_pass_at_k.created and via_pass_at_k.run_id == first[1].run_id
    assert _counts(store) == before
    assert before["runs"] == 2 and before["models"] == 2


def test_a_changed_file_is_a_new_run_of_the_same_model(store: Store, tmp_path: Path) -> None:
    import_results(store, OFFICIAL)
    copy = tmp_path / OFFICIAL.name
    document = json.loads(OFFICIAL.read_text())
    document["date"] = "2030-01-01 00:00"
    copy.write_text(json.dumps(document))
    shutil.copy(str(OFFICIAL).replace("eval_results", "pass_at_k"), tmp_path)
    assert import_results(store, copy).created
    counts = _counts(store)
    assert (counts["runs"], counts["models"]) == (2, 1)


def test_a_malformed_file_names_the_field_and_writes_nothing(store: Store, tmp_path: Path) -> None:
    document = json.loads(OURS.read_text())
    task_id = next(iter(document["eval"]))
    document["eval"][task_id][2]["status"] = "passed"  # after two good samples of the task
    bad = tmp_path / OURS.name
    bad.write_text(json.dumps(document))
    with pytest.raises(ResultsFileError) as raised:
        import_results(store, bad)
    message = str(raised.value)
    assert "\n" not in message
    assert str(bad) in message and f"eval[{task_id!r}][2].status" in message
    assert _counts(store) == {"models": 0, "runs": 0, "task_results": 0, "sample_verdicts": 0}


def test_a_file_the_database_refuses_is_rolled_back_whole(store: Store, tmp_path: Path) -> None:
    """A task id longer than the column holds: PostgreSQL refuses it mid-import (SQLite
    stores it); either way the store holds the whole run or nothing of it."""
    document = json.loads(OFFICIAL.read_text())
    last = list(document["eval"])[-1]
    samples = document["eval"].pop(last)
    long_id = "BigCodeBench/" + "9" * 300
    for sample in samples:
        sample["task_id"] = long_id
    document["eval"][long_id] = samples
    bad = tmp_path / OFFICIAL.name
    bad.write_text(json.dumps(document))
    if store.engine.dialect.name == "postgresql":
        with pytest.raises(ResultsFileError, match="cannot be stored"):
            import_results(store, bad)
        assert _counts(store) == {"models": 0, "runs": 0, "task_results": 0, "sample_verdicts": 0}
    else:
        import_results(store, bad)
        assert _counts(store)["task_results"] == 14


def test_a_ground_truth_file_is_not_a_run(store: Store, tmp_path: Path) -> None:
    ground_truth = tmp_path / "ground_truth.json"
    ground_truth.write_text(
        json.dumps({"tasks": {"BigCodeBench/0": {"status": "pass", "duration_s": 1.0}}})
    )
    with pytest.raises(ResultsFileError, match="not a model's run"):
        import_results(store, ground_truth)
    assert _counts(store)["runs"] == 0
