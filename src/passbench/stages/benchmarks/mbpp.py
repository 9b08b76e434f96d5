"""MBPP and MBPP+, as EvalPlus evaluates them (EvalPlus 0.3.1, MBPP+ v0.2.0).

- `mbpp`: EvalPlus's base verdict: the candidate's outputs on the base inputs (the original
  MBPP tests' inputs) compared with the canonical solution's.
- `mbppplus`: the base and the plus inputs; a sample passes when both pass.

Both are differential benchmarks built exactly like `humaneval` / `humanevalplus`
(benchmarks/humaneval.py, passbench/stages/differential/). What MBPP+ adds, each from EvalPlus:

- the inputs are JSON in the release and are turned back into tuples, sets, complex numbers and
  dicts of tuples for 70-odd tasks (`evalplus/data/mbpp.py::mbpp_deserialize_inputs`);
- special oracles keyed by entry point (`evalplus/eval/__init__.py::unsafe_execute`,
  `evalplus/eval/_special_oracle.py`): set equality for eight tasks, "returns something other
  than None" for three regex tasks (EvalPlus's expected outputs there are `out is not None`),
  and alternative answers accepted for Mbpp/558 and Mbpp/581 (two more, Mbpp/164 and 295, were
  removed from v0.2.0 and are kept only because EvalPlus keys them by name);
- the failing inputs in `*_fail_tests` are written as `mbpp_serialize_inputs` writes them;
- prompts are EvalPlus's (`EVALPLUS_STYLE`) but a base model stops where
  `extra_eos_for_direct_completion("mbpp")` says (`MBPP_STYLE`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from passbench.core.errors import DatasetError
from passbench.core.records import Task
from passbench.stages.benchmarks._fields import RecordReader
from passbench.stages.benchmarks.base import BenchmarkInfo, Phase
from passbench.stages.benchmarks.data import DataFile, read_jsonl
from passbench.stages.benchmarks.humaneval import EVALPLUS_PRELOADED, EVALPLUS_STYLE, _Differential
from passbench.stages.benchmarks.prompting import EOS
from passbench.stages.sandbox.inside import _values

_MBPPPLUS_FILE = DataFile(
    relpath="mbpp/MbppPlus-v0.2.0.jsonl.gz",
    url_path="evalplus/mbppplus_release/releases/download/v0.2.0/MbppPlus.jsonl.gz",
    check=lambda path: parse_mbppplus(path),
)

# -- inputs: mbpp_deserialize_inputs / mbpp_serialize_inputs (evalplus/data/mbpp.py) -----------

_TUPLE_ARGS = {2, 116, 132, 143, 222, 261, 273, 394, 399, 421, 424, 429, 470, 560, 579, 596}
_TUPLE_ARGS |= {616, 630, 726, 740, 744, 809}
_TUPLES_IN_ARGS = {63, 64, 70, 94, 120, 237, 272, 299, 400, 409, 417, 438, 473, 614, 780}
_FIRST_ARG_TUPLES = {75, 413, 444, 753}
_FIRST_ARG_TUPLE = {250, 405, 446, 617, 720, 763, 808}
_NESTED_TUPLES = {259, 401, 445}
_ALL_TUPLES = {580, 615, 791}


def _number(task_id: str) -> int:
    return int(task_id.split("/")[-1])


def _all_tuples(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(_all_tuples(item) for item in value)
    return value


def deserialize_inputs(task_id: str, inputs: list[Any]) -> list[Any]:
    """EvalPlus's `mbpp_deserialize_inputs`, branch for branch (Mbpp/115's empty sets become
    `{}`, an empty dict, in EvalPlus too)."""
    n = _number(task_id)
    if n in _TUPLE_ARGS:
        return [[tuple(lst) for lst in inp] for inp in inputs]
    if n in _TUPLES_IN_ARGS:
        return [[[tuple(lst) for lst in lst_lst] for lst_lst in inp] for inp in inputs]
    if n in _FIRST_ARG_TUPLES:
        return [[[tuple(lst) for lst in inp[0]], inp[1]] for inp in inputs]
    if n in (106, 750):
        return [[inp[0], tuple(inp[1])] for inp in inputs]
    if n == 115:
        return [
            [[set(item) if isinstance(item, list) and len(item) else {} for item in inp[0]]]
            for inp in inputs
        ]
    if n == 124:
        return [(float(inp[0]), complex(inp[1])) for inp in inputs]
    if n in _FIRST_ARG_TUPLE:
        return [[tuple(inp[0]), inp[1]] for inp in inputs]
    if n in _NESTED_TUPLES:
        nested = [[[tuple(lst) for lst in lst_lst] for lst_lst in inp] for inp in inputs]
        return [[tuple(lst) for lst in inp] for inp in nested]
    if n == 278:
        flat = [
            [[tuple(item) if isinstance(item, list) else item for item in inp[0]]] for inp in inputs
        ]
        return [[tuple(lst) for lst in inp] for inp in flat]
    if n == 307:
        return [[tuple(inp[0]), inp[1], inp[2]] for inp in inputs]
    if n == 722:
        return [[{key: tuple(value) for key, value in inp[0].items()}, *inp[1:]] for inp in inputs]
    if n == 252:
        return [[complex(inp[0])] for inp in inputs]
    if n in _ALL_TUPLES:
        return [_all_tuples(inp) for inp in inputs]
    return inputs


_SERIALIZED = {115, 124, 252}  # the tasks whose inputs mbpp_serialize_inputs rewrites


def serialize_inputs(task_id: str, inputs: Sequence[Any]) -> list[Any]:
    """EvalPlus's `mbpp_serialize_inputs`: the failing inputs as its result files hold them."""
    n = _number(task_id)
    if n == 115:
        return [[[list(item) for item in inp[0]]] for inp in inputs]
    if n == 124:
        return [(str(inp[0]), str(inp[1])) for inp in inputs]
    if n == 252:
        return [[str(inp[0])] for inp in inputs]
    return list(inputs)


# -- special oracles (evalplus/eval/__init__.py, evalplus/eval/_special_oracle.py) -------------

#: `MBPP_OUTPUT_NOT_NONE_TASKS`: the expected output is whether the reference returned non-None.
OUTPUT_NOT_NONE = ("check_str", "text_match_three", "text_starta_endb")
#: `MBPP_OUTPUT_SET_EQ_TASKS`: outputs compared as sets.
OUTPUT_SET_EQ = (
    "similar_elements",
    "find_char_long",
    "common_in_nested_lists",
    "extract_singly",
    "larg_nnum",
    "intersection_array",
    "find_dissimilar",
    "Diff",
)


def _surface_area(base_edge: float, height: float) -> int:
    """`_surface_Area`: Mbpp/581 with "height" read as the pyramid's perpendicular height."""
    slant_height = math.sqrt((base_edge / 2) ** 2 + height**2)
    return round(base_edge**2 + 4 * (base_edge * slant_height) / 2)


def _digit_distance_nums(num1: int, num2: int) -> int:
    """`_digit_distance_nums`: Mbpp/558 with the numbers zero-padded to the same length."""
    a, b = str(num1), str(num2)
    width = max(len(a), len(b))
    return sum(abs(int(x) - int(y)) for x, y in zip(a.zfill(width), b.zfill(width), strict=True))


def _not_none(args: Sequence[Any], out: Any, exp: Any, exact: bool) -> bool:
    expected = exp is not None  # what EvalPlus's ground truth stores for these tasks
    return bool(out == expected) if isinstance(out, bool) else expected == (out is not None)


def _set_equal(args: Sequence[Any], out: Any, exp: Any, exact: bool) -> bool:
    return bool(set(out) == set(exp))


def _any_answer(args: Sequence[Any], out: Any, exp: Any, exact: bool) -> bool:
    return True  # Mbpp/164 (`exact_match or True`)


def _sum_div(args: Sequence[Any], out: Any, exp: Any, exact: bool) -> bool:
    return exact or bool(out == 0)  # Mbpp/295


def _digit_distance(args: Sequence[Any], out: Any, exp: Any, exact: bool) -> bool:
    return exact or bool(out == _digit_distance_nums(*args))  # Mbpp/558


def _matcher(entry_point: str, atol: float) -> Any:
    """The special oracle EvalPlus applies to this entry point, in its order; None: `==`."""
    if entry_point == "are_equivalent":
        return _any_answer
    if entry_point == "sum_div":
        return _sum_div
    if entry_point == "surface_Area":

        def surface(args: Sequence[Any], out: Any, exp: Any, exact: bool) -> bool:
            return exact or bool(abs(out - _surface_area(*args)) <= atol)  # Mbpp/581

        return surface
    if entry_point == "digit_distance_nums":
        return _digit_distance
    if entry_point in OUTPUT_SET_EQ:
        return _set_equal
    if entry_point in OUTPUT_NOT_NONE:
        return _not_none
    return None


# -- prompts -------------------------------------------------------------------------------

#: `extra_eos_for_direct_completion("mbpp")`: MBPP+ prompts are a docstring with an assert.
MBPP_DIRECT_COMPLETION_EOS: tuple[str, ...] = ('\n"""', "\nassert")
MBPP_STYLE = replace(EVALPLUS_STYLE, direct_stops=EOS + MBPP_DIRECT_COMPLETION_EOS)

# -- data ----------------------------------------------------------------------------------


def _inputs(record: RecordReader, field: str) -> list[list[Any]]:
    # Mbpp/793's plus_input is `{}` in the release: EvalPlus iterates it as no inputs (the
    # phase still loads the code, so a sample that does not load fails it)
    if record.record.get(field) == {}:
        return []
    return record.list_of_lists(field)


def parse_mbppplus(path: Path, benchmark: str = "mbppplus") -> tuple[Task, ...]:
    """MBPP+ tasks; `base_input` / `plus_input` deserialised as EvalPlus does."""
    tasks: list[Task] = []
    seen: dict[str, int] = {}
    for line, raw in read_jsonl(path):
        record = RecordReader(raw, path, line)
        task_id = record.text("task_id")
        if task_id in seen:
            raise record.error("task_id", f"'{task_id}' already on line {seen[task_id]}")
        seen[task_id] = line
        try:
            _number(task_id)
            base = deserialize_inputs(task_id, _inputs(record, "base_input"))
            plus = deserialize_inputs(task_id, _inputs(record, "plus_input"))
        except (ValueError, TypeError, IndexError, KeyError, AttributeError) as error:
            raise record.error("base_input", f"not MBPP+ inputs for {task_id}: {error}") from None
        prompt = record.text("prompt")
        tasks.append(
            Task(
                benchmark=benchmark,
                task_id=task_id,
                entry_point=record.text("entry_point"),
                prompts={"complete": prompt},
                code_prompt=prompt,
                test=record.text("assertion"),  # MBPP's original asserts (not run: see phases)
                canonical_solution=record.text("canonical_solution"),
                metadata={
                    "base_input": base,
                    "plus_input": plus,
                    "atol": record.number("atol"),
                    "contract": raw.get("contract", ""),
                },
            )
        )
    if not tasks:
        raise DatasetError(f"{path}: no tasks in file")
    return tuple(tasks)


class _MbppDifferential(_Differential):
    """MBPP / MBPP+ as EvalPlus evaluates them: HumanEval+'s machinery with MBPP+'s data."""

    _file = _MBPPPLUS_FILE

    def parse_tasks(self, path: Path) -> tuple[Task, ...]:
        return parse_mbppplus(path, self.info.name)

    def _phase(self, task: Task, name: str) -> Phase:
        inputs = tuple(task.metadata[f"{name}_input"])
        atol = float(task.metadata["atol"])
        return Phase(
            name=name,
            inputs=inputs,
            inputs_json=json.dumps([_values.to_tagged(args) for args in inputs]),
            atol=atol,
            preload=EVALPLUS_PRELOADED,
            match=_matcher(task.entry_point, atol),
            reported_inputs=tuple(serialize_inputs(task.task_id, inputs))
            if _number(task.task_id) in _SERIALIZED
            else (),
        )


class Mbpp(_MbppDifferential):
    info = BenchmarkInfo(
        name="mbpp",
        title="MBPP",
        id_prefix="Mbpp/",
        versions=("v0.2.0",),
        default_version="v0.2.0",
        default_timeout_s=60.0,  # EvalPlus's per-task cap, as HumanEval+'s
        prompt_style=MBPP_STYLE,
    )
    _phase_names = ("base",)


class MbppPlus(_MbppDifferential):
    info = replace(Mbpp.info, name="mbppplus", title="MBPP+")
    _phase_names = ("base", "plus")
