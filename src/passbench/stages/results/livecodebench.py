"""LiveCodeBench's own result file, `*_codegeneration_output_eval_all.json`: read, write, score.

The official runner (lcb_runner/runner/main.py, CodeGenerationProblem.insert_output_evaluation)
writes one JSON list, one row per problem sorted by question id, with these keys in this order:

    question_title, question_content, platform, question_id, contest_id, contest_date (ISO),
    starter_code, difficulty, output_list (raw model answers), code_list (extracted code),
    graded_list ([bool] per generation), pass@1, metadata (one JSON *string* per generation:
    {"execution time": s} on a pass, else {"error", "error_code", "error_message", "inputs",
    "expected", "output"} as testing_util.py reports the first failing test)

`passbench inspect FILE` reads such a file as a run; `passbench evaluate` on livecodebench writes
one beside its own result files. Scores by contest-date window are the leaderboard's: the mean
of the rows' pass@1 over the problems whose contest date lies in the window.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from passbench.core.errors import InputError, ResultsFileError
from passbench.core.records import ErrorCategory, Task
from passbench.stages.benchmarks.selection import DateWindow
from passbench.stages.results.read import RunResults, SampleResult, results_stem

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
DIFFICULTIES = ("easy", "medium", "hard")


@dataclass(frozen=True)
class LcbRow:
    """The fields of one row that scoring reads (the row itself is kept whole)."""

    question_id: str
    contest_date: str
    difficulty: str
    platform: str
    graded: tuple[bool, ...]
    row: Mapping[str, Any]

    @property
    def pass_at_1(self) -> float:
        return sum(self.graded) / len(self.graded) if self.graded else 0.0


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


def run_from_eval_all(path: Path) -> RunResults:
    """An official eval_all file as a run: each row's generations are its task's samples."""
    rows = read_eval_all(path)
    return RunResults(
        path=path,
        date=None,
        tasks={
            row.question_id: tuple(_sample(row, i) for i in range(len(row.graded))) for row in rows
        },
        task_info={row.question_id: _info(row) for row in rows},
        format="livecodebench",
    )


def with_task_info(run: RunResults) -> RunResults:
    """A passbench livecodebench run with the dates and difficulties of the eval_all file
    `evaluate` wrote beside it (the run unchanged for other benchmarks or without the file)."""
    if run.benchmark != "livecodebench" or run.task_info:
        return run
    beside = eval_all_path(run.path)
    if not beside.is_file():
        return run
    return replace(run, task_info={row.question_id: _info(row) for row in read_eval_all(beside)})


def lcb_rows(run: RunResults) -> list[LcbRow]:
    """The run's tasks as scoring rows (dates from `task_info`); InputError when it has none."""
    missing = [
        task_id for task_id in run.tasks if "contest_date" not in run.task_info.get(task_id, {})
    ]
    if missing:
        raise InputError(
            f"{run.path}: no contest dates for {len(missing)} task(s), e.g. {missing[0]}: "
            "--since/--until and date windows need a LiveCodeBench run (its "
            f"*_{EVAL_ALL_SUFFIX}, or the passbench run with that file beside it)",
            field="since",
        )
    rows = []
    for task_id, samples in run.tasks.items():
        info = run.task_info[task_id]
        rows.append(
            LcbRow(
                task_id,
                str(info["contest_date"]),
                str(info.get("difficulty", "?")),
                str(info.get("platform", "?")),
                tuple(sample.passed for sample in samples),
                {},
            )
        )
    return rows


def require_dates(run: RunResults, option: str) -> None:
    """InputError in one line unless every task of `run` has a contest date."""
    undated = [
        task_id for task_id in run.tasks if "contest_date" not in run.task_info.get(task_id, {})
    ]
    if undated:
        raise InputError(
            f"{run.path}: --{option} needs a benchmark with contest dates (livecodebench); "
            f"{run.benchmark or 'this run'} has none for {len(undated)} task(s), e.g. {undated[0]}",
            field=option,
        )


def restrict_to_window(run: RunResults, window: DateWindow) -> RunResults:
    """The run with only the tasks whose contest date lies in `window`."""
    if not window.active:
        return run
    kept = {row.question_id for row in lcb_rows(run) if window.contains(row.contest_date)}
    if not kept:
        raise InputError(
            f"{run.path}: no task's contest date is {window.describe()}", field="since"
        )
    return replace(run, tasks={k: v for k, v in run.tasks.items() if k in kept})


# ---- scores -------------------------------------------------------------------------------


@dataclass(frozen=True)
class WindowScore:
    """pass@1 over the problems of one date window, overall and per difficulty."""

    window: DateWindow
    problems: int
    pass_at_1: float  # mean over the problems, in [0, 1]
    by_difficulty: Mapping[str, tuple[int, float]]  # difficulty -> (problems, pass@1)
    by_platform: Mapping[str, tuple[int, float]]


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def window_score(rows: Sequence[LcbRow], window: DateWindow) -> WindowScore:
    chosen = [row for row in rows if window.contains(row.contest_date)]

    def grouped(key: str, order: Sequence[str]) -> dict[str, tuple[int, float]]:
        groups: dict[str, list[float]] = {}
        for row in chosen:
            groups.setdefault(getattr(row, key), []).append(row.pass_at_1)
        names = [name for name in order if name in groups]
        names += sorted(name for name in groups if name not in order)
        return {name: (len(groups[name]), _mean(groups[name])) for name in names}

    return WindowScore(
        window,
        len(chosen),
        _mean([row.pass_at_1 for row in chosen]),
        grouped("difficulty", DIFFICULTIES),
        grouped("platform", ()),
    )


def window_scores(rows: Sequence[LcbRow], window: DateWindow) -> list[WindowScore]:
    """Every problem's score, then the window's when one is given (side by side)."""
    scores = [window_score(rows, DateWindow())]
    if window.active:
        scores.append(window_score(rows, window))
    return scores


def scores_dict(path: Path, scores: Sequence[WindowScore]) -> dict[str, Any]:
    """The scores as JSON-ready data (`inspect --format json`): every problem's first."""
    return {
        "file": str(path),
        "windows": [
            {
                "window": score.window.describe(),
                "since": str(score.window.since) if score.window.since else None,
                "until": str(score.window.until) if score.window.until else None,
                "problems": score.problems,
                "pass@1": score.pass_at_1,
                "by_difficulty": {
                    name: {"problems": n, "pass@1": value}
                    for name, (n, value) in score.by_difficulty.items()
                },
                "by_platform": {
                    name: {"problems": n, "pass@1": value}
                    for name, (n, value) in score.by_platform.items()
                },
            }
            for score in scores
        ],
    }
