"""inspect names the tasks whose ground truth failed for want of what the environment lacked."""

from __future__ import annotations

import json
from pathlib import Path

from passbench.analysis.report.analysis import Options, inspect_run
from passbench.analysis.report.envgaps import environment_gaps, gap_of
from passbench.stages.results import load_results
from passbench.stages.results.taskinfo import TaskCatalog

# reasons as passbench recorded them in a BigCodeBench ground truth on a machine without
# network access or NLTK's punkt
REASONS = {
    "BigCodeBench/177": "test_case_sensitive_handling: LookupError: Resource punkt not found.",
    "BigCodeBench/383": (
        "test_case_1: textblob.exceptions.MissingCorpusError: Looks like you are missing some "
        "required data for this feature. (+4 more)"
    ),
    "BigCodeBench/590": (
        "test_dynamic_comparison: urllib.error.URLError: <urlopen error [Errno -3] Temporary "
        "failure in name resolution> (+2 more)"
    ),
    "BigCodeBench/1012": (
        "test_successful_download_and_extraction: AssertionError: 'Download and extraction "
        "successful' not found in 'Error: HTTPSConnectionPool(host='drive.google.com', "
        "port=443): Max retries exceeded with url: /uc?export=download"
    ),
    # library behaviour, not a missing piece: no gap
    "BigCodeBench/111": "test_return_value: AssertionError: Lists differ: [28.0, None] != ...",
}


def test_reasons_name_the_missing_piece() -> None:
    assert gap_of(REASONS["BigCodeBench/177"]) == "NLTK data 'punkt'"
    assert gap_of(REASONS["BigCodeBench/383"]) == "TextBlob's NLTK corpora"
    assert gap_of(REASONS["BigCodeBench/590"]) == "the network"
    assert gap_of(REASONS["BigCodeBench/1012"]) == "the network"
    assert gap_of(REASONS["BigCodeBench/111"]) is None
    failures = {task: {"category": "exception", "reason": r} for task, r in REASONS.items()}
    assert set(environment_gaps(failures)) == set(REASONS) - {"BigCodeBench/111"}


def test_inspect_of_a_ground_truth_says_which_tasks_cannot_pass_here(tmp_path: Path) -> None:
    tasks = {
        task: {"status": "fail", "duration_s": 1.0, "category": "exception", "reason": reason}
        for task, reason in REASONS.items()
    }
    tasks["BigCodeBench/0"] = {"status": "pass", "duration_s": 0.1, "category": None, "reason": ""}
    path = tmp_path / "ground_truth.json"
    path.write_text(
        json.dumps(
            {
                "gt_pass_rate": 1 / 6,
                "failed_tasks": sorted(REASONS),
                "tasks": tasks,
                "passbench": {"benchmark": "bigcodebench", "isolation": "bubblewrap"},
            }
        )
    )
    summary = inspect_run(load_results(path), TaskCatalog(), Options(resamples=100)).summary
    assert summary.environment_gaps == {
        "BigCodeBench/177": "NLTK data 'punkt'",
        "BigCodeBench/383": "TextBlob's NLTK corpora",
        "BigCodeBench/590": "the network",
        "BigCodeBench/1012": "the network",
    }
    (note,) = [note for note in summary.notes if note.startswith("environment gaps")]
    assert "the ground truth of 4 task(s)" in note
    assert "the network: BigCodeBench/590, BigCodeBench/1012" in note
