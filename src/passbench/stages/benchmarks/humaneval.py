"""HumanEval and HumanEval+, as EvalPlus evaluates them; and HumanEval with its original tests.

- `humaneval`: EvalPlus's base verdict — the candidate's outputs on the base inputs (the
  original tests' inputs) compared with the canonical solution's, on HumanEval+ v0.1.10 data.
- `humanevalplus`: EvalPlus's base and plus inputs; a sample passes when both pass.
- `humaneval-openai`: openai/human-eval's `check_correctness`: the program is the solution, the
  task's test code and `check(<entry point>)`; it passes when it runs to the end.

The first two are differential (`DifferentialBenchmark`): the candidate runs alone and is fed
the inputs; expected outputs come from the canonical solution at ground-truth time and the
comparison happens outside the sandbox (passbench/stages/differential/).

All three are prompted as EvalPlus prompts (`EVALPLUS_STYLE`, shared with MBPP(+)):
`evalplus/codegen.py` (prompt = `task["prompt"].strip() + "\\n"`, default prefixes),
`evalplus/provider/openai.py` (API chat message) and `evalplus/provider/utility.py::
make_raw_chat_prompt` (local chat-template message); its local backends always stop a chat model
at a closing fence.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from passbench.core.errors import DatasetError
from passbench.core.records import IOSpec, Task
from passbench.stages.benchmarks._fields import RecordReader
from passbench.stages.benchmarks.base import BenchmarkBase, BenchmarkInfo, Phase
from passbench.stages.benchmarks.data import DataFile, read_jsonl
from passbench.stages.benchmarks.prompting import (
    DIRECT_COMPLETION_EOS,
    EOS,
    PromptStyle,
    stop_at_fence_always,
)
from passbench.stages.sandbox.inside import _values

_HUMANEVAL_FILE = DataFile(
    relpath="humaneval/HumanEval.jsonl.gz",
    url_path="openai/human-eval/raw/master/data/HumanEval.jsonl.gz",
    check=lambda path: parse_humaneval(path),
)

_HUMANEVALPLUS_FILE = DataFile(
    relpath="humaneval/HumanEvalPlus.jsonl.gz",
    url_path=(
        "evalplus/humanevalplus_release/releases/download/v0.1.10/HumanEvalPlus-v0.1.10.jsonl.gz"
    ),
    check=lambda path: parse_humanevalplus(path),
)


def _parse(path: Path, benchmark: str, plus: bool) -> tuple[Task, ...]:
    tasks: list[Task] = []
    seen: dict[str, int] = {}
    for line, raw in read_jsonl(path):
        record = RecordReader(raw, path, line)
        task_id = record.text("task_id")
        if task_id in seen:
            raise record.error("task_id", f"'{task_id}' already on line {seen[task_id]}")
        seen[task_id] = line
        metadata: dict[str, object] = {}
        if plus:
            metadata = {
                "base_input": record.list_of_lists("base_input"),
                "plus_input": record.list_of_lists("plus_input"),
                "atol": record.number("atol"),
                "contract": raw.get("contract", ""),
            }
        prompt = record.text("prompt")
        tasks.append(
            Task(
                benchmark=benchmark,
                task_id=task_id,
                entry_point=record.text("entry_point"),
                prompts={"complete": prompt},
                code_prompt=prompt,
                test=record.text("test"),
                canonical_solution=record.text("canonical_solution"),
                metadata=metadata,
            )
        )
    if not tasks:
        raise DatasetError(f"{path}: no tasks in file")
    return tuple(tasks)


def parse_humaneval(path: Path) -> tuple[Task, ...]:
    return _parse(path, "humaneval-openai", plus=False)


def parse_humanevalplus(path: Path) -> tuple[Task, ...]:
    return _parse(path, "humanevalplus", plus=True)


def _poly(xs: Sequence[float], x: float) -> float:
    """EvalPlus's `_poly` (evalplus/eval/_special_oracle.py), for HumanEval/32's oracle."""
    return sum([coeff * math.pow(x, i) for i, coeff in enumerate(xs)])


def _find_zero_oracle(args: Sequence[Any], out: Any, atol: float) -> bool:
    """HumanEval/32: any root will do, within `atol` (EvalPlus: `abs(_poly(*inp, out)) <= atol`)."""
    (xs,) = args
    return bool(abs(_poly(xs, out)) <= atol)


#: evalplus.eval imports numpy at module level, so a candidate's `import numpy` finds it in
#: `sys.modules` even after the reliability guard has disabled what a fresh import needs.
EVALPLUS_PRELOADED = ("numpy",)


def _evalplus_direct(task_prompt: str) -> str:
    return task_prompt.strip() + "\n"  # codegen.py


def _evalplus_user(prefix: str, task_prompt: str, split: str, chat_template: bool) -> str:
    # codegen.py first normalises the prompt to `prompt.strip() + "\n"`; the providers strip again.
    if chat_template:  # provider/utility.py::make_raw_chat_prompt
        return f"{prefix}\n```\n{task_prompt.strip()}\n```\n"
    return f"{prefix}\n```python\n{task_prompt.strip()}\n```"  # provider/openai.py


#: EvalPlus's prompts for HumanEval(+); `extra_eos_for_direct_completion` is BigCodeBench's list.
EVALPLUS_STYLE = PromptStyle(
    direct=_evalplus_direct,
    user_message=_evalplus_user,
    direct_stops=EOS + DIRECT_COMPLETION_EOS,
    chat_stops=stop_at_fence_always,
)


class _HumanEvalFamily(BenchmarkBase):
    """What the three share: how code is built from a task (as EvalPlus and human-eval do)."""

    _file: DataFile

    def data_file(self, version: str) -> DataFile:
        return self._file

    def parse_tasks(self, path: Path) -> tuple[Task, ...]:
        return tuple(replace(task, benchmark=self.info.name) for task in parse_humanevalplus(path))

    def canonical_code(self, task: Task) -> str:
        return task.prompts["complete"] + task.canonical_solution


class _Differential(_HumanEvalFamily):
    """HumanEval / HumanEval+ as EvalPlus evaluates them: outputs compared with the reference's."""

    _file = _HUMANEVALPLUS_FILE
    _phase_names: tuple[str, ...]

    def __init__(self) -> None:
        # task id -> (the metadata the phases were built from, the phases): encoding the
        # inputs takes ~3 ms a task, so it is done once, when a task is first evaluated
        self._phases: dict[str, tuple[object, tuple[Phase, ...]]] = {}

    def phases(self, task: Task) -> tuple[Phase, ...]:
        cached = self._phases.get(task.task_id)
        if cached is not None and cached[0] is task.metadata:
            return cached[1]
        phases = tuple(self._phase(task, name) for name in self._phase_names)
        self._phases[task.task_id] = (task.metadata, phases)
        return phases

    def _phase(self, task: Task, name: str) -> Phase:
        inputs = tuple(task.metadata[f"{name}_input"])
        return Phase(
            name=name,
            inputs=inputs,
            inputs_json=json.dumps([_values.to_tagged(args) for args in inputs]),
            atol=float(task.metadata["atol"]),
            oracle=_find_zero_oracle if task.entry_point == "find_zero" else None,
            preload=EVALPLUS_PRELOADED,
        )

    def program_fields(self, task: Task, code: str, timeout_s: float) -> dict[str, Any]:
        """`code` fed every input of every phase, each under `timeout_s`; the evaluator builds
        its own io programs per phase with EvalPlus's limits (passbench.stages.differential)."""
        phases = self.phases(task)
        inputs = [args for phase in phases for args in json.loads(phase.inputs_json)]
        return {
            "source": code,
            "style": "io",
            "timeout_s": timeout_s * max(1, len(inputs)),
            "io": IOSpec(
                entry_point=task.entry_point,
                inputs_json=json.dumps(inputs),
                time_limits=(timeout_s,) * len(inputs),
            ),
        }


class HumanEval(_Differential):
    info = BenchmarkInfo(
        name="humaneval",
        title="HumanEval",
        id_prefix="HumanEval/",
        versions=("v0.1.10",),
        default_version="v0.1.10",
        # EvalPlus's per-task cap (EVALPLUS_TIMEOUT_PER_TASK); each input's own limit comes
        # from the canonical solution's time on it (passbench.stages.differential).
        default_timeout_s=60.0,
        env_name=None,  # the tests use the standard library only
        prompt_style=EVALPLUS_STYLE,
    )
    _phase_names = ("base",)


class HumanEvalPlus(_Differential):
    info = replace(HumanEval.info, name="humanevalplus", title="HumanEval+")
    _phase_names = ("base", "plus")


class HumanEvalOpenAI(_HumanEvalFamily):
    """openai/human-eval's own tests: `check(candidate)` with its asserts, in the candidate's
    process (as human-eval runs them; see docs/benchmarks.md for what that lets a sample do)."""

    info = replace(
        HumanEval.info,
        name="humaneval-openai",
        title="HumanEval (original tests)",
        versions=("v1",),  # openai/human-eval has published one version of its data
        default_version="v1",
        default_timeout_s=3.0,  # human_eval.evaluation: timeout=3.0 per problem
    )
    _file = _HUMANEVAL_FILE

    def parse_tasks(self, path: Path) -> tuple[Task, ...]:
        return parse_humaneval(path)

    def program_fields(self, task: Task, code: str, timeout_s: float) -> dict[str, Any]:
        source = code + "\n" + task.test + "\n" + f"check({task.entry_point})"
        return {"source": source, "style": "script", "timeout_s": timeout_s}
