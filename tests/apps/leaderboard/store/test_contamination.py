"""Overlap result files into the store (`passbench db import-contamination`), on SQLite and
PostgreSQL: stored once per content, refused whole with a one-line error naming the field, and
matched to the runs of the same benchmark, split, subset and dataset."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from sqlalchemy import func, select
from tests.analysis.report.result_files import OFFICIAL, OURS

from passbench.analysis.contamination import OverlapSettings, check_overlap, overlap_document
from passbench.apps.cli import cli
from passbench.apps.leaderboard.store.contamination import (
    flagged_tasks,
    import_contamination,
    matching_checks,
)
from passbench.apps.leaderboard.store.database import Store
from passbench.apps.leaderboard.store.importing import import_results
from passbench.apps.leaderboard.store.models import ContaminatedTask, ContaminationCheck, Run
from passbench.core.errors import ResultsFileError

SHA = "5d5d0bd4f513e4a17bbd1f7ec7c7110b6d60776b12566e09acd10ae8cfcc79f2"  # OURS's dataset


def words(low: int, high: int) -> str:
    return " ".join(f"w{i}" for i in range(low, high))


def overlap(folder: Path, name: str = "overlap.json", **meta: Any) -> Path:
    """A real overlap file: three tasks, a corpus holding 12 tokens of one and 10 of another
    (flagged at n=10, only the first at n=12)."""
    texts = {"BigCodeBench/13": words(0, 30), "BigCodeBench/15": words(100, 130)}
    texts["BigCodeBench/17"] = words(200, 230)
    corpus = folder / f"{name}.corpus.txt"
    corpus.write_text(f"{words(5, 17)}\nx\n{words(110, 120)}\n", encoding="utf-8")
    report = check_overlap(texts, [corpus], OverlapSettings(ns=(10, 12), lcs_min=8))
    settings = {"benchmark": "bigcodebench", "version": "v0.1.4", "split": "complete"}
    document = overlap_document(
        report, {**settings, "subset": "hard", "dataset_sha256": SHA, **meta}
    )
    path = folder / name
    path.write_text(json.dumps(document, indent=1), encoding="utf-8")
    return path


def count(store: Store, table: type) -> int:
    with store.transaction() as session:
        return session.scalar(select(func.count()).select_from(table)) or 0


def test_a_check_is_stored_once_with_its_flagged_tasks_per_n(store: Store, tmp_path: Path) -> None:
    path = overlap(tmp_path)
    first = import_contamination(store, path)
    again = import_contamination(store, path)
    assert first.created and not again.created
    assert again.check_id == first.check_id
    assert (first.contaminated, first.task_count, first.contaminated_n) == (2, 3, 10)
    assert count(store, ContaminationCheck) == 1
    with store.transaction() as session:
        check = session.get(ContaminationCheck, first.check_id)
        assert check is not None
        stored = {(t.n, t.task_id, t.shared) for t in check.tasks}
        document = json.loads(path.read_text())
        assert (check.corpus_sha256, check.corpus_bytes) == (
            document["corpus"]["sha256"],
            document["corpus"]["bytes"],
        )
        assert check.ns == [10, 12] and check.thresholds["min_shared_ngrams"] == 1
        assert (check.benchmark, check.subset, check.split, check.dataset_sha256) == (
            "bigcodebench",
            "hard",
            "complete",
            SHA,
        )
    assert stored == {
        (10, "BigCodeBench/13", 3),  # 12 shared tokens: three 10-grams
        (10, "BigCodeBench/15", 1),
        (12, "BigCodeBench/13", 1),
    }
    # another corpus is another check
    assert import_contamination(store, overlap(tmp_path, "other.json", version="v0.1.3")).created
    assert count(store, ContaminationCheck) == 2


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(document: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        for key in parents:
            document = document[key]
        if value is KeyError:
            del document[last]
        else:
            document[last] = value

    return change


BAD = {
    "kind": (_set("kind", "pass@k"), "not a `passbench contamination overlap` result file"),
    "schema": (_set("schema_version", 2), "field 'schema_version': schema version 2"),
    "corpus hash": (_set("corpus.sha256", KeyError), "field 'corpus.sha256': is missing"),
    "bytes": (_set("corpus.bytes", "3 GB"), "field 'corpus.bytes': must be int"),
    "n": (_set("n", "10"), "field 'n': must be a list of n-gram sizes"),
    "threshold n": (
        _set("thresholds.contaminated_n", 13),
        "field 'thresholds.contaminated_n': 13 is not one of the file's n",
    ),
    "disagreeing lists": (
        _set("contaminated", ["BigCodeBench/17"]),
        "field 'contaminated': disagrees with contaminated_by_n.10",
    ),
    "ids": (_set("contaminated_by_n.12", [3]), "field 'contaminated_by_n.12': must be a list"),
    "benchmark": (_set("benchmark", None), "field 'benchmark': is missing"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_a_bad_file_is_refused_whole_naming_the_field(
    store: Store, tmp_path: Path, case: str
) -> None:
    change, message = BAD[case]
    path = overlap(tmp_path)
    document = json.loads(path.read_text())
    change(document)
    path.write_text(json.dumps(document))
    with pytest.raises(ResultsFileError) as caught:
        import_contamination(store, path)
    assert str(caught.value).startswith(f"{path}: "), caught.value
    assert message in str(caught.value) and "\n" not in str(caught.value)
    assert count(store, ContaminationCheck) == count(store, ContaminatedTask) == 0


def test_not_json_names_the_line(store: Store, tmp_path: Path) -> None:
    path = tmp_path / "overlap.json"
    path.write_text('{\n "kind": "contamination-overlap",\n "n": [10,\n}')
    with pytest.raises(ResultsFileError, match=r"overlap.json:4: not valid JSON"):
        import_contamination(store, path)


def test_a_row_the_database_refuses_leaves_nothing(store: Store, tmp_path: Path) -> None:
    """PostgreSQL enforces the task id's length; the check's row goes with its tasks."""
    if store.engine.dialect.name != "postgresql":
        pytest.skip("SQLite does not enforce VARCHAR lengths")
    path = overlap(tmp_path)
    document = json.loads(path.read_text())
    long_id = "BigCodeBench/" + "9" * 300
    document["contaminated_by_n"]["12"] = [long_id]
    path.write_text(json.dumps(document))
    with pytest.raises(ResultsFileError, match="cannot be stored"):
        import_contamination(store, path)
    assert count(store, ContaminationCheck) == count(store, ContaminatedTask) == 0


def test_the_command_imports_the_good_files_and_names_the_bad(store: Store, tmp_path: Path) -> None:
    good = overlap(tmp_path)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"kind": "contamination-overlap", "schema_version": 1}))
    result = CliRunner().invoke(
        cli, ["db", "import-contamination", str(good), str(bad), str(good), "--db", store.url]
    )
    assert result.exit_code == 2, result.output
    lines = result.stderr.splitlines()
    assert lines[0].startswith("imported: check 1 bigcodebench hard complete: 2 of 3 tasks")
    assert lines[1] == f"error: {bad}: field 'n': must be a list of n-gram sizes"
    assert lines[2].startswith("already stored: check 1 ")
    assert count(store, ContaminationCheck) == 1


def test_a_run_matches_the_checks_of_its_benchmark_split_subset_and_dataset(
    store: Store, tmp_path: Path
) -> None:
    ours = import_results(store, OURS).run_id  # passbench's file: version and dataset hash
    official = import_results(store, OFFICIAL).run_id  # neither
    same = import_contamination(store, overlap(tmp_path, "same.json")).check_id
    unnamed = import_contamination(
        store, overlap(tmp_path, "unnamed.json", version=None, dataset_sha256=None)
    ).check_id
    for other in (
        {"dataset_sha256": "0" * 64},
        {"version": "v0.1.3"},
        {"subset": "full"},
        {"split": "instruct"},
        {"benchmark": "humaneval"},
    ):
        name = "-".join(other) + ".json"
        import_contamination(store, overlap(tmp_path, name, **other))
    with store.transaction() as session:

        def matched(run_id: int) -> list[int]:
            run = session.get(Run, run_id)
            assert run is not None
            return [check.id for check in matching_checks(session, run)]

        assert matched(ours) == [same, unnamed]
        # the official file names no dataset: the checks of another version or hash match too
        assert len(matched(official)) == 4
        check = session.get(ContaminationCheck, same)
        assert check is not None
        assert flagged_tasks(check) == {"BigCodeBench/13", "BigCodeBench/15"}
        assert flagged_tasks(check, 12) == {"BigCodeBench/13"}
