"""Result files the evaluator really writes for the run-to-run statistics (HumanEval-style
programs executed in the sandbox): a ground-truth stability run that quarantines an unstable
reference, then an evaluation with epochs whose samples are each executed several times."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from passbench.core.settings import Paths
from passbench.stages.evaluate import EvaluateSettings, Evaluator

IDENTITY = "def f(x):\n    return x\n"
WRONG = "def f(x):\n    return x + 1\n"
# passes on a fair coin flip drawn from the kernel in every forked sample process
COIN = "import os\nHEADS = os.urandom(1)[0] < 128\ndef f(x):\n    assert HEADS\n    return x\n"
#: P(12 fair flips all agree) = 2 / 4096
RUNS = 12
EPOCHS = 3
TASKS = ("HumanEval/0", "HumanEval/1", "HumanEval/2")


def _write(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def measure(data_dir: Path, folder: Path) -> dict[str, Any]:
    """A ground-truth stability run that finds HumanEval/1's reference unstable, then one
    evaluation of three epochs executed twelve times: HumanEval/0 has a coin-flip sample in
    epoch 1, a right one in epoch 2 and a wrong one in epoch 3; HumanEval/2 is right in all."""
    paths = Paths(cache_dir=folder / "cache", data_dir=data_dir)
    dataset = _write(
        folder / "tasks.jsonl",
        [
            {
                "task_id": task_id,
                "prompt": "def f(x):\n",
                "canonical_solution": body,
                "test": "def check(candidate):\n    assert candidate(1) == 1\n",
                "entry_point": "f",
            }
            for task_id, body in zip(
                TASKS,
                (
                    "    return x\n",
                    "    import os\n    assert os.urandom(1)[0] < 128\n    return x\n",
                    "    return x\n",
                ),
                strict=True,
            )
        ],
    )
    common: dict[str, Any] = {
        "benchmark": "humaneval-openai",
        "dataset_path": dataset,
        "workers": 2,
        "pass_k": (1,),
    }
    truth = Evaluator(EvaluateSettings(**common, runs=RUNS), paths).run_ground_truth(folder / "gt")
    assert truth.stability is not None
    answers = {"HumanEval/0": (COIN, IDENTITY, WRONG), "HumanEval/2": (IDENTITY,) * EPOCHS}
    answers["HumanEval/1"] = (IDENTITY,) * EPOCHS
    samples = _write(
        folder / "model--humaneval-openai-complete.jsonl",
        [
            {"task_id": task_id, "solution": code, "sample_index": epoch}
            for task_id in TASKS
            for epoch, code in enumerate(answers[task_id])
        ],
    )
    settings = EvaluateSettings(**common, runs=RUNS, epochs=EPOCHS)
    outcome = Evaluator(settings, paths).evaluate_samples(samples, folder / "out")
    return {
        "folder": folder,
        "outcome": outcome,
        "truth": truth.stability,
        "pass_file": json.loads(outcome.pass_at_k_path.read_text()),
        "eval": json.loads(outcome.eval_results_path.read_text())["eval"],
    }
