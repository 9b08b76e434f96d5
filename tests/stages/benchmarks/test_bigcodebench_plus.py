"""BigCodeBench+ on the real release: loading, its Hard subset, its download, the field-by-field
comparison with BigCodeBench v0.1.4, and real tasks through the real sandbox whose verdicts
the correction changes (shown side by side by `passbench corrections`)."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.stages.benchmarks.conftest import FileServer
from tests.stages.sandbox.helpers import EVALENV_PYTHON

from passbench.analysis.report.corrections import (
    FieldChange,
    diff_task_sets,
    field_changes,
    pair_runs,
)
from passbench.core.errors import DatasetError, InputError
from passbench.stages.benchmarks import DataSettings, get_benchmark
from passbench.stages.benchmarks.bigcodebench import BigCodeBenchPlus, parse_plus_tasks
from passbench.stages.results import load_results

PLUS_FILE = "bigcodebench/BigCodeBench-Plus-v1.0.2.jsonl.gz"
EXCLUDED = ("BigCodeBench/354", "BigCodeBench/501", "BigCodeBench/814", "BigCodeBench/1040")


@pytest.fixture(scope="module")
def plus_tasks(data_dir: Path) -> dict[str, Any]:
    bench = BigCodeBenchPlus()
    return {
        task.task_id: task
        for task in bench.load(data=DataSettings(data_dir=data_dir, download=False))
    }


@pytest.fixture(scope="module")
def original_tasks(data_dir: Path) -> dict[str, Any]:
    loaded = get_benchmark("bigcodebench").load(
        "v0.1.4", data=DataSettings(data_dir=data_dir, download=False)
    )
    return {task.task_id: task for task in loaded}


# ---- the release -------------------------------------------------------------------------


def test_full_and_hard(offline: DataSettings, plus_tasks: dict[str, Any], data_dir: Path) -> None:
    bench = get_benchmark("bigcodebench-plus")
    assert len(plus_tasks) == 1136 == bench.info.subset_sizes["full"]
    assert not set(EXCLUDED) & set(plus_tasks)
    hard = bench.load(subset="hard", data=offline)
    hard_ids = json.loads((data_dir / "bigcodebench" / "hard-task-ids.json").read_text())
    # BigCodeBench-Hard's ids that the correction kept: it excluded 501 and 1040
    assert {t.task_id for t in hard} == set(hard_ids["task_ids"]) - set(EXCLUDED)
    assert len(hard) == 146 == bench.info.subset_sizes["hard"]
    assert (bench.info.splits, bench.info.env_name, bench.info.default_timeout_s) == (
        ("complete", "instruct"),
        "bigcodebench",
        240.0,
    )


def test_rows_are_flattened_and_graded_as_bigcodebench(plus_tasks: dict[str, Any]) -> None:
    task = plus_tasks["BigCodeBench/308"]  # libs stored as a JSON list (elsewhere as text)
    assert task.libs == ("pandas", "random", "statistics")
    assert plus_tasks["BigCodeBench/0"].libs == ("random", "itertools")  # text of a list
    assert task.benchmark == "bigcodebench-plus"
    assert set(task.metadata) == {"revision", "revision_id"}
    bench, original = get_benchmark("bigcodebench-plus"), get_benchmark("bigcodebench")
    # the same programs as BigCodeBench's (same joins, unittest class, preloads)
    program = bench.program(task, "x = 1", key="k", timeout_s=10.0)
    same = original.program(task, "x = 1", key="k", timeout_s=10.0)
    assert program == same
    assert program.source == "x = 1\n" + task.test and program.style == "unittest"
    assert bench.canonical_code(task) == task.prompts["complete"] + "\n" + task.canonical_solution
    assert bench.calibrated_code(task, "s") == task.code_prompt + "\n    pass\ns"


def test_the_declared_exclusions_are_the_tasks_it_lacks(
    plus_tasks: dict[str, Any], original_tasks: dict[str, Any]
) -> None:
    original = get_benchmark("bigcodebench-plus").corrects("v1.0.2")
    assert original is not None
    assert (original.benchmark, original.version) == ("bigcodebench", "v0.1.4")
    assert set(original.excluded) == set(original_tasks) - set(plus_tasks) == set(EXCLUDED)
    assert get_benchmark("bigcodebench").corrects("v0.1.4") is None


def test_bad_rows_name_the_nested_field(tmp_path: Path, data_dir: Path) -> None:
    lines = gzip.decompress((data_dir / PLUS_FILE).read_bytes()).splitlines()
    rows = [json.loads(line) for line in lines[:2]]
    del rows[1]["content"]["test"]
    path = tmp_path / "plus.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    with pytest.raises(DatasetError, match=r"plus\.jsonl:2: field 'content\.test': missing"):
        parse_plus_tasks(path)
    rows[1]["status"] = "excluded"  # an excluded row is left out, whatever it lacks
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    assert [t.task_id for t in parse_plus_tasks(path)] == [rows[0]["task_id"]]


def test_download_checks_the_published_text(
    file_server: FileServer, data_dir: Path, tmp_path: Path
) -> None:
    """The public build is plain JSONL at a pinned commit: the download is kept (gzipped) only
    when its text has the published sha256."""
    bench = get_benchmark("bigcodebench-plus")
    url_path = bench.data_file("v1.0.2").url_path
    text = gzip.decompress((data_dir / PLUS_FILE).read_bytes())
    file_server.put(url_path, text.replace(b"task_func", b"task_fun", 1))
    settings = DataSettings(cache_dir=tmp_path / "cache", mirror=file_server.url)
    with pytest.raises(DatasetError, match="sha256"):
        bench.load(data=settings)
    file_server.put(url_path, text)
    loaded = bench.load(data=settings)
    assert loaded.source.source == "download" and len(loaded) == 1136
    assert gzip.decompress(loaded.source.path.read_bytes()) == text


# ---- the comparison with the original release ---------------------------------------------


def test_fields_compared_one_by_one(
    plus_tasks: dict[str, Any], original_tasks: dict[str, Any]
) -> None:
    def changes(task_id: str) -> tuple[FieldChange, ...]:
        return field_changes(original_tasks[task_id], plus_tasks[task_id])

    # the code prompt lost its trailing newline; the docstring now gives the real default
    assert changes("BigCodeBench/0") == (
        FieldChange("code_prompt", cosmetic=True),
        FieldChange("complete_prompt"),
    )
    assert all(change.cosmetic for change in changes("BigCodeBench/170"))
    assert changes("BigCodeBench/3") == ()
    # 1099's tests and reference now lower-case the words
    assert [c.field for c in changes("BigCodeBench/1099")][:2] == ["test", "canonical_solution"]
    assert FieldChange("libs", cosmetic=True) in changes("BigCodeBench/308")
    assert str(FieldChange("libs", cosmetic=True)) == "libs (order only)"
    diff = diff_task_sets(
        list(original_tasks.values()), list(plus_tasks.values()), ("v0.1.4", "plus")
    )
    assert diff.excluded == EXCLUDED and diff.added == ()
    tested = {task for task, fields in diff.changed.items() if fields[0].field == "test"}
    # PROVENANCE.md: 807 tasks differ in some field, 532 in their tests
    assert (len(diff.changed), len(tested)) == (807, 532)


# ---- real tasks through the real sandbox ----------------------------------------------------

#: The original canonical solutions fail the corrected tests (the correction changed the
#: spec), and 1012's original test needs the network, which the corrected one mocks.
ORIGINAL_FAILS_CORRECTED = ("BigCodeBench/120", "BigCodeBench/851", "BigCodeBench/1099")
CORRECTED_MOCKS_THE_NETWORK = "BigCodeBench/1012"
UNCHANGED = "BigCodeBench/3"  # the correction left every field as it was


def _cli(args: list[str], cache: Path, data_dir: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PASSBENCH_DATA_DIR=str(data_dir), PASSBENCH_CACHE_DIR=str(cache))
    return subprocess.run(
        [sys.executable, "-m", "passbench.apps.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )


@pytest.fixture(scope="module")
def side_by_side(
    tmp_path_factory: pytest.TempPathFactory, data_dir: Path, original_tasks: dict[str, Any]
) -> tuple[Path, dict[str, Any], str]:
    """The original canonical solutions of a few tasks (one the correction excluded) as
    samples, evaluated on both releases by `passbench corrections --samples`."""
    if not EVALENV_PYTHON.exists():
        pytest.skip(f"no evaluation env at {EVALENV_PYTHON}")
    folder = tmp_path_factory.mktemp("corrections")
    ids = [*ORIGINAL_FAILS_CORRECTED, CORRECTED_MOCKS_THE_NETWORK, UNCHANGED, EXCLUDED[0]]
    samples = folder / "references.jsonl"
    samples.write_text(
        "".join(
            json.dumps(
                {
                    "task_id": t,
                    "solution": get_benchmark("bigcodebench").canonical_code(original_tasks[t]),
                }
            )
            + "\n"
            for t in ids
        )
    )
    args = ["corrections", "--samples", str(samples), "-b", "bigcodebench-plus"]
    args += ["--tasks", ",".join(ids), "--output-dir", str(folder / "out"), "--format", "json"]
    args += ["--no-gt"]  # the references' own verdicts are the samples' here
    done = _cli(args, folder / "cache", data_dir)
    assert done.returncode == 0, done.stderr[-3000:]
    text = _cli(
        [
            "corrections",
            str(folder / "out" / "bigcodebench-plus"),
            str(folder / "out" / "bigcodebench"),
        ],
        folder / "cache",
        data_dir,
    )
    assert text.returncode == 0, text.stderr[-3000:]
    return folder / "out", json.loads(done.stdout), text.stdout


@pytest.mark.bwrap
@pytest.mark.evalenv
def test_the_correction_flips_the_original_references(
    side_by_side: tuple[Path, dict[str, Any], str],
) -> None:
    out, _, _ = side_by_side
    official = load_results(out / "bigcodebench" / "references_eval_results.json")
    corrected = load_results(out / "bigcodebench-plus" / "references_eval_results.json")
    verdict = {t: s[0].status for t, s in corrected.tasks.items()}
    for task in ORIGINAL_FAILS_CORRECTED:
        assert official.tasks[task][0].status == "pass", task
        assert verdict[task] == "fail", task
    assert verdict[CORRECTED_MOCKS_THE_NETWORK] == "pass"  # offline too: the test mocks it
    assert verdict[UNCHANGED] == official.tasks[UNCHANGED][0].status == "pass"
    # the excluded task ran on the original only, and the corrected run says it skipped it
    assert EXCLUDED[0] in official.tasks and EXCLUDED[0] not in corrected.tasks
    assert corrected.meta["excluded_tasks"] == [EXCLUDED[0]]
    assert corrected.benchmark == "bigcodebench-plus" and corrected.dataset_version == "v1.0.2"


@pytest.mark.bwrap
@pytest.mark.evalenv
def test_the_report_shows_both_scores_the_changes_and_why(
    side_by_side: tuple[Path, dict[str, Any], str],
) -> None:
    out, report, text = side_by_side
    official = load_results(out / "bigcodebench" / "references_eval_results.json")
    passed = {t for t, s in official.tasks.items() if s[0].passed}
    assert report["original"] == "bigcodebench v0.1.4"
    assert report["corrected"] == "bigcodebench-plus v1.0.2"
    assert report["official_tasks"] == 6 and report["corrected_tasks"] == 5
    assert report["official_pass_at_1"] == pytest.approx(len(passed) / 6)
    # 3 of 5 fail on the corrected tests; 1012 and the unchanged task pass
    assert report["corrected_pass_at_1"] == pytest.approx(2 / 5)
    changed = {row["task_id"]: row for row in report["changed_tasks"]}
    for task in ORIGINAL_FAILS_CORRECTED:
        assert changed[task]["official"] == 1.0 and changed[task]["corrected"] == 0.0
        assert changed[task]["fields"][0] == "test"
    assert UNCHANGED not in changed
    assert report["excluded_tasks"] == [{"task_id": EXCLUDED[0], "official": 1.0}]
    assert report["newly_failing"] == 3
    # the same runs given as folders, in the other order, as text
    assert "bigcodebench-plus v1.0.2 (corrected)" in text
    assert f"Excluded by the correction, not scored: {EXCLUDED[0]} (pass officially)." in text
    line = next(row for row in text.splitlines() if row.startswith("BigCodeBench/1099 "))
    assert line.split()[1:4] == ["pass", "fail", "test,"]


def test_two_runs_of_one_release_are_refused(tmp_path: Path) -> None:
    def run(name: str, benchmark: str, version: str, split: str = "complete") -> Any:
        path = tmp_path / f"{name}_eval_results.json"
        block = {"benchmark": benchmark, "dataset_version": version, "split": split}
        sample = {"task_id": "BigCodeBench/1", "solution": "", "status": "pass", "details": {}}
        path.write_text(json.dumps({"eval": {"BigCodeBench/1": [sample]}, "passbench": block}))
        return load_results(path)

    a, b = run("a", "bigcodebench", "v0.1.4"), run("b", "bigcodebench", "v0.1.4")
    with pytest.raises(InputError, match="corrected release"):
        pair_runs(a, b)
    with pytest.raises(InputError, match="differ in split"):
        pair_runs(a, run("c", "bigcodebench-plus", "v1.0.2", "instruct"))
    plus = run("d", "bigcodebench-plus", "v1.0.2")
    pair = pair_runs(plus, a)  # either order
    assert (pair.original_run, pair.corrected_run, pair.corrected_version) == (a, plus, "v1.0.2")
    # the original run's own version is the one its fields are compared with
    assert pair_runs(run("e", "bigcodebench", "v0.1.5"), plus).original.version == "v0.1.5"
