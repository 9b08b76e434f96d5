"""The leaderboard store never ranks runs of different task versions on one board."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.analysis.report.result_files import OURS

from passbench.apps.leaderboard.store.database import Store
from passbench.apps.leaderboard.store.importing import import_results
from passbench.apps.leaderboard.web.board import set_hidden
from passbench.core.errors import InputError


def _variant(tmp_path: Path, model: str, version: str, sha: str) -> Path:
    document = json.loads(OURS.read_text(encoding="utf-8"))
    document["passbench"]["task_set"] = {
        "benchmark": "bigcodebench",
        "version": version,
        "files": [{"name": "BigCodeBench.jsonl.gz", "sha256": sha}],
    }
    document["passbench"].update(dataset_version=version, dataset_sha256=sha)
    path = tmp_path / f"{model}--bigcodebench-hard-complete--0.8-5_eval_results.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def test_a_run_of_another_task_version_is_refused_until_the_old_ones_are_hidden(
    store: Store, tmp_path: Path
) -> None:
    first = import_results(store, _variant(tmp_path, "a", "v0.1.4", "1" * 64))
    second = import_results(store, _variant(tmp_path, "b", "v0.1.4", "1" * 64))  # same set
    for version, sha in (("v0.1.3", "2" * 64), ("v0.1.4", "3" * 64)):
        with pytest.raises(InputError, match="different task versions") as caught:
            import_results(store, _variant(tmp_path, "c", version, sha))
        assert f"this run is {version} (sha256 {sha[:12]})" in str(caught.value)
    with store.transaction() as session:
        set_hidden(session, first.run_id)
        set_hidden(session, second.run_id)
    moved = import_results(store, _variant(tmp_path, "c", "v0.1.3", "2" * 64))
    assert moved.created
