"""MBPP and MBPP+ as EvalPlus 0.3.1 evaluates them: data, prompts, phases, special oracles, and
verdicts through the real sandbox (bubblewrap), the worker and the judge."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from passbench.core.records import ExecResult, Isolation
from passbench.core.settings import Paths
from passbench.stages.benchmarks import DataSettings, DifferentialBenchmark, get_benchmark
from passbench.stages.benchmarks.mbpp import Mbpp, MbppPlus, deserialize_inputs, serialize_inputs
from passbench.stages.differential import PhaseSpec, judge
from passbench.stages.evaluate import EvaluateSettings, Evaluator
from passbench.stages.prompts import build_prompt, stop_sequences
from passbench.stages.sandbox.inside import _values

EVALPLUS_HASH = "ee43ecabebf20deef4bb776a405ac5b1"  # md5 of MbppPlus-v0.2.0.jsonl


@pytest.fixture(scope="module")
def shared_data(data_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> DataSettings:
    return DataSettings(data_dir=data_dir, cache_dir=tmp_path_factory.mktemp("c"), download=False)


@pytest.fixture(scope="module")
def raw(data_dir: Path) -> dict[str, dict[str, Any]]:
    with gzip.open(data_dir / "mbpp/MbppPlus-v0.2.0.jsonl.gz", "rt") as handle:
        rows = [json.loads(line) for line in handle]
    return {row["task_id"]: row for row in rows}


# -- data -------------------------------------------------------------------------------------


def test_load(shared_data: DataSettings) -> None:
    base = Mbpp().load(data=shared_data)
    plus = MbppPlus().load(data=shared_data)
    assert (base.version, len(base)) == ("v0.2.0", 378)
    assert (plus.version, len(plus)) == ("v0.2.0", 378)
    assert base.sha256 == plus.sha256
    assert base.source.md5_of_text() == EVALPLUS_HASH  # the `hash` EvalPlus writes
    assert {t.benchmark for t in base} == {"mbpp"} and {t.benchmark for t in plus} == {"mbppplus"}
    task = plus.get("Mbpp/2")
    assert task.entry_point == "similar_elements" and task.metadata["atol"] == 0
    assert task.test.startswith("\nassert similar_elements(")
    # Mbpp/793's plus_input is `{}` in the release: no plus inputs, as EvalPlus iterates it
    assert plus.get("Mbpp/793").metadata["plus_input"] == []


def test_registered_names() -> None:
    assert isinstance(get_benchmark("mbpp"), Mbpp)
    assert isinstance(get_benchmark("mbppplus"), MbppPlus)
    assert isinstance(get_benchmark("mbppplus"), DifferentialBenchmark)


def test_inputs_are_deserialised_as_evalplus_does(shared_data: DataSettings) -> None:
    plus = MbppPlus().load(data=shared_data)
    assert plus.get("Mbpp/2").metadata["base_input"][0] == [(3, 4, 5, 6), (5, 7, 4, 10)]
    assert plus.get("Mbpp/124").metadata["base_input"][0] == (0.0, 1j)
    # Mbpp/115: lists become sets, and an empty one becomes `{}` (a dict) as in EvalPlus
    assert deserialize_inputs("Mbpp/115", [[[[1], [], [2, 2]]]]) == [[[{1}, {}, {2}]]]
    assert deserialize_inputs("Mbpp/580", [[[1, [2, 3]], 4]]) == [((1, (2, 3)), 4)]
    assert serialize_inputs("Mbpp/124", [(0.0, 1j)]) == [("0.0", "1j")]
    assert serialize_inputs("Mbpp/252", [[1 + 2j]]) == [["(1+2j)"]]
    # the tuples and complex numbers reach the candidate as they are
    phase = MbppPlus().phases(plus.get("Mbpp/124"))[0]
    assert _values.from_tagged(json.loads(phase.inputs_json))[0] == (0.0, 1j)


def test_phases_and_special_oracles(shared_data: DataSettings) -> None:
    base, plus = Mbpp(), MbppPlus()
    loaded = plus.load(data=shared_data)
    phases = plus.phases(loaded.get("Mbpp/2"))
    assert [p.name for p in phases] == ["base", "plus"]
    assert [p.name for p in base.phases(loaded.get("Mbpp/2"))] == ["base"]
    assert all(p.match is not None and p.oracle is None for p in phases)
    assert plus.phases(loaded.get("Mbpp/3"))[0].match is None  # plain ==
    for task_id in ("Mbpp/558", "Mbpp/581", "Mbpp/737", "Mbpp/787", "Mbpp/794"):
        assert plus.phases(loaded.get(task_id))[0].match is not None, task_id
    assert plus.phases(loaded.get("Mbpp/124"))[0].reported_inputs[0] == ("0.0", "1j")


def test_prompts_are_evalplus_prompts(shared_data: DataSettings) -> None:
    task = MbppPlus().load(data=shared_data).get("Mbpp/2")
    direct = build_prompt(task, "complete", chat=False)
    assert direct.text == task.prompts["complete"].strip() + "\n"
    assert direct.text.startswith('"""\nWrite a function to find the shared elements')
    chat = build_prompt(task, "complete", chat=True)
    assert chat.text.endswith(f"```python\n{task.prompts['complete'].strip()}\n```")
    # EvalPlus's extra_eos_for_direct_completion("mbpp") for base models
    stops = stop_sequences(False, benchmark="mbppplus")
    assert stops[-2:] == ('\n"""', "\nassert") and "\ndef " not in stops
    assert "\ndef " in stop_sequences(False, benchmark="humanevalplus")


# -- the judge on MBPP+'s oracles (host side only) --------------------------------------------


def _judged(phase: Any, outputs: list[Any], expected: list[Any]) -> ExecResult:
    def record(index: int, value: Any) -> dict[str, Any]:
        digest, _ = _values.equality_digest(value)
        return {
            "i": index,
            "kind": "output",
            "type": _values.type_name(value),
            "digest": digest,
            "floats": _values.is_floats(value),
            "value": _values.to_tagged(value),
        }

    result = ExecResult(
        key="k",
        task_id="t",
        status="pass",
        category=None,
        details={},
        duration_s=0.0,
        wall_s=0.0,
        isolation=Isolation.BUBBLEWRAP,
        outputs={"records": [record(i, v) for i, v in enumerate(outputs)]},
    )
    spec = PhaseSpec(
        "base", phase.atol, (1.0,) * len(outputs), None, phase.inputs[: len(outputs)], phase.match
    )
    return judge(result, [record(i, v) for i, v in enumerate(expected)], spec)


def test_set_equality_and_not_none_oracles(shared_data: DataSettings) -> None:
    plus = MbppPlus()
    loaded = plus.load(data=shared_data)
    similar = plus.phases(loaded.get("Mbpp/2"))[0]
    assert _judged(similar, [(5, 4)], [(4, 5)]).status == "pass"  # order does not matter
    assert _judged(similar, [(4,)], [(4, 5)]).status == "fail"
    check_str = plus.phases(loaded.get("Mbpp/737"))[0]
    # the reference returns a re.Match (opaque here) or None; EvalPlus expects `is not None`
    match = _values.Opaque("re.Match", "<re.Match object>")
    assert _judged(check_str, [True, "yes"], [match, match]).status == "pass"
    assert _judged(check_str, [False], [match]).status == "fail"
    assert _judged(check_str, [None], [match]).status == "fail"


# -- verdicts through the sandbox -------------------------------------------------------------


@pytest.fixture(scope="module")
def paths(data_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Paths:
    return Paths(cache_dir=tmp_path_factory.mktemp("cache"), data_dir=data_dir)


def evaluate(
    paths: Paths, tmp_path: Path, rows: list[dict[str, Any]], benchmark: str = "mbppplus"
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The result entries (in sample order) and the whole result document."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    samples = tmp_path / "samples.jsonl"
    samples.write_text("".join(json.dumps(row) + "\n" for row in rows))
    ids = tuple(dict.fromkeys(row["task_id"] for row in rows))
    evaluator = Evaluator(EvaluateSettings(benchmark=benchmark, task_ids=ids, workers=2), paths)
    outcome = evaluator.evaluate_samples(samples, tmp_path / "out")
    document = json.loads(outcome.eval_results_path.read_text())
    return [entry for task_id in ids for entry in document["eval"][task_id]], document


SPECIAL = ("Mbpp/2", "Mbpp/124", "Mbpp/558", "Mbpp/581", "Mbpp/737", "Mbpp/793")


@pytest.mark.bwrap
def test_canonical_solutions_pass_with_evalplus_fields(
    paths: Paths, tmp_path: Path, raw: dict[str, dict[str, Any]]
) -> None:
    rows = [
        {"task_id": t, "solution": raw[t]["prompt"] + raw[t]["canonical_solution"]} for t in SPECIAL
    ]
    entries, document = evaluate(paths, tmp_path, rows)
    assert [(e["status"], e["base_status"], e["plus_status"]) for e in entries] == [
        ("pass", "pass", "pass")
    ] * len(SPECIAL)
    assert all(e["base_fail_tests"] == e["plus_fail_tests"] == [] for e in entries)
    assert document["hash"] == EVALPLUS_HASH


@pytest.mark.bwrap
def test_verdicts_of_right_wrong_and_base_only_solutions(paths: Paths, tmp_path: Path) -> None:
    rows = [
        # the set-equality oracle: another order of the same elements passes
        {
            "task_id": "Mbpp/2",
            "solution": "def similar_elements(a, b):\n"
            "    return tuple(sorted(set(a) & set(b), reverse=True))\n",
        },
        # right on the base inputs (never empty), wrong on the plus ones
        {
            "task_id": "Mbpp/2",
            "solution": "def similar_elements(a, b):\n"
            "    if not a or not b:\n        return None\n"
            "    return tuple(set(a) & set(b))\n",
        },
        # wrong everywhere; the failing input is written as EvalPlus serialises it
        {
            "task_id": "Mbpp/124",
            "solution": "import cmath\n"
            "def angle_complex(a, b):\n    return cmath.phase(a + b) + 0.01\n",
        },
        # Mbpp/581's oracle accepts the perpendicular-height reading of the task
        {
            "task_id": "Mbpp/581",
            "solution": "import math\ndef surface_Area(b, h):\n"
            "    return round(b * b + 2 * b * math.sqrt((b / 2) ** 2 + h * h))\n",
        },
        # Mbpp/737: a bool answer is compared with `reference is not None`
        {
            "task_id": "Mbpp/737",
            "solution": "def check_str(s):\n"
            "    return s[:1] in tuple('aeiouAEIOU') and s[:1] != ''\n",
        },
        # Mbpp/793 has no plus inputs: a sample that does not load still fails the phase
        {"task_id": "Mbpp/793", "solution": "def last(arr, x):\n    return len(arr) - 1 -\n"},
    ]
    entries, _ = evaluate(paths, tmp_path, rows)
    got = [(e["base_status"], e["plus_status"]) for e in entries]
    assert got == [
        ("pass", "pass"),
        ("pass", "fail"),
        ("fail", "fail"),
        ("pass", "pass"),
        ("pass", "pass"),
        ("fail", "fail"),
    ]
    assert entries[1]["status"] == "fail" and entries[1]["plus_fail_tests"] == [[[], []]]
    assert entries[2]["base_fail_tests"] == [["0.0", "1j"]]
    assert entries[5]["category"] == "syntax_error"
    # `mbpp` is the base verdict alone
    base_entries, _ = evaluate(paths, tmp_path / "base", rows[1:2], benchmark="mbpp")
    assert base_entries[0]["status"] == "pass" and base_entries[0]["plus_status"] is None


@pytest.mark.bwrap
@pytest.mark.slow
def test_ground_truth_passes_every_task(paths: Paths, tmp_path: Path) -> None:
    """`passbench evaluate -b mbppplus --ground-truth`: the reference answers every base and
    plus input of all 378 tasks (about 50 s on 2 cores)."""
    evaluator = Evaluator(EvaluateSettings(benchmark="mbppplus", workers=2), paths)
    outcome = evaluator.run_ground_truth(tmp_path / "gt")
    truth = outcome.ground_truth
    assert len(truth.tasks) == 378 and truth.failed_tasks == []
