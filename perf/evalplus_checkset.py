"""Build the HumanEval+ or MBPP+ check set: samples on which passbench must agree with EvalPlus.

    python perf/evalplus_checkset.py [--dataset humaneval|mbpp] [--output DIR] [--seed N]
        [--every N]

Writes `DIR/checkset.jsonl` (EvalPlus's sample format: `task_id` and `solution` or
`completion`; every task present, as `evalplus.evaluate` requires) and
`DIR/families.json` (the family of each sample, in file order). The samples are derived from
the canonical solutions, deterministically (seeded), in families that exercise each of
EvalPlus's rules:

- `canonical`: the prompt plus the canonical solution (`solution`), and the bare canonical body
  (`completion`);
- `mutant`: one AST mutation of the canonical solution (a comparison, an arithmetic operator, a
  constant, a boolean flipped), several per task: wrong answers, crashes, some equivalent;
- `output-form`: the canonical answer returned in another form (tuple for list, float for int,
  rounded or nudged floats, str, None): the type, length and tolerance rules;
- `slow`: correct but slow (sleeps and busy loops well under, around and over EvalPlus's
  per-input limit of max(1 s, 4 x the canonical time)), and one input that never returns;
- `model-like`: what models write: only the entry function without the prompt's helpers
  (HumanEval/38, /50 and every task whose solution calls a helper), debug prints, exit calls,
  raising on some inputs, standard-library imports, numpy.
"""

from __future__ import annotations

import argparse
import ast
import gzip
import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

from _common import REPO_ROOT, data_dir

MUTANTS_PER_TASK = 4
DEFAULT_OUTPUT = REPO_ROOT.parent / "baseline" / "evalplus-checkset"


#: `--dataset` -> the shared data file (EvalPlus's dataset names)
DATA_FILES = {
    "humaneval": "humaneval/HumanEvalPlus.jsonl.gz",
    "mbpp": "mbpp/MbppPlus-v0.2.0.jsonl.gz",
}


def default_output(dataset: str) -> Path:
    return (
        DEFAULT_OUTPUT
        if dataset == "humaneval"
        else DEFAULT_OUTPUT.with_name(f"{DEFAULT_OUTPUT.name}-{dataset}")
    )


def load_tasks(dataset: str = "humaneval") -> list[dict[str, Any]]:
    path = data_dir() / DATA_FILES[dataset]
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


# ------------------------------------------------------------------------------ mutants


class _Mutator(ast.NodeTransformer):
    """Applies the `target`-th applicable mutation after line `first_line` (the body)."""

    SWAPS: ClassVar[dict[type, type]] = {
        ast.Lt: ast.LtE,
        ast.LtE: ast.Lt,
        ast.Gt: ast.GtE,
        ast.GtE: ast.Gt,
        ast.Eq: ast.NotEq,
        ast.NotEq: ast.Eq,
        ast.Add: ast.Sub,
        ast.Sub: ast.Add,
        ast.Mult: ast.Add,
        ast.FloorDiv: ast.Mod,
        ast.Mod: ast.FloorDiv,
        ast.And: ast.Or,
        ast.Or: ast.And,
    }

    def __init__(self, first_line: int, target: int) -> None:
        self.first_line = first_line
        self.target = target
        self.seen = 0
        self.done = ""

    def _hit(self, node: ast.AST) -> bool:
        if getattr(node, "lineno", 0) <= self.first_line or self.done:
            return False
        self.seen += 1
        return self.seen - 1 == self.target

    def visit_Compare(self, node: ast.Compare) -> ast.AST:
        self.generic_visit(node)
        swap = self.SWAPS.get(type(node.ops[0]))
        if swap and self._hit(node):
            node.ops[0] = swap()
            self.done = "compare"
        return node

    def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
        self.generic_visit(node)
        swap = self.SWAPS.get(type(node.op))
        if swap and self._hit(node):
            node.op = swap()
            self.done = "binop"
        return node

    def visit_BoolOp(self, node: ast.BoolOp) -> ast.AST:
        self.generic_visit(node)
        swap = self.SWAPS.get(type(node.op))
        if swap and self._hit(node):
            node.op = swap()
            self.done = "boolop"
        return node

    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        value = node.value
        if isinstance(value, bool):
            if self._hit(node):
                self.done = "bool"
                return ast.copy_location(ast.Constant(not value), node)
        elif isinstance(value, int) and self._hit(node):
            self.done = "int"
            return ast.copy_location(ast.Constant(value + 1), node)
        return node


def mutants(task: dict[str, Any], rng: random.Random) -> Iterator[str]:
    program = task["prompt"] + task["canonical_solution"]
    first_line = task["prompt"].count("\n")
    tree = ast.parse(program)
    counter = _Mutator(first_line, target=-1)
    counter.visit(ast.parse(program))
    points = list(range(counter.seen))
    rng.shuffle(points)
    made: set[str] = set()
    for point in points:
        if len(made) == MUTANTS_PER_TASK:
            break
        mutator = _Mutator(first_line, point)
        mutated = ast.unparse(mutator.visit(ast.parse(program)))
        if mutator.done and mutated not in made and mutated != ast.unparse(tree):
            made.add(mutated)
            yield mutated


# ------------------------------------------------------------------------------ wrappers

_WRAPPER = """

_passbench_impl = {entry}
_passbench_depth = [0]
_passbench_calls = [0]


def {entry}(*args, **kwargs):
    _passbench_depth[0] += 1
    _passbench_calls[0] += 1
    try:
{before}        result = _passbench_impl(*args, **kwargs)
    finally:
        _passbench_depth[0] -= 1
    if _passbench_depth[0] == 0:
{after}    return result
"""


def wrapped(task: dict[str, Any], before: str = "", after: str = "", head: str = "") -> str:
    """The canonical program with the entry point wrapped: `before` runs ahead of every
    outermost call, `after` may rewrite `result` (recursion inside is left alone)."""
    indent_before = "".join(f"        {line}\n" for line in before.splitlines())
    indent_after = "".join(f"        {line}\n" for line in after.splitlines())
    return (
        head
        + task["prompt"]
        + task["canonical_solution"]
        + _WRAPPER.format(
            entry=task["entry_point"], before=indent_before, after=indent_after or "        pass\n"
        )
    )


OUTPUT_FORMS: dict[str, str] = {
    "tuple-for-list": "if isinstance(result, list):\n    result = tuple(result)",
    "list-for-tuple": "if isinstance(result, tuple):\n    result = list(result)",
    "float-for-int": (
        "if isinstance(result, int) and not isinstance(result, bool):\n    result = float(result)"
    ),
    "int-for-float": "if isinstance(result, float) and result == result:\n    result = int(result)",
    "round-2": "if isinstance(result, float):\n    result = round(result, 2)",
    "nudge-1e-9": "if isinstance(result, float):\n    result = result + 1e-9",
    "nudge-1e-5": "if isinstance(result, float):\n    result = result * (1 + 1e-5)",
    "nudge-list": (
        "if isinstance(result, list) and result and all(isinstance(x, float) for x in result):\n"
        "    result = [x + 1e-8 for x in result]"
    ),
    "str": "result = str(result)",
    "none": "result = None",
    "bool-for-int": (
        "if result in (0, 1) and not isinstance(result, bool):\n    result = bool(result)"
    ),
}

SLOW_FORMS: dict[str, tuple[str, str]] = {
    # (code before every outermost call, imports)
    "sleep-1ms-each": ("time.sleep(0.001)", "import time\n"),
    "sleep-0.5s-once": ("if _passbench_calls[0] == 2:\n    time.sleep(0.5)", "import time\n"),
    "sleep-1.5s-once": ("if _passbench_calls[0] == 3:\n    time.sleep(1.5)", "import time\n"),
    "busy-20ms-each": (
        "_t = time.perf_counter()\nwhile time.perf_counter() - _t < 0.02:\n    pass",
        "import time\n",
    ),
    "spin-forever-once": ("if _passbench_calls[0] == 2:\n    while True:\n        pass", ""),
}

MODEL_LIKE: dict[str, tuple[str, str, str]] = {
    # (before, after, head)
    "debug-print": ('print("calling", args)', 'print("result", result)', ""),
    "exit-call": ("if _passbench_calls[0] == 2:\n    exit(0)", "", ""),
    "sys-exit": ("if _passbench_calls[0] == 2:\n    sys.exit(1)", "", "import sys\n"),
    "os-exit": ("if _passbench_calls[0] == 2:\n    os._exit(0)", "", "import os\n"),
    "raise-on-third": ("if _passbench_calls[0] == 3:\n    raise ValueError('nope')", "", ""),
    "stdlib-imports": ("", "", "import math, itertools, collections, functools, re\n"),
    "numpy-import": ("", "", "import numpy as np\n"),
    "read-stdin": ("if _passbench_calls[0] == 1:\n    input()", "", ""),
}


def entry_only(task: dict[str, Any]) -> str | None:
    """Only the entry function (and the module's imports), as models often answer: the
    prompt's other functions (HumanEval/38 `encode_cyclic`, /50 `encode_shift`) left out."""
    tree = ast.parse(task["prompt"] + task["canonical_solution"])
    kept = [
        node
        for node in tree.body
        if isinstance(node, (ast.Import, ast.ImportFrom))
        or (isinstance(node, ast.FunctionDef) and node.name == task["entry_point"])
    ]
    if len(kept) == len(tree.body):
        return None  # nothing left out: the canonical family covers it
    return ast.unparse(ast.Module(body=kept, type_ignores=[]))


def samples(
    tasks: list[dict[str, Any]], seed: int, every: int = 1
) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every family for every `every`-th task; the canonical ones for all (EvalPlus requires
    every task to have samples)."""
    rng = random.Random(seed)
    for position, task in enumerate(tasks):
        task_id = task["task_id"]
        full = task["prompt"] + task["canonical_solution"]
        yield "canonical/solution", {"task_id": task_id, "solution": full}
        yield "canonical/completion", {"task_id": task_id, "completion": task["canonical_solution"]}
        if position % every:
            continue
        number = position // every
        for mutant in mutants(task, rng):
            yield "mutant", {"task_id": task_id, "solution": mutant}
        for name, after in OUTPUT_FORMS.items():
            yield (
                f"output-form/{name}",
                {"task_id": task_id, "solution": wrapped(task, after=after)},
            )
        # the slow forms cost seconds each in both tools: every third task gets them
        if number % 3 == 0:
            for name, (before, head) in SLOW_FORMS.items():
                yield (
                    f"slow/{name}",
                    {
                        "task_id": task_id,
                        "solution": wrapped(task, before=before, head=head),
                    },
                )
        for name, (before, after, head) in MODEL_LIKE.items():
            if name in ("os-exit", "numpy-import") and number % 4:
                continue  # a sample of tasks is enough to show the behaviour
            yield (
                f"model-like/{name}",
                {
                    "task_id": task_id,
                    "solution": wrapped(task, before=before, after=after, head=head),
                },
            )
        lean = entry_only(task)
        if lean is not None:
            yield "model-like/entry-only", {"task_id": task_id, "solution": lean}


def build(
    output: Path, seed: int, dataset: str = "humaneval", every: int = 1
) -> tuple[Path, dict[str, int]]:
    output.mkdir(parents=True, exist_ok=True)
    families: list[str] = []
    counts: dict[str, int] = {}
    sample_file = output / "checkset.jsonl"
    with sample_file.open("w", encoding="utf-8") as handle:
        for family, sample in samples(load_tasks(dataset), seed, every):
            handle.write(json.dumps(sample) + "\n")
            families.append(family)
            counts[family] = counts.get(family, 0) + 1
    (output / "families.json").write_text(json.dumps(families))
    return sample_file, counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", choices=sorted(DATA_FILES), default="humaneval")
    parser.add_argument("--output", type=Path, help=f"default: {DEFAULT_OUTPUT} (+ -mbpp)")
    parser.add_argument("--seed", type=int, default=20261124)
    parser.add_argument(
        "--every", type=int, default=1, help="all families for every N-th task only (default 1)"
    )
    args = parser.parse_args(argv)
    output = args.output or default_output(args.dataset)
    path, counts = build(output, args.seed, args.dataset, args.every)
    for family, count in sorted(counts.items()):
        print(f"{count:6d}  {family}")
    print(f"{sum(counts.values()):6d}  samples -> {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
