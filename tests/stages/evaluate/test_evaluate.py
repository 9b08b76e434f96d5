"""The evaluate stage end to end on HumanEval (stdlib only, so no evaluation environment needed):
result files in the official formats, missing tasks, resuming, bad input."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest

from passbench.core.errors import UnknownNameError
from passbench.core.settings import Paths
from passbench.stages.benchmarks.selection import select_tasks
from passbench.stages.evaluate import EvaluateSettings, Evaluator, TimeLimits
from passbench.stages.sandbox.base import Limits

pytestmark = pytest.mark.bwrap

CORRECT_0 = (
    "def has_close_elements(numbers, threshold):\n"
    "    return any(abs(a - b) < threshold for i, a in enumerate(numbers)"
    " for b in numbers[i + 1:])\n"
)
WRONG_0 = "def has_close_elements(numbers, threshold):\n    return False\n"
CORRECT_2 = "def truncate_number(number):\n    return number % 1.0\n"


def write_samples(path: Path, rows: list[dict[str, str]]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


@pytest.fixture
def paths(data_dir: Path, tmp_path: Path) -> Paths:
    return Paths(cache_dir=tmp_path / "cache", data_dir=data_dir)


def run_cli(
    args: list[str], env_extra: dict[str, str], cwd: Path
) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, **env_extra)
    return subprocess.run(
        [sys.executable, "-m", "passbench.apps.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=300,
    )


def test_official_time_limit_derivation() -> None:
    limits = TimeLimits.resolve(EvaluateSettings(), 240.0)
    assert limits.sample_s(3.0) == 241.0
    assert limits.sample_s(300.0) == 301.0
    assert limits.program_s() == 241.0  # the ground truth: no reference time
    fast = TimeLimits.resolve(EvaluateSettings(timeout_per_task_s=5.0, min_time_limit_s=1.0), 240.0)
    assert fast.sample_s(2.0) == 6.0
    assert fast.sample_s(None) == 21.0  # official: 20 s for a failed GT
    assert fast.program_s() == 6.0  # the ground truth: max(per task, min) + 1
    assert fast.sample_s(2.0, has_reference=False) == 5.0  # MultiPL-E: its own limit
    tight = TimeLimits.resolve(EvaluateSettings(timeout_per_task_s=0.5, min_time_limit_s=2.0), 9)
    assert tight.program_s() == 3.0 and tight.sample_s(0.1) == 3.0  # the minimum holds


def test_selection_keeps_order_and_rejects_unknown_ids(paths: Paths) -> None:
    evaluator = Evaluator(EvaluateSettings(benchmark="humaneval", workers=1), paths)
    chosen = select_tasks(evaluator.loaded.tasks, ["HumanEval/3", "HumanEval/1"])
    assert [task.task_id for task in chosen] == ["HumanEval/3", "HumanEval/1"]
    with pytest.raises(UnknownNameError, match="HumanEval/999"):
        select_tasks(evaluator.loaded.tasks, ["HumanEval/999"])


def test_samples_give_official_result_files(paths: Paths, tmp_path: Path) -> None:
    samples = write_samples(
        tmp_path / "model--humaneval.jsonl",
        [
            {"task_id": "HumanEval/0", "solution": CORRECT_0},
            {"task_id": "HumanEval/0", "solution": WRONG_0},
            {"task_id": "HumanEval/2", "solution": CORRECT_2},
            {"task_id": "HumanEval/2", "solution": "def truncate_number(number):\n    return ("},
        ],
    )
    settings = EvaluateSettings(
        benchmark="humaneval",
        task_ids=("HumanEval/0", "HumanEval/1", "HumanEval/2"),
        pass_k=(1, 2, 5),
        workers=2,
        calibrated=False,
    )
    outcome = Evaluator(settings, paths).evaluate_samples(samples, tmp_path / "out")
    assert outcome.missing_tasks == ("HumanEval/1",)
    assert outcome.pass_at_k == {"pass@1": 0.5, "pass@2": 1.0}  # k=5 > n=2 is skipped
    results = json.loads(outcome.eval_results_path.read_text())
    entries = results["eval"]["HumanEval/0"]
    assert [e["status"] for e in entries] == ["pass", "fail"]
    assert set(entries[0]) >= {"task_id", "solution", "status", "details"}
    assert entries[1]["category"] == "assertion_failed"
    assert results["eval"]["HumanEval/2"][1]["category"] == "syntax_error"
    meta = results["passbench"]
    assert meta["missing_tasks"] == ["HumanEval/1"]
    assert meta["isolation"] in {"bubblewrap", "rlimit"}
    assert len(meta["dataset_sha256"]) == 64 and meta["allow_network"] is False
    pass_file = json.loads(outcome.pass_at_k_path.read_text())
    assert pass_file["pass@1"] == 0.5 and pass_file["gt_pass_rate"] == 1.0
    assert pass_file["failed_tasks"] == [] and pass_file["model"] == "model--humaneval"
    assert pass_file["gt_failures"] == {}  # why each failing canonical solution failed
    assert outcome.pass_at_k_path.name == "model--humaneval_pass_at_k.json"


def test_a_rerun_reuses_the_journal(paths: Paths, tmp_path: Path) -> None:
    samples = write_samples(
        tmp_path / "s.jsonl",
        [
            {"task_id": "HumanEval/0", "solution": CORRECT_0},
            {"task_id": "HumanEval/2", "solution": CORRECT_2},
        ],
    )
    settings = EvaluateSettings(
        benchmark="humaneval",
        check_ground_truth=False,
        workers=1,
        task_ids=("HumanEval/0", "HumanEval/2"),
    )
    first = Evaluator(settings, paths).evaluate_samples(samples, None)
    second = Evaluator(settings, paths).evaluate_samples(samples, None)
    assert (first.reused, second.reused) == (0, 2)
    assert first.pass_at_k == second.pass_at_k == {"pass@1": 1.0}
    # a changed sample is re-run, an unchanged one is not
    write_samples(
        samples,
        [
            {"task_id": "HumanEval/0", "solution": WRONG_0},
            {"task_id": "HumanEval/2", "solution": CORRECT_2},
        ],
    )
    third = Evaluator(settings, paths).evaluate_samples(samples, None)
    assert third.reused == 1 and third.pass_at_k == {"pass@1": 0.5}


@pytest.mark.slow
def test_kill_9_then_rerun_resumes_without_losing_or_redoing(
    data_dir: Path, tmp_path: Path
) -> None:
    slow = "import time\ntime.sleep(0.4)\n" + CORRECT_2
    rows = [{"task_id": "HumanEval/2", "solution": slow + f"\n# variant {i}\n"} for i in range(30)]
    samples = write_samples(tmp_path / "s.jsonl", rows)
    env = {"PASSBENCH_DATA_DIR": str(data_dir), "PASSBENCH_CACHE_DIR": str(tmp_path / "cache")}
    args = [
        "evaluate",
        "--benchmark",
        "humaneval",
        "--samples",
        str(samples),
        "--no-gt",
        "--workers",
        "1",
        "--tasks",
        "HumanEval/2",
    ]
    process = subprocess.Popen(
        [sys.executable, "-m", "passbench.apps.cli", *args],
        env=dict(os.environ, **env),
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    journal = tmp_path / ".s.journal.sqlite"
    deadline = time.monotonic() + 120
    done = 0
    while time.monotonic() < deadline and done < 5:
        time.sleep(0.5)
        done = _journal_rows(journal)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    assert 5 <= done < 30, "the run should have been killed part way"
    assert not (tmp_path / "s_eval_results.json").exists()
    killed_at = _journal_rows(journal)
    finished = run_cli(args, env, tmp_path)
    assert finished.returncode == 0, finished.stderr
    assert f"({killed_at} verdicts reused from the journal)" in finished.stdout
    results = json.loads((tmp_path / "s_eval_results.json").read_text())
    assert len(results["eval"]["HumanEval/2"]) == 30
    assert all(entry["status"] == "pass" for entry in results["eval"]["HumanEval/2"])


def _journal_rows(path: Path) -> int:
    import sqlite3

    if not path.exists():
        return 0
    try:
        with sqlite3.connect(path) as db:
            return int(db.execute("SELECT count(*) FROM verdicts").fetchone()[0])
    except sqlite3.OperationalError:
        return 0


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"task_id": "HumanEval/0", "solution": "x"}\n{oops\n', "s.jsonl:2: malformed JSON"),
        ('{"task_id": "Nope/1", "solution": "x"}\n', "s.jsonl:1: field 'task_id': unknown task id"),
    ],
)
def test_bad_samples_exit_2_and_write_nothing(
    data_dir: Path, tmp_path: Path, content: str, message: str
) -> None:
    (tmp_path / "s.jsonl").write_text(content)
    completed = run_cli(
        ["evaluate", "--benchmark", "humaneval", "--samples", str(tmp_path / "s.jsonl")],
        {"PASSBENCH_DATA_DIR": str(data_dir), "PASSBENCH_CACHE_DIR": str(tmp_path / "c")},
        tmp_path,
    )
    assert completed.returncode == 2
    lines = completed.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c", "s.jsonl"] or sorted(
        p.name for p in tmp_path.iterdir()
    ) == ["s.jsonl"]


@pytest.mark.parametrize(
    ("args", "field"),
    [
        (["--benchmark", "nope"], "benchmark"),
        (["--benchmark", "bigcodebench", "--split", "sideways"], "split"),
        (["--benchmark", "bigcodebench", "--subset", "medium"], "subset"),
    ],
)
def test_unknown_names_exit_2(data_dir: Path, tmp_path: Path, args: list[str], field: str) -> None:
    completed = run_cli(
        ["evaluate", *args, "--ground-truth"],
        {"PASSBENCH_DATA_DIR": str(data_dir), "PASSBENCH_CACHE_DIR": str(tmp_path / "c")},
        tmp_path,
    )
    assert completed.returncode == 2, completed.stderr
    assert f"field '{field}'" in completed.stderr
    assert not (tmp_path / "results").exists()


def test_ground_truth_writes_its_file(data_dir: Path, tmp_path: Path) -> None:
    completed = run_cli(
        [
            "evaluate",
            "--benchmark",
            "humaneval",
            "--ground-truth",
            "--id-range",
            "0-5",
            "--output-dir",
            str(tmp_path / "gt"),
        ],
        {"PASSBENCH_DATA_DIR": str(data_dir), "PASSBENCH_CACHE_DIR": str(tmp_path / "c")},
        tmp_path,
    )
    assert completed.returncode == 0, completed.stderr
    assert "Ground-truth pass rate: 1.0000 (5/5)" in completed.stdout
    truth = json.loads((tmp_path / "gt" / "ground_truth.json").read_text())
    assert truth["gt_pass_rate"] == 1.0
    assert list(truth["tasks"]) == [f"HumanEval/{n}" for n in range(5)]
    assert set(truth["tasks"]["HumanEval/0"]) >= {"status", "duration_s", "reason"}
    assert [p.name for p in (tmp_path / "gt").iterdir()] == ["ground_truth.json"]


def test_an_out_of_order_sample_file_keeps_the_generator_s_indices(
    paths: Paths, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Answers to concurrent requests arrive in any order: verdicts join back to the raw
    answers on (task_id, sample_index), in the result file and in `inspect`."""
    from passbench.apps.cli import main

    rows = [
        {"task_id": "HumanEval/0", "sample_index": 2, "solution": WRONG_0, "raw_solution": "r2"},
        {"task_id": "HumanEval/2", "sample_index": 0, "solution": CORRECT_2, "raw_solution": "s"},
        {"task_id": "HumanEval/0", "sample_index": 0, "solution": CORRECT_0, "raw_solution": "r0"},
        {"task_id": "HumanEval/0", "sample_index": 1, "solution": WRONG_0 + "\n# 1\n"},
    ]
    samples = tmp_path / "out-of-order.jsonl"
    samples.write_text("".join(json.dumps(row) + "\n" for row in rows))
    settings = EvaluateSettings(
        benchmark="humaneval",
        task_ids=("HumanEval/0", "HumanEval/2"),
        check_ground_truth=False,
        workers=2,
        calibrated=False,
    )
    outcome = Evaluator(settings, paths).evaluate_samples(samples, tmp_path / "out")
    written = json.loads(outcome.eval_results_path.read_text())["eval"]
    raw = {(row["task_id"], row["sample_index"]): row for row in rows}
    assert [entry["sample_index"] for entry in written["HumanEval/0"]] == [0, 1, 2]
    for task_id, entries in written.items():
        for entry in entries:
            source = raw[(task_id, entry["sample_index"])]
            assert entry["solution"] == source["solution"]
            assert entry.get("raw_solution") == source.get("raw_solution")
    assert [e["status"] for e in written["HumanEval/0"]] == ["pass", "fail", "fail"]

    main(["inspect", str(outcome.eval_results_path), "--task", "HumanEval/0", "--format", "json"])
    shown = json.loads(capsys.readouterr().out)["samples"]
    assert [(s["index"], s["status"]) for s in shown] == [(0, "pass"), (1, "fail"), (2, "fail")]
    assert shown[0]["solution"] == CORRECT_0


def test_a_tiny_time_limit_does_not_leak_into_a_later_default_run(
    paths: Paths, tmp_path: Path
) -> None:
    """The ground-truth cache is keyed by the time limits too: a `--timeout-per-task` run that
    makes a canonical solution time out must not answer a later default run."""
    dataset = tmp_path / "slow.jsonl"
    task = {
        "task_id": "HumanEval/0",
        "prompt": "def slow(x):\n",
        "canonical_solution": "    import time\n    time.sleep(2.0)\n    return x\n",
        "test": "def check(candidate):\n    assert candidate(1) == 1\n",
        "entry_point": "slow",
    }
    dataset.write_text(json.dumps(task) + "\n")
    tight = EvaluateSettings(
        benchmark="humaneval-openai",
        dataset_path=dataset,
        timeout_per_task_s=0.2,
        min_time_limit_s=0.2,  # a limit of 1.2 s
        workers=1,
    )
    outcome = Evaluator(tight, paths).run_ground_truth(tmp_path / "gt")
    assert outcome.ground_truth.tasks["HumanEval/0"]["category"] == "timeout"
    default = EvaluateSettings(benchmark="humaneval-openai", dataset_path=dataset, workers=1)
    truth, _ = Evaluator(default, paths).ground_truth()  # 3 s + 1, as officially
    assert truth.tasks["HumanEval/0"]["status"] == "pass"
    again, _ = Evaluator(tight, paths).ground_truth()  # its own entry is still cached
    assert again.tasks["HumanEval/0"]["category"] == "timeout"


def test_what_samples_see_is_part_of_the_journal_key(
    paths: Paths, tmp_path: Path, visible_tmp_path: Path
) -> None:
    """NLTK data (folder and packages), time limits and network permission change verdicts:
    a change re-runs the samples instead of reusing journaled verdicts."""
    samples = write_samples(
        tmp_path / "s.jsonl", [{"task_id": "HumanEval/2", "solution": CORRECT_2}]
    )
    nltk = visible_tmp_path / "nltk_data"
    (nltk / "corpora" / "stopwords").mkdir(parents=True)
    base = EvaluateSettings(
        benchmark="humaneval",
        task_ids=("HumanEval/2",),
        check_ground_truth=False,
        workers=1,
        nltk_data=nltk,
    )

    def reused(settings: EvaluateSettings) -> int:
        return Evaluator(settings, paths).evaluate_samples(samples, None).reused

    assert reused(base) == 0
    assert reused(base) == 1
    (nltk / "corpora" / "punkt").mkdir()
    assert reused(base) == 0  # another package
    assert reused(base) == 1
    assert reused(replace(base, nltk_data=visible_tmp_path)) == 0  # another folder
    assert reused(replace(base, min_time_limit_s=5.0)) == 0
    assert reused(replace(base, limits=Limits(allow_network=True))) == 0
    assert reused(base) == 1
