"""LiveCodeBench's own result file, `*_codegeneration_output_eval_all.json`: read, write, score.

The official runner (lcb_runner/runner/main.py, CodeGenerationProblem.insert_output_evaluation)
writes one JSON list, one row per problem sorted by question id, with these keys in this order:

    question_title, question_content, platform, question_id, contest_id, contest_date (ISO),
    starter_code, difficulty, output_list (raw model answers), code_list (extracted code),
    graded_list ([bool] per generation), pass@1, metadata (one JSON *string* per generation:
    {"execution time": s} on a pass, else {"error", "error_code", "error_message", "inputs",
    "expected", "output"} as testing_util.py reports the first failing test)

`passbench inspect FILE` reads such a file as a run (the benchmark's `read_official_results`);
`passbench evaluate` on livecodebench writes one beside its own result files
(`write_official_results`) and a run read later gets its dates from it
(`attach_official_results`). Scores by contest-date window are in benchmarks/windows.py.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from passbench.core.errors import ResultsFileError
from passbench.core.records import ErrorCategory, Task
from passbench.core.runs import RunResults, SampleResult, results_stem
from passbench.stages.benchmarks.selection import DateWindow
from passbench.stages.benchmarks.windows import DatedTask

#: passbench names LiveCodeBench's file `<stem>_<this>` beside its own result files.
EVAL_ALL_SUFFIX = "codegeneration_output_eval_all.json"
#: LiveCodeBench's row keys, in its order.
ROW_KEYS = (
    "question_title",
    "question_content",
    "platform",
    "question_id",
    "contest_id",
    "contest_date",
    "starter_code",
    "difficulty",
    "output_list",
    "code_list",
    "graded_list",
    "pass@1",
    "metadata",
)
_REQUIRED = ("question_id", "contest_date", "difficulty", "platform", "graded_list")
#: The name the runs read from these files carry as their `format`.
FORMAT = "livecodebench-eval-all"


@dataclass(frozen=True)
class LcbRow(DatedTask):
    """One row: the fields date-window scoring reads, and the row itself kept whole."""

    row: Mapping[str, Any] = field(default_factory=dict)


def looks_like_eval_all(path: Path) -> bool:
    """Whether `path` is a LiveCodeBench eval_all file (a JSON list of rows with graded_list),
    judged from its first bytes, so a large passbench result file is not parsed twice."""
    try:
        with path.open("rb") as handle:
            head = handle.read(4096).lstrip()
    except OSError:
        return False
    return head.startswith(b"[") and b'"question_id"' in head


def read_eval_all(path: Path) -> list[LcbRow]:
    """Every row of a LiveCodeBench eval_all file; ResultsFileError naming the row otherwise."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise ResultsFileError(f"cannot read: {error}", path=path) from None
    if not isinstance(data, list) or not data:
        raise ResultsFileError("expected a JSON list of LiveCodeBench rows", path=path)
    rows = []
    for number, row in enumerate(data):
        where = f"row {number}"
        if not isinstance(row, dict):
            raise ResultsFileError(f"{where}: expected an object", path=path)
        missing = [key for key in _REQUIRED if key not in row]
        if missing:
            raise ResultsFileError(f"{where}: missing {', '.join(missing)}", path=path)
        graded = row["graded_list"]
        if not isinstance(graded, list) or not all(isinstance(g, bool) for g in graded):
            raise ResultsFileError(f"{where}: graded_list is not a list of booleans", path=path)
        try:
            DateWindow().contains(str(row["contest_date"]))
        except ValueError:
            raise ResultsFileError(
                f"{where}: contest_date {row['contest_date']!r} is not an ISO date", path=path
            ) from None
        rows.append(
            LcbRow(
                str(row["question_id"]),
                str(row["contest_date"]),
                str(row["difficulty"]),
                str(row["platform"]),
                tuple(graded),
                row,
            )
        )
    return rows


def eval_all_row(
    task: Task,
    output_list: Sequence[str],
    code_list: Sequence[str],
    graded_list: Sequence[bool],
    metadata: Sequence[Mapping[str, Any]],
) -> dict[str, Any]:
    """One problem's row, as insert_output_evaluation builds it (metadata as JSON strings)."""
    meta = task.metadata
    return {
        "question_title": meta["question_title"],
        "question_content": task.prompts["complete"],
        "platform": meta["platform"],
        "question_id": task.task_id,
        "contest_id": meta["contest_id"],
        "contest_date": meta["contest_date"],
        "starter_code": meta["starter_code"],
        "difficulty": meta["difficulty"],
        "output_list": list(output_list),
        "code_list": list(code_list),
        "graded_list": list(graded_list),
        "pass@1": graded_list.count(True) / len(graded_list) if graded_list else 0.0,
        "metadata": [json.dumps(m) for m in metadata],
    }


def write_eval_all(path: Path, rows: Sequence[Mapping[str, Any]]) -> None:
    """The rows sorted by question id, as the runner's json.dump(rows, f, indent=4) writes
    them (through a temporary file and a rename)."""
    ordered = sorted(rows, key=lambda row: str(row["question_id"]))
    temporary = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    with open(temporary, "w", encoding="utf-8") as handle:
        json.dump(ordered, handle, indent=4)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, path)


def eval_all_path(results_path: Path) -> Path:
    """`<stem>_codegeneration_output_eval_all.json` beside `<stem>_eval_results.json`."""
    return results_path.with_name(f"{results_stem(results_path)}_{EVAL_ALL_SUFFIX}")


# ---- as a run -----------------------------------------------------------------------------


def _sample(row: LcbRow, index: int) -> SampleResult:
    codes = row.row.get("code_list") or []
    metadata = row.row.get("metadata") or []
    text = metadata[index] if index < len(metadata) and isinstance(metadata[index], str) else ""
    try:
        meta = json.loads(text) if text else {}
    except ValueError:
        meta = {}
    passed = row.graded[index]
    code = meta.get("error_code") if isinstance(meta, dict) else None
    details = {} if passed or not text else {"livecodebench": text}
    return SampleResult(
        task_id=row.question_id,
        sample_index=index,
        status="pass" if passed else ("timeout" if code == -1 else "fail"),
        solution=str(codes[index]) if index < len(codes) else "",
        details=details,
        category=None if passed else _CATEGORIES.get(code) if isinstance(code, int) else None,
        reason=None if passed or not isinstance(meta, dict) else meta.get("error_message"),
    )


_CATEGORIES = {
    -1: ErrorCategory.TIMEOUT,
    -2: ErrorCategory.ASSERTION_FAILED,
    -3: ErrorCategory.TIMEOUT,
    -4: ErrorCategory.EXCEPTION,
    -5: ErrorCategory.KILLED,
}


def _info(row: LcbRow) -> dict[str, Any]:
    return {
        "contest_date": row.contest_date,
        "difficulty": row.difficulty,
        "platform": row.platform,
    }


def run_from_eval_all(path: Path, benchmark: str) -> RunResults:
    """An official eval_all file as a run of `benchmark`: each row's generations are its
    task's samples."""
    rows = read_eval_all(path)
    return RunResults(
        path=path,
        date=None,
        tasks={
            row.question_id: tuple(_sample(row, i) for i in range(len(row.graded))) for row in rows
        },
        task_info={row.question_id: _info(row) for row in rows},
        format=FORMAT,
        known_benchmark=benchmark,
    )


def with_task_info(run: RunResults) -> RunResults:
    """A passbench run with the dates and difficulties of the eval_all file `evaluate` wrote
    beside it (the run unchanged without the file, or when it already has them)."""
    if run.task_info:
        return run
    beside = eval_all_path(run.path)
    if not beside.is_file():
        return run
    return replace(run, task_info={row.question_id: _info(row) for row in read_eval_all(beside)})
