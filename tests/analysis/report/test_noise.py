"""`passbench compare` reports run-to-run noise apart from the difference between two models:
runs evaluated for real (HumanEval programs in the sandbox) with epochs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from passbench.apps.cli import cli
from passbench.core.settings import Paths
from passbench.core.stability import t_quantile
from passbench.stages.evaluate import EvaluateSettings, Evaluator

pytestmark = pytest.mark.bwrap

RIGHT_0 = (
    "def has_close_elements(numbers, threshold):\n"
    "    return any(abs(a - b) < threshold for i, a in enumerate(numbers)"
    " for b in numbers[i + 1:])\n"
)
WRONG_0 = "def has_close_elements(numbers, threshold):\n    return False\n"
RIGHT_2 = "def truncate_number(number):\n    return number % 1.0\n"
EPOCHS = 4


def _evaluate(paths: Paths, folder: Path, model: str, task_0: list[str], epochs: int) -> Path:
    """A run of `model`: HumanEval/0 answered `task_0[e]` in epoch e, HumanEval/2 right."""
    rows = []
    for epoch, code in enumerate(task_0):
        rows.append({"task_id": "HumanEval/0", "solution": code, "sample_index": epoch})
        rows.append({"task_id": "HumanEval/2", "solution": RIGHT_2, "sample_index": epoch})
    samples = folder / f"{model}--humaneval-openai-complete.jsonl"
    samples.write_text("".join(json.dumps(row) + "\n" for row in rows))
    settings = EvaluateSettings(
        benchmark="humaneval-openai",
        task_ids=("HumanEval/0", "HumanEval/2"),
        workers=2,
        check_ground_truth=False,
        pass_k=(1,),
        epochs=epochs,
    )
    return Evaluator(settings, paths).evaluate_samples(samples, folder).eval_results_path


def test_compare_separates_run_to_run_noise_from_the_difference(
    data_dir: Path, tmp_path: Path
) -> None:
    paths = Paths(cache_dir=tmp_path / "cache", data_dir=data_dir)
    steady = _evaluate(paths, tmp_path, "steady", [RIGHT_0] * EPOCHS, EPOCHS)
    # per epoch 0.5, 0.5, 1, 1: 0.25 below `steady` on average, but it varies by as much
    wobbly = _evaluate(paths, tmp_path, "wobbly", [WRONG_0, WRONG_0, RIGHT_0, RIGHT_0], EPOCHS)
    # 0.5 in every epoch: 0.5 below `steady`, with no run-to-run noise in either
    worse = _evaluate(paths, tmp_path, "worse", [WRONG_0] * EPOCHS, EPOCHS)
    single = _evaluate(paths, tmp_path, "single", [WRONG_0], 1)

    result = CliRunner().invoke(
        cli,
        ["compare", str(steady), str(wobbly), str(worse), str(single), "--format", "json"],
        env={"PASSBENCH_DATA_DIR": str(data_dir), "PASSBENCH_CACHE_DIR": str(tmp_path / "c")},
    )
    assert result.exit_code == 0, result.output
    pairs = {
        (pair["a"], pair["b"]): pair["run_to_run_noise"]
        for pair in json.loads(result.stdout)["pairs"]
    }
    noisy = pairs[("steady", "wobbly")]
    stderr = 0.5 / (3**0.5) / 2  # sd of (0.5, 0.5, 1, 1) over sqrt(4)
    assert noisy["diff"] == pytest.approx(-0.25)
    assert noisy["generation_noise"] == pytest.approx(t_quantile(0.95, 3) * stderr)
    assert noisy["exceeds_generation_noise"] is False
    assert "is within the run-to-run noise" in noisy["summary"]

    clear = pairs[("steady", "worse")]
    assert clear["diff"] == pytest.approx(-0.5) and clear["exceeds_generation_noise"] is True
    # one epoch in `single`: `worse`'s epochs (no spread) stand for both
    assert pairs[("worse", "single")]["generation_noise"] == 0.0
    # without --runs in either run, the execution noise is unknown, never guessed as zero
    assert pairs[("wobbly", "single")]["execution_noise"] is None
    assert pairs[("wobbly", "single")]["exceeds_execution_noise"] is None
