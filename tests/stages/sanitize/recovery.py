"""Recovery check: canonical BigCodeBench programs wrapped in chat answers, then sanitized.

A wrapped program counts as recovered when the sanitized code holds, by `ast.dump` equality,
the canonical entry point, exactly the canonical program's imports, and every top-level
definition of the canonical program that the entry point reaches (found here independently,
by name, like the official tool does). Run as a script to print the rate per answer style:

    .venv/bin/python tests/stages/sanitize/recovery.py
    .venv/bin/python tests/stages/sanitize/recovery.py --official VENV/bin/python
"""

from __future__ import annotations

import argparse
import ast
import functools
import gzip
import json
import multiprocessing
import os
import subprocess
import time
import warnings
from collections.abc import Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from passbench.stages.sanitize import sanitize
from passbench.stages.sanitize.wrappers import WRAPPERS, wrap_answer

BIGCODEBENCH_FILE = "bigcodebench/BigCodeBench-v0.1.4.jsonl.gz"
HUMANEVAL_FILE = "humaneval/HumanEvalPlus.jsonl.gz"


def data_dir() -> Path:
    default = Path(__file__).resolve().parents[3] / ".." / "shared" / "datasets"
    return Path(os.environ.get("PASSBENCH_DATA_DIR", default))


@dataclass(frozen=True)
class CanonicalTask:
    task_id: str
    entry_point: str
    complete_prompt: str
    program: str  # complete_prompt + "\n" + canonical_solution, as bigcodebench/evaluate.py runs it


def canonical_tasks(path: Path | None = None) -> Iterator[CanonicalTask]:
    path = path or data_dir() / BIGCODEBENCH_FILE
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            yield CanonicalTask(
                task_id=row["task_id"],
                entry_point=row["entry_point"],
                complete_prompt=row["complete_prompt"],
                program=row["complete_prompt"] + "\n" + row["canonical_solution"],
            )


def humaneval_tasks(path: Path | None = None) -> Iterator[CanonicalTask]:
    """HumanEval+ tasks; the program is prompt + canonical_solution, as EvalPlus joins them."""
    path = path or data_dir() / HUMANEVAL_FILE
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            yield CanonicalTask(
                task_id=row["task_id"],
                entry_point=row["entry_point"],
                complete_prompt=row["prompt"],
                program=row["prompt"] + row["canonical_solution"],
            )


def _parse(code: str) -> ast.Module:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # canonical programs hold invalid escape sequences
        return ast.parse(code)


def _names(node: ast.AST) -> set[str]:
    return {child.id for child in ast.walk(node) if isinstance(child, ast.Name)}


def _binds(node: ast.stmt) -> set[str]:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {node.name}
    if isinstance(node, ast.Assign):
        return {name for target in node.targets for name in _names(target)}
    if isinstance(node, (ast.AnnAssign, ast.AugAssign)):
        return _names(node.target)
    return set()


def _import_names(node: ast.stmt) -> set[str]:
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return {(alias.asname or alias.name).split(".")[0] for alias in node.names}
    return set()


@functools.cache  # every answer style of a task is checked against the same program
def expected_parts(program: str, entry_point: str) -> tuple[str, frozenset[str], frozenset[str]]:
    """(entry point dump, import dumps, dumps of the definitions the entry point reaches)."""
    body = _parse(program).body
    entry = next(
        node
        for node in body
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == entry_point
    )
    imports = {ast.dump(node) for node in body if isinstance(node, (ast.Import, ast.ImportFrom))}
    others = [node for node in body if node is not entry and _binds(node)]
    reached: set[str] = set()
    wanted = _names(entry)
    changed = True
    while changed:
        changed = False
        for node in others:
            dump = ast.dump(node)
            if dump not in reached and _binds(node) & wanted:
                reached.add(dump)
                wanted |= _names(node)
                changed = True
    return ast.dump(entry), frozenset(imports), frozenset(reached)


@functools.cache
def _free_names(program: str) -> frozenset[str]:
    """Names `program` uses without binding or importing them."""
    body = _parse(program).body
    bound = {name for node in body for name in _binds(node) | _import_names(node)}
    return frozenset(_names(_parse(program)) - bound)


@functools.lru_cache(maxsize=1024)  # most answer styles of a task give back the same code
def recovered(code: str, program: str, entry_point: str) -> str:
    """ "" when `code` is equivalent to the canonical `program`; else what differs."""
    try:
        body = _parse(code).body
    except SyntaxError as error:
        return f"does not parse: {error.msg}"
    entry, imports, definitions = expected_parts(program, entry_point)
    dumps = {ast.dump(node) for node in body}
    got_imports = {ast.dump(n) for n in body if isinstance(n, (ast.Import, ast.ImportFrom))}
    if entry not in dumps:
        return "entry point differs or missing"
    extra = {
        name
        for node in body
        if isinstance(node, (ast.Import, ast.ImportFrom)) and ast.dump(node) not in imports
        for alias in node.names
        for name in [(alias.asname or alias.name).split(".")[0]]
    }
    # An extra import is fine when it supplies a name the canonical program forgot to import
    # (BigCodeBench/602 uses `os` and relies on the test module importing it).
    free = _free_names(program)
    if not imports <= got_imports or not extra <= free:
        extra_count, missing_count = len(got_imports - imports), len(imports - got_imports)
        return f"imports differ: {extra_count} extra, {missing_count} missing"
    missing = definitions - dumps
    if missing:
        return f"{len(missing)} needed definitions missing"
    return ""


def measure(
    styles: list[str] | None = None,
    *,
    with_prompt: bool = True,
    tasks: Iterable[CanonicalTask] | None = None,
) -> dict[str, dict[str, str]]:
    """style -> {task_id: failure text} for every task that was not recovered; the tasks are
    shared out over one process per core (the check is pure CPU, and the suite runs one test
    at a time)."""
    styles = styles or list(WRAPPERS)
    listed = list(canonical_tasks() if tasks is None else tasks)
    workers = min(os.cpu_count() or 1, max(1, len(listed) // 50))
    if workers == 1:
        return _measure_serially(styles, with_prompt, listed)
    context = multiprocessing.get_context("spawn")  # no fork of a process that may run threads
    with ProcessPoolExecutor(workers, mp_context=context) as pool:
        shares = pool.map(
            _measure_serially,
            [styles] * workers,
            [with_prompt] * workers,
            [listed[start::workers] for start in range(workers)],
        )
        failures: dict[str, dict[str, str]] = {style: {} for style in styles}
        for share in shares:
            for style, failed in share.items():
                failures[style].update(failed)
    return failures


def _measure_serially(
    styles: list[str], with_prompt: bool, tasks: list[CanonicalTask]
) -> dict[str, dict[str, str]]:
    failures: dict[str, dict[str, str]] = {style: {} for style in styles}
    for task in tasks:
        for style in styles:
            answer = wrap_answer(
                task.program, style, entry_point=task.entry_point, prompt=task.complete_prompt
            )
            prompt = task.complete_prompt if with_prompt else None
            result = sanitize(answer, task.entry_point, prompt=prompt)
            problem = recovered(result.code, task.program, task.entry_point)
            if not result.ok:
                problem = problem or f"not ok: {result.reason}"
            if problem:
                failures[style][task.task_id] = problem
    return failures


_OFFICIAL_SCRIPT = """
import json, sys, time
from bigcodebench.sanitize import sanitize
jobs = json.load(sys.stdin)
start = time.process_time()
codes = [sanitize(answer, entry_point) for answer, entry_point in jobs]
json.dump({"codes": codes, "cpu_s": time.process_time() - start}, sys.stdout)
"""


def compare_with_official(python: str, every: int, styles: list[str]) -> None:
    """Recovery and CPU time of the official sanitizer and ours on every `every`-th task."""
    tasks = list(canonical_tasks())[::every]
    jobs = [
        (wrap_answer(t.program, style, entry_point=t.entry_point, prompt=t.complete_prompt), t)
        for t in tasks
        for style in styles
    ]
    official = json.loads(
        subprocess.run(
            [python, "-c", _OFFICIAL_SCRIPT],
            input=json.dumps([(answer, t.entry_point) for answer, t in jobs]),
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    start = time.process_time()
    ours = [sanitize(answer, t.entry_point).code for answer, t in jobs]
    ours_s = time.process_time() - start
    print(f"{len(tasks)} tasks (every {every}th), answer alone, recovered: official / passbench")
    for index, style in enumerate(styles):
        rows = range(index, len(jobs), len(styles))
        got_official = sum(
            not recovered(official["codes"][i], jobs[i][1].program, jobs[i][1].entry_point)
            for i in rows
        )
        got_ours = sum(
            not recovered(ours[i], jobs[i][1].program, jobs[i][1].entry_point) for i in rows
        )
        print(f"{style:30} {got_official:5d} {got_ours:5d}")
    per_official = 1000 * official["cpu_s"] / len(jobs)
    per_ours = 1000 * ours_s / len(jobs)
    print(f"CPU per answer: official {per_official:.1f} ms, passbench {per_ours:.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("styles", nargs="*", help="answer styles (default: all)")
    parser.add_argument("--official", metavar="PYTHON", help="also run the official sanitizer")
    parser.add_argument("--every", type=int, default=57, help="task sampling for --official")
    args = parser.parse_args()
    styles = args.styles or list(WRAPPERS)
    if args.official:
        compare_with_official(args.official, args.every, styles)
        return
    total = sum(1 for _ in canonical_tasks())
    with_prompt = measure(styles)
    without_prompt = measure(styles, with_prompt=False)
    print(f"recovered out of {total} tasks: with the prompt given / answer alone")
    for style, failed in with_prompt.items():
        alone = without_prompt[style]
        print(f"{style:30} {total - len(failed):5d} {total - len(alone):5d}")
        for task_id, problem in [*failed.items(), *alone.items()][:6]:
            print(f"    {task_id}: {problem}")


if __name__ == "__main__":
    main()
