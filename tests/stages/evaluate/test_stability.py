"""`evaluate --runs N` and `--epochs N` on real HumanEval programs in the sandbox: a sample that
passes on a coin flip is flaky, a steady one never is; an unstable reference is quarantined;
pass@1 across epochs gets its interval."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from click.testing import CliRunner

from passbench.apps.cli import cli
from passbench.core.settings import Paths
from passbench.core.stability import t_quantile
from passbench.stages.evaluate import EvaluateSettings, Evaluator

pytestmark = pytest.mark.bwrap

CORRECT_0 = (
    "def has_close_elements(numbers, threshold):\n"
    "    return any(abs(a - b) < threshold for i, a in enumerate(numbers)"
    " for b in numbers[i + 1:])\n"
)
WRONG_0 = "def has_close_elements(numbers, threshold):\n    return False\n"
CORRECT_2 = "def truncate_number(number):\n    return number % 1.0\n"
# passes on a fair coin flip, tossed once per process (the tests call the function three
# times) from the kernel's randomness, fresh in every forked sample process
COIN_2 = (
    "import os\n"
    "HEADS = os.urandom(1)[0] < 128\n"
    "def truncate_number(number):\n"
    "    assert HEADS\n"
    "    return number % 1.0\n"
)
#: P(12 fair flips all agree) = 2 / 4096: the flaky sample shows itself in practice always
RUNS = 12


def _write(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


@pytest.fixture
def paths(data_dir: Path, tmp_path: Path) -> Paths:
    return Paths(cache_dir=tmp_path / "cache", data_dir=data_dir)


def test_a_coin_flip_sample_is_flaky_and_steady_ones_never_are(
    paths: Paths, tmp_path: Path
) -> None:
    samples = _write(
        tmp_path / "model--humaneval-openai-complete.jsonl",
        [
            {"task_id": "HumanEval/0", "solution": CORRECT_0, "sample_index": 0},
            {"task_id": "HumanEval/0", "solution": WRONG_0, "sample_index": 1},
            {"task_id": "HumanEval/2", "solution": COIN_2, "sample_index": 0},
            {"task_id": "HumanEval/2", "solution": CORRECT_2, "sample_index": 1},
        ],
    )
    settings = EvaluateSettings(
        benchmark="humaneval-openai",
        task_ids=("HumanEval/0", "HumanEval/2"),
        pass_k=(1,),
        workers=2,
        check_ground_truth=False,
        runs=RUNS,
    )
    outcome = Evaluator(settings, paths).evaluate_samples(samples, tmp_path / "out")
    block = outcome.stability
    assert block is not None and block["runs"] == RUNS and block["counted_run"] == "first"
    assert [(s["task_id"], s["sample_index"]) for s in block["flaky_samples"]] == [
        ("HumanEval/2", 0)
    ]
    counts = block["flaky_samples"][0]["verdicts"]
    assert sum(counts.values()) == RUNS and 0 < counts["pass"] < RUNS
    assert block["flaky_rate"] == 0.25 and block["flaky_tasks"] == ["HumanEval/2"]
    assert (block["pass@1_if_flaky_fail"], block["pass@1_if_flaky_pass"]) == (0.5, 0.75)

    document = json.loads(outcome.eval_results_path.read_text())["eval"]
    steady = document["HumanEval/0"]
    assert [e["runs"] for e in steady] == [{"pass": RUNS}, {"fail": RUNS}]
    assert [e["flaky"] for e in steady] == [False, False]
    coin = document["HumanEval/2"][0]
    assert coin["flaky"] is True and coin["runs"] == counts
    # pass@k counts the first run's verdicts, as a plain evaluation does
    first_coin = 1.0 if coin["status"] == "pass" else 0.0
    assert outcome.pass_at_k["pass@1"] == pytest.approx((0.5 + (first_coin + 1.0) / 2) / 2)
    pass_file = json.loads(outcome.pass_at_k_path.read_text())
    assert pass_file["stability"] == block
    # every run had its own journal: a rerun resumes all of them without executing anything
    again = Evaluator(settings, paths).evaluate_samples(samples, tmp_path / "out")
    assert again.stability == block

    # inspect lists them with their counts, and gives the flaky rate
    table = _inspect(outcome.eval_results_path, "table")
    assert "Flaky samples over 12 runs: 1 of 4 (flaky rate 25.0%" in table
    assert f"│ HumanEval/2 │ 0      │ {_counts(counts)}" in table
    shown = json.loads(_inspect(outcome.eval_results_path, "json"))
    assert shown["stability"]["flaky_samples"] == block["flaky_samples"]
    assert shown["task_set"]["benchmark"] == "humaneval-openai"
    assert shown["task_set"]["files"][0]["name"] == "HumanEval.jsonl.gz"
    assert "| HumanEval/2 | 0 |" in _inspect(outcome.eval_results_path, "markdown")


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{status} {n}" for status, n in counts.items())


def _inspect(path: Path, output_format: str) -> str:
    result = CliRunner().invoke(
        cli, ["inspect", str(path), "--format", output_format], env={"COLUMNS": "200"}
    )
    assert result.exit_code == 0, result.output
    return result.stdout


def test_ground_truth_runs_quarantine_an_unstable_reference(paths: Paths, tmp_path: Path) -> None:
    dataset = _write(
        tmp_path / "tasks.jsonl",
        [
            {
                "task_id": f"HumanEval/{n}",
                "prompt": "def f(x):\n",
                "canonical_solution": body,
                "test": "def check(candidate):\n    assert candidate(1) == 1\n",
                "entry_point": "f",
            }
            for n, body in enumerate(
                (
                    "    return x\n",
                    "    import os\n    assert os.urandom(1)[0] < 128\n    return x\n",
                    "    return x + 1\n",  # fails every run: failing, not unstable
                )
            )
        ],
    )
    settings = EvaluateSettings(
        benchmark="humaneval-openai", dataset_path=dataset, workers=2, runs=RUNS, pass_k=(1,)
    )
    truth = Evaluator(settings, paths).run_ground_truth(tmp_path / "gt")
    stability = truth.stability
    assert stability is not None and list(stability["unstable_tasks"]) == ["HumanEval/1"]
    assert stability["quarantined_tasks"] == ["HumanEval/1"]
    assert stability["failing_in_every_run"] == ["HumanEval/2"]
    assert stability["stable_pass_rate"] == 0.5  # HumanEval/0 of the two stable tasks
    assert "2 of 3 tasks" in stability["denominator"]
    written = json.loads(truth.path.read_text())
    assert written["stability"] == stability

    # a later evaluation of samples on this setup leaves the unstable task out, and says so
    samples = _write(
        tmp_path / "model.jsonl",
        [{"task_id": f"HumanEval/{n}", "solution": "def f(x):\n    return x\n"} for n in range(3)],
    )
    plain = EvaluateSettings(
        benchmark="humaneval-openai", dataset_path=dataset, workers=2, pass_k=(1,)
    )
    outcome = Evaluator(plain, paths).evaluate_samples(samples, tmp_path / "out")
    assert list(outcome.quarantined) == ["HumanEval/1"]
    assert outcome.quarantined["HumanEval/1"]["category"] == "unstable_reference"
    assert outcome.n_tasks == 2 and outcome.pass_at_k["pass@1"] == 1.0
    pass_file = json.loads(outcome.pass_at_k_path.read_text())
    assert pass_file["score_denominator"].startswith("2 tasks")
    assert list(pass_file["quarantined_tasks"]) == ["HumanEval/1"]


def test_epochs_give_pass_at_1_per_epoch_and_an_interval(paths: Paths, tmp_path: Path) -> None:
    rows: list[dict[str, object]] = []
    for epoch, first in enumerate((CORRECT_0, WRONG_0, CORRECT_0)):
        rows.append({"task_id": "HumanEval/0", "solution": first, "sample_index": epoch})
        rows.append({"task_id": "HumanEval/2", "solution": CORRECT_2, "sample_index": epoch})
    samples = _write(tmp_path / "model.jsonl", rows)
    settings = EvaluateSettings(
        benchmark="humaneval-openai",
        task_ids=("HumanEval/0", "HumanEval/2"),
        workers=2,
        check_ground_truth=False,
        pass_k=(1,),
        epochs=3,
    )
    outcome = Evaluator(settings, paths).evaluate_samples(samples, tmp_path / "out")
    epochs = outcome.epochs
    assert epochs is not None and epochs["epochs"] == 3 and epochs["samples_per_epoch"] == 1
    assert epochs["pass@1_per_epoch"] == [1.0, 0.5, 1.0]
    mean = 2.5 / 3
    assert epochs["pass@1_mean"] == pytest.approx(mean)
    assert epochs["pass@1_mean"] == pytest.approx(outcome.pass_at_k["pass@1"])
    stderr = math.sqrt(((1 - mean) ** 2 * 2 + (0.5 - mean) ** 2) / 2) / math.sqrt(3)
    assert epochs["pass@1_stderr"] == pytest.approx(stderr)
    half = t_quantile(0.95, 2) * stderr
    # three epochs make a wide t band: it is clipped where pass@1 ends
    assert mean + half > 1
    assert epochs["pass@1_ci"] == pytest.approx([mean - half, 1.0])
    assert json.loads(outcome.pass_at_k_path.read_text())["epochs"] == epochs


def test_t_quantiles_match_the_tables() -> None:
    assert t_quantile(0.95, 1) == pytest.approx(12.706, abs=1e-3)
    assert t_quantile(0.95, 4) == pytest.approx(2.776, abs=1e-3)
    assert t_quantile(0.99, 10) == pytest.approx(3.169, abs=1e-3)
