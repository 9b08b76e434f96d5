"""HumanEval and HumanEval+ evaluated end to end as EvalPlus evaluates them: expected outputs
computed once in the sandbox, each input under its own limit, outputs judged on the host.

Every verdict here goes through the real sandbox (bubblewrap), the worker and the judge."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from passbench.core.progress import NullProgress
from passbench.core.settings import Paths
from passbench.stages.evaluate import EvaluateSettings, Evaluator

pytestmark = pytest.mark.bwrap

TASKS = ("HumanEval/0", "HumanEval/2", "HumanEval/32", "HumanEval/38", "HumanEval/45")


class Recorder(NullProgress):
    """Keeps what the evaluator says it is doing."""

    def __init__(self) -> None:
        self.infos: list[str] = []

    def advance(self, n: int = 1, info: str = "") -> None:
        self.infos.append(info)


@pytest.fixture(scope="module")
def paths(data_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Paths:
    return Paths(cache_dir=tmp_path_factory.mktemp("cache"), data_dir=data_dir)


def evaluate(
    paths: Paths,
    tmp_path: Path,
    rows: list[dict[str, Any]],
    benchmark: str = "humanevalplus",
    **settings: Any,
) -> list[dict[str, Any]]:
    """The result entries (in sample order) of evaluating `rows` on TASKS."""
    samples = tmp_path / "samples.jsonl"
    samples.write_text("".join(json.dumps(row) + "\n" for row in rows))
    ids = tuple(dict.fromkeys(row["task_id"] for row in rows))
    evaluator = Evaluator(
        EvaluateSettings(benchmark=benchmark, task_ids=ids, workers=2, **settings), paths
    )
    outcome = evaluator.evaluate_samples(samples, tmp_path / "out")
    document = json.loads(outcome.eval_results_path.read_text())
    return [entry for task_id in ids for entry in document["eval"][task_id]]


def completion(task_id: str, body: str) -> dict[str, Any]:
    return {"task_id": task_id, "completion": body}


def test_canonical_solutions_pass_and_results_carry_evalplus_fields(
    paths: Paths, tmp_path: Path, data_dir: Path
) -> None:
    tasks = {
        json.loads(line)["task_id"]: json.loads(line)
        for line in __import__("gzip").open(data_dir / "humaneval/HumanEvalPlus.jsonl.gz", "rt")
    }
    rows = [
        {"task_id": t, "solution": tasks[t]["prompt"] + tasks[t]["canonical_solution"]}
        for t in TASKS
    ]
    entries = evaluate(paths, tmp_path, rows)
    # EvalPlus 0.3.1 fails every HumanEval/32 sample, its canonical solution included, and
    # passbench mirrors it (judge._as_evalplus_counts_oracle_inputs)
    expected = ["fail" if t == "HumanEval/32" else "pass" for t in TASKS]
    assert [e["status"] for e in entries] == expected
    assert [e["base_status"] for e in entries] == expected
    assert [e["plus_status"] for e in entries] == expected
    assert all(e["base_fail_tests"] == e["plus_fail_tests"] == [] for e in entries)
    document = json.loads((tmp_path / "out" / "samples_eval_results.json").read_text())
    assert document["hash"] == "fe585eb4df8c88d844eeb463ea4d0302"  # as EvalPlus writes it
    assert document["passbench"]["gt_time_limit_factor"] == 4.0


def test_a_wrong_answer_names_the_failing_input(paths: Paths, tmp_path: Path) -> None:
    (entry,) = evaluate(paths, tmp_path, [completion("HumanEval/0", "    return True\n")])
    assert entry["status"] == "fail" and entry["category"] == "assertion_failed"
    assert entry["reason"] == "base input 1: expected False, got True"
    assert entry["base_status"] == "fail" and entry["plus_status"] == "fail"
    assert entry["base_fail_tests"] == [[[1.0, 2.0, 3.9, 4.0, 5.0, 2.2], 0.05]]


def test_plus_inputs_catch_what_base_inputs_miss(paths: Paths, tmp_path: Path) -> None:
    # right on every base input (at most six numbers), wrong on longer plus inputs
    body = (
        "    if len(numbers) > 6:\n        return False\n"
        "    return any(abs(a - b) < threshold for i, a in enumerate(numbers)"
        " for b in numbers[i + 1:])\n"
    )
    row = completion("HumanEval/0", body)
    (plus,) = evaluate(paths, tmp_path, [row])
    assert (plus["status"], plus["base_status"], plus["plus_status"]) == ("fail", "pass", "fail")
    assert plus["reason"].startswith("plus input ")
    (base,) = evaluate(paths, tmp_path, [row], benchmark="humaneval")
    assert base["status"] == "pass" and base["plus_status"] is None


def test_float_tolerances(paths: Paths, tmp_path: Path) -> None:
    rows = [
        # HumanEval/45 has atol 0 but float outputs: EvalPlus then allows 1e-6
        completion("HumanEval/45", "    return a * h / 2.0 + 1e-8\n"),
        completion("HumanEval/45", "    return a * h / 2.0 + 1e-4\n"),
        completion("HumanEval/45", "    return str(a * h / 2.0)\n"),
        # HumanEval/2 sets atol 1e-6 itself
        completion("HumanEval/2", "    return number % 1.0 + 1e-8\n"),
        completion("HumanEval/2", "    return number % 1.0 + 1e-3\n"),
    ]
    entries = evaluate(paths, tmp_path, rows)
    assert [e["status"] for e in entries] == ["pass", "fail", "fail", "pass", "fail"]
    assert "(atol 1e-06)" in entries[1]["reason"]


def test_find_zero_is_judged_by_its_oracle(paths: Paths, tmp_path: Path, data_dir: Path) -> None:
    # any root passes the oracle, even one that never compares equal to the canonical one;
    # but EvalPlus 0.3.1 counts no input its oracle accepts, so the phase fails all the same
    never_equal = (
        "class Root(float):\n"
        "    def __eq__(self, other):\n        return False\n"
        "    __hash__ = float.__hash__\n"
    )
    rows = [
        {
            "task_id": "HumanEval/32",
            "solution": never_equal + "import math\n"
            "def poly(xs, x):\n    return sum(c * math.pow(x, i) for i, c in enumerate(xs))\n"
            "def find_zero(xs):\n"
            "    dxs = [xs[i] * i for i in range(1, len(xs))]\n"
            "    x = 0\n"
            "    for _ in range(1000):\n"
            "        fx = poly(xs, x)\n"
            "        if abs(fx) < 1e-5:\n            break\n"
            "        x = x - fx / poly(dxs, x)\n"
            "    return Root(x)\n",
        },
        completion("HumanEval/32", "    return 0.0\n"),
    ]
    entries = evaluate(paths, tmp_path, rows)
    assert [e["status"] for e in entries] == ["fail", "fail"]
    assert "every output passed the oracle" in entries[0]["reason"]
    assert entries[0]["base_fail_tests"] == []
    assert "the oracle rejected 0.0" in entries[1]["reason"]
    first_input = next(
        json.loads(line)["base_input"][0]
        for line in __import__("gzip").open(data_dir / "humaneval/HumanEvalPlus.jsonl.gz", "rt")
        if json.loads(line)["task_id"] == "HumanEval/32"
    )
    assert entries[1]["base_fail_tests"] == [first_input]  # EvalPlus reports the first input


def test_solutions_need_only_the_entry_point(paths: Paths, tmp_path: Path) -> None:
    # HumanEval/38: the prompt defines encode_cyclic; EvalPlus calls only decode_cyclic, so a
    # solution without the helper passes unless its decode_cyclic calls the missing helper
    standalone = (
        "def decode_cyclic(s):\n"
        "    groups = [s[3 * i:min(3 * i + 3, len(s))] for i in range((len(s) + 2) // 3)]\n"
        "    groups = [(g[-1] + g[:-1]) if len(g) == 3 else g for g in groups]\n"
        '    return "".join(groups)\n'
    )
    calls_helper = "def decode_cyclic(s):\n    return encode_cyclic(encode_cyclic(s))\n"
    rows = [
        {"task_id": "HumanEval/38", "solution": standalone},
        {"task_id": "HumanEval/38", "solution": calls_helper},
    ]
    entries = evaluate(paths, tmp_path, rows, benchmark="humaneval")
    assert [e["status"] for e in entries] == ["pass", "fail"]
    assert "NameError" in entries[1]["reason"]


def test_each_input_has_its_own_time_limit(paths: Paths, tmp_path: Path) -> None:
    # correct, but sleeps 1.2 s on long inputs: over max(1 s, 4 x the reference's time)
    slow = (
        "import time\n"
        "def has_close_elements(numbers, threshold):\n"
        "    if len(numbers) > 13:\n        time.sleep(1.2)\n"
        "    return any(abs(a - b) < threshold for i, a in enumerate(numbers)"
        " for b in numbers[i + 1:])\n"
    )
    row = {"task_id": "HumanEval/0", "solution": slow}
    (strict,) = evaluate(paths, tmp_path, [row])
    assert strict["status"] == "fail" and strict["category"] == "timeout"
    assert "took longer than its 1s limit" in strict["reason"]
    (lenient,) = evaluate(paths, tmp_path, [row], min_time_limit_s=2.0)
    assert lenient["status"] == "pass"


def test_expected_outputs_are_computed_once(paths: Paths, tmp_path: Path) -> None:
    progress = Recorder()
    settings = EvaluateSettings(benchmark="humanevalplus", task_ids=("HumanEval/0",), workers=1)
    Evaluator(settings, paths, progress).expected_outputs()
    assert any("from the cache" in info for info in progress.infos)


def test_the_candidate_cannot_reach_the_reference_or_the_expected_outputs(
    paths: Paths, tmp_path: Path
) -> None:
    # A candidate that answers with whatever it can find: another function of its own name
    # (a reference solution in memory), values in its callers' frames, an object equal to
    # everything. None of them is there to find, and equality is decided on the host.
    search_memory = (
        "import gc\n"
        "def has_close_elements(numbers, threshold):\n"
        "    for obj in gc.get_objects():\n"
        "        if callable(obj) and getattr(obj, '__name__', '') == 'has_close_elements'"
        " and obj is not has_close_elements:\n"
        "            return obj(numbers, threshold)\n"
        "    return None\n"
    )
    search_frames = (
        "import sys\n"
        "def has_close_elements(numbers, threshold):\n"
        "    frame = sys._getframe(1)\n"
        "    while frame is not None:\n"
        "        for value in frame.f_locals.values():\n"
        "            if isinstance(value, bool):\n"
        "                return value\n"
        "        frame = frame.f_back\n"
        "    return None\n"
    )
    equal_to_everything = (
        "class Anything:\n"
        "    def __eq__(self, other):\n        return True\n"
        "def has_close_elements(numbers, threshold):\n    return Anything()\n"
    )
    rows = [
        {"task_id": "HumanEval/0", "solution": source}
        for source in (search_memory, search_frames, equal_to_everything)
    ]
    entries = evaluate(paths, tmp_path, rows)
    assert [e["status"] for e in entries] == ["fail", "fail", "fail"]
    assert "Anything" in entries[2]["reason"]


def test_resume_reuses_judged_verdicts(paths: Paths, tmp_path: Path) -> None:
    rows = [completion("HumanEval/2", "    return number % 1.0\n")]
    evaluate(paths, tmp_path, rows)
    samples = tmp_path / "samples.jsonl"
    settings = EvaluateSettings(benchmark="humanevalplus", task_ids=("HumanEval/2",), workers=1)
    outcome = Evaluator(settings, paths).evaluate_samples(samples, tmp_path / "out")
    assert outcome.reused == 2 and outcome.pass_at_k["pass@1"] == 1.0  # base and plus
