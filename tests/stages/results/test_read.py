"""Reading result files: passbench's own and the official evaluator's."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from tests.analysis.report.result_files import OFFICIAL, OURS

from passbench.core.errors import InputError, ResultsError, ResultsFileError
from passbench.core.records import RESULT_SCHEMA_VERSION, ErrorCategory
from passbench.stages.results import load_results, results_stem, sibling_pass_at_k


def write(path: Path, document: object) -> Path:
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def test_official_file_reads_with_its_pass_at_k_sibling() -> None:
    run = load_results(OFFICIAL)
    assert run.origin == "official"
    assert run.name == "demo-model"
    assert run.benchmark == "bigcodebench"  # guessed from the task ids
    assert (run.split, run.subset, run.calibrated) == ("complete", "hard", True)
    assert run.gt_pass_rate == 1.0
    assert run.isolation is None and run.dataset_version is None
    assert len(run.tasks) == 14
    sample = run.tasks["BigCodeBench/37"][0]
    assert sample.status == "fail" and sample.category is None
    assert set(sample.details) == {"test_case_1", "test_case_3"}
    assert run.counts()["BigCodeBench/13"] == (1, 1)


def test_passbench_file_reads_extra_fields_and_block() -> None:
    run = load_results(OURS)
    assert run.origin == "passbench"
    assert run.isolation == "bubblewrap"
    assert run.dataset_version == "v0.1.4"
    assert run.recorded_missing_tasks == ("BigCodeBench/108",)
    assert run.gt_pass_rate == pytest.approx(0.993)
    assert run.gt_failed_tasks == ("BigCodeBench/1006",)
    samples = run.tasks["BigCodeBench/17"]
    assert [s.sample_index for s in samples] == [0, 1, 2, 3, 4]
    assert samples[4].category is ErrorCategory.KILLED
    assert samples[0].reason == "timed out after 120 s" and samples[0].duration_s == 120.0
    assert run.counts()["BigCodeBench/17"] == (5, 1)


def test_naming_the_pass_at_k_file_reads_its_eval_results(tmp_path: Path) -> None:
    run = load_results(OURS.with_name(OURS.name.replace("eval_results", "pass_at_k")))
    assert run.path == OURS
    assert run.pass_at_k_file is not None and run.pass_at_k_file["model"] == "demo-model-v2"


def test_a_missing_sibling_is_fine_but_a_named_one_must_exist(tmp_path: Path) -> None:
    copy = tmp_path / OFFICIAL.name
    shutil.copy(OFFICIAL, copy)
    run = load_results(copy)
    assert run.pass_at_k_file is None and run.gt_pass_rate is None
    assert run.name == results_stem(copy)
    with pytest.raises(ResultsFileError, match="file not found"):
        load_results(copy, tmp_path / "nope_pass_at_k.json")


def test_sample_order_follows_sample_index(tmp_path: Path) -> None:
    path = write(
        tmp_path / "x_eval_results.json",
        {
            "eval": {
                "HumanEval/0": [
                    {
                        "task_id": "HumanEval/0",
                        "solution": "b",
                        "status": "fail",
                        "details": {},
                        "sample_index": 1,
                    },
                    {
                        "task_id": "HumanEval/0",
                        "solution": "a",
                        "status": "pass",
                        "details": {},
                        "sample_index": 0,
                    },
                ]
            }
        },
    )
    run = load_results(path)
    assert [s.solution for s in run.tasks["HumanEval/0"]] == ["a", "b"]
    assert run.benchmark == "humaneval"


def test_sibling_names_follow_the_official_convention() -> None:
    assert sibling_pass_at_k(Path("d/m--bigcodebench-x_eval_results.json")) == Path(
        "d/m--bigcodebench-x_pass_at_k.json"
    )
    assert sibling_pass_at_k(Path("d/eval_results.json")) == Path("d/pass_at_k.json")


@pytest.mark.parametrize(
    ("document", "message", "field"),
    [
        ([], "expected a JSON object", None),
        ({"date": "x"}, "no 'eval' field", "eval"),
        ({"pass@1": 0.5}, "looks like a _pass_at_k.json", "eval"),
        ({"eval": []}, "must map task ids", "eval"),
        ({"eval": {"T/1": {}}}, "must be a list", "eval['T/1']"),
        (
            {"eval": {"T/1": [{"status": "ok"}]}},
            "must be one of pass, fail, timeout",
            "eval['T/1'][0].status",
        ),
        (
            {"eval": {"T/1": [{"status": "pass", "task_id": "T/2"}]}},
            "inside the list",
            "eval['T/1'][0].task_id",
        ),
        (
            {"eval": {"T/1": [{"status": "fail", "category": "oops"}]}},
            "unknown category 'oops'",
            "eval['T/1'][0].category",
        ),
        (
            {"eval": {"T/1": [{"status": "fail", "details": 3}]}},
            "must map test names",
            "eval['T/1'][0].details",
        ),
        (
            {"eval": {"T/1": [{"status": "pass", "duration_s": "1"}]}},
            "must be a number",
            "eval['T/1'][0].duration_s",
        ),
        ({"eval": {}, "passbench": []}, "must be a JSON object", "passbench"),
        (
            {"eval": {"T/1": [{"status": "pass", "sample_index": -1}]}},
            "must be a non-negative integer",
            "eval['T/1'][0].sample_index",
        ),
        (
            {"eval": {"T/1": [{"status": "pass", "sample_index": 3}] * 2}},
            "3 appears twice",
            "eval['T/1'][1].sample_index",
        ),
    ],
)
def test_malformed_files_name_the_field(
    tmp_path: Path, document: object, message: str, field: str | None
) -> None:
    path = write(tmp_path / "bad_eval_results.json", document)
    with pytest.raises(ResultsFileError, match=message) as caught:
        load_results(path)
    assert caught.value.field == field
    assert caught.value.path == str(path)
    assert isinstance(caught.value, InputError) and isinstance(caught.value, ResultsError)
    assert caught.value.exit_code == 2


def test_invalid_json_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "broken_eval_results.json"
    path.write_text('{\n  "eval": {\n    "T/1": [,]\n  }\n}\n', encoding="utf-8")
    with pytest.raises(ResultsFileError, match="not valid JSON") as caught:
        load_results(path)
    assert caught.value.line == 3


def test_missing_file_and_directory(tmp_path: Path) -> None:
    with pytest.raises(ResultsFileError, match="file not found"):
        load_results(tmp_path / "absent_eval_results.json")
    with pytest.raises(ResultsFileError, match="is a directory"):
        load_results(tmp_path)


def test_old_list_details_are_kept(tmp_path: Path) -> None:
    path = write(
        tmp_path / "old_eval_results.json",
        {
            "eval": {
                "T/1": [{"task_id": "T/1", "solution": "", "status": "fail", "details": ["x", "y"]}]
            }
        },
    )
    assert load_results(path).tasks["T/1"][0].details == {"0": "x", "1": "y"}


def test_ground_truth_file_reads_as_one_verdict_per_task(tmp_path: Path) -> None:
    path = write(
        tmp_path / "ground_truth.json",
        {
            "gt_pass_rate": 0.5,
            "failed_tasks": ["BigCodeBench/1"],
            "tasks": {
                "BigCodeBench/0": {
                    "status": "pass",
                    "duration_s": 0.2,
                    "category": None,
                    "reason": "",
                },
                "BigCodeBench/1": {
                    "status": "fail",
                    "duration_s": 1.5,
                    "category": "exception",
                    "reason": "KeyError: 'x'",
                },
            },
            "date": "2026-11-22 17:00",
            "passbench": {"benchmark": "bigcodebench", "isolation": "bubblewrap"},
        },
    )
    run = load_results(path)
    assert run.name == "ground truth" and run.gt_pass_rate == 0.5
    assert run.counts() == {"BigCodeBench/0": (1, 1), "BigCodeBench/1": (1, 0)}
    failing = run.tasks["BigCodeBench/1"][0]
    assert failing.category is ErrorCategory.EXCEPTION and failing.reason == "KeyError: 'x'"
    assert run.isolation == "bubblewrap"


def _ours(tmp_path: Path, schema: object, writer: object = "9.0.0") -> Path:
    meta: dict[str, object] = {"schema_version": schema, "benchmark": "humaneval"}
    if writer is not None:
        meta["passbench_version"] = writer
    return write(
        tmp_path / "new_eval_results.json",
        {
            "eval": {"HumanEval/0": [{"task_id": "HumanEval/0", "status": "pass"}]},
            "passbench": meta,
        },
    )


def test_a_file_from_a_newer_schema_names_the_passbench_that_reads_it(tmp_path: Path) -> None:
    path = _ours(tmp_path, RESULT_SCHEMA_VERSION + 1)
    with pytest.raises(ResultsFileError) as caught:
        load_results(path)
    message = str(caught.value)
    assert caught.value.field == "passbench.schema_version" and "\n" not in message
    assert f"written by passbench 9.0.0 (result schema {RESULT_SCHEMA_VERSION + 1})" in message
    assert message.endswith("upgrade to passbench 9.0.0 or newer")
    with pytest.raises(ResultsFileError, match="upgrade to a newer passbench"):
        load_results(_ours(tmp_path, RESULT_SCHEMA_VERSION + 1, writer=None))


@pytest.mark.parametrize("schema", ["1", 0, True, None])
def test_a_malformed_schema_version_is_an_error(tmp_path: Path, schema: object) -> None:
    with pytest.raises(ResultsFileError, match="must be a positive integer"):
        load_results(_ours(tmp_path, schema))


def test_this_schema_and_blocks_without_one_read(tmp_path: Path) -> None:
    assert load_results(_ours(tmp_path, RESULT_SCHEMA_VERSION)).origin == "passbench"
    path = write(
        tmp_path / "old_eval_results.json",
        {"eval": {}, "passbench": {"benchmark": "humaneval"}},
    )
    assert load_results(path).meta == {"benchmark": "humaneval"}


def test_a_newer_pass_at_k_sibling_is_refused_too(tmp_path: Path) -> None:
    path = write(tmp_path / "x_eval_results.json", {"eval": {}})
    write(
        tmp_path / "x_pass_at_k.json",
        {"pass@1": 0.5, "passbench": {"schema_version": RESULT_SCHEMA_VERSION + 1}},
    )
    with pytest.raises(ResultsFileError, match="result schema") as caught:
        load_results(path)
    assert caught.value.path == str(tmp_path / "x_pass_at_k.json")
