"""Reading result files: passbench's own and the official BigCodeBench evaluator's.

(`write.py` writes ours; the two are the only code that knows the files' layout.)

Both write `<stem>_eval_results.json` (`{"date", "eval": {task_id: [sample, ...]}}`) and
`<stem>_pass_at_k.json` (see docs/results-format.md). passbench adds fields per sample
(`category`, `reason`, `duration_s`, ...) and a top-level `"passbench"` block; the official files
have only `task_id`, `solution`, `status`, `details`. Both read into the same records here, with
what a file does not say left as None, so every consumer (inspect, compare, leaderboards) treats
the two alike. This is the I/O edge: everything is validated here, with the file and field named.

Our files carry `passbench.schema_version`; one from a newer schema than this passbench reads is
an error naming the passbench version that wrote it. Official files (no "passbench" block) and
passbench blocks without a version (the earliest files) are read as they are.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from passbench.core.errors import ResultsFileError
from passbench.core.records import RESULT_SCHEMA_VERSION, ErrorCategory
from passbench.core.runs import (
    EVAL_RESULTS_SUFFIX,
    PASS_AT_K_SUFFIX,
    RunResults,
    SampleResult,
    results_stem,
)
from passbench.core.version import __version__
from passbench.stages.benchmarks import benchmark_names, get_benchmark

_STATUSES = ("pass", "fail", "timeout")


def guess_benchmark(tasks: Mapping[str, Any]) -> str | None:
    """The benchmark an official file is about, from its task ids ("BigCodeBench/12"): the
    first registered benchmark whose `parse_task_id` takes every id, among those whose ids name
    them (`guess_from_ids`; HumanEval/ ids give `humaneval`, the first of its family)."""
    if not tasks:
        return None
    for name in benchmark_names():
        bench = get_benchmark(name)
        if bench.info.guess_from_ids and all(bench.parse_task_id(task_id) for task_id in tasks):
            return name
    return None


def sibling_pass_at_k(path: Path) -> Path:
    """`x_pass_at_k.json` beside `x_eval_results.json`, as the official evaluator names it."""
    if path.name.endswith(EVAL_RESULTS_SUFFIX):
        return path.with_name(path.name[: -len(EVAL_RESULTS_SUFFIX)] + PASS_AT_K_SUFFIX)
    return path.with_name(results_stem(path) + "_" + PASS_AT_K_SUFFIX)


def sibling_eval_results(path: Path) -> Path:
    """`x_eval_results.json` beside `x_pass_at_k.json`."""
    return path.with_name(path.name[: -len(PASS_AT_K_SUFFIX)] + EVAL_RESULTS_SUFFIX)


def load_results(path: str | Path, pass_at_k_path: str | Path | None = None) -> RunResults:
    """Read an `_eval_results.json` and, when it exists, its `_pass_at_k.json`.

    `path` may also name the `_pass_at_k.json`; its `_eval_results.json` sibling is read then.
    `pass_at_k_path` given explicitly must exist; the sibling is optional.
    """
    path = Path(path)
    official = _official_run(path)
    if official is not None:
        return official
    if path.name.endswith(PASS_AT_K_SUFFIX) and not path.name.endswith(EVAL_RESULTS_SUFFIX):
        if pass_at_k_path is None:
            pass_at_k_path = path
        path = sibling_eval_results(path)
    document = _read_json(path)
    if not isinstance(document, dict):
        raise ResultsFileError(
            "expected a JSON object with an 'eval' field (an _eval_results.json file)", path=path
        )
    if "eval" not in document and isinstance(document.get("tasks"), dict):
        return _read_ground_truth(document, path)
    if "eval" not in document:
        hint = " (this looks like a _pass_at_k.json)" if "pass@1" in document else ""
        raise ResultsFileError(f"no 'eval' field{hint}", path=path, field="eval")
    meta = _read_meta(document, path)
    tasks = _read_eval(document["eval"], path)
    date = document.get("date")

    side_path: Path | None = sibling_pass_at_k(path)
    if pass_at_k_path is not None:
        side_path = Path(pass_at_k_path)  # named by the user: must exist
    elif side_path is not None and not side_path.is_file():
        side_path = None
    side = _read_pass_at_k(side_path) if side_path is not None else None
    run = RunResults(
        path=path,
        date=date if isinstance(date, str) else None,
        tasks=tasks,
        meta=meta,
        pass_at_k_file=side,
        pass_at_k_path=side_path,
    )
    return _with_official_files(_guessed(run))


def _guessed(run: RunResults) -> RunResults:
    """The run knowing its benchmark from its task ids when the file does not name it (the
    official evaluator's files, the earliest passbench blocks)."""
    if isinstance(run.meta.get("benchmark"), str):
        return run
    return replace(run, known_benchmark=guess_benchmark(run.tasks))


def _official_run(path: Path) -> RunResults | None:
    """The run in `path` when it is a file in some benchmark's own result format (each
    registered benchmark's `read_official_results` is asked in turn), else None."""
    for name in benchmark_names():
        run = get_benchmark(name).read_official_results(path)
        if run is not None:
            return run
    return None


def _with_official_files(run: RunResults) -> RunResults:
    """The run with what its benchmark's own files beside it add (`attach_official_results`),
    when the run names a registered benchmark."""
    name = run.benchmark
    if name is None or name not in benchmark_names():
        return run
    return get_benchmark(name).attach_official_results(run)


def _read_ground_truth(document: dict[str, Any], path: Path) -> RunResults:
    """`ground_truth.json` from `passbench evaluate --ground-truth`: one verdict per task on
    its canonical solution (no solution text or tracebacks are stored there)."""
    meta = _read_meta(document, path)
    tasks: dict[str, tuple[SampleResult, ...]] = {}
    for task_id, entry in document["tasks"].items():
        where = f"tasks[{task_id!r}]"
        if not isinstance(entry, dict):
            raise ResultsFileError("must be a JSON object", path=path, field=where)
        item = {"task_id": task_id, "solution": "", "details": {}, **entry}
        tasks[task_id] = (_read_sample(task_id, 0, item, path, where),)
    side = {
        "model": "ground truth",
        "gt_pass_rate": document.get("gt_pass_rate"),
        "failed_tasks": document.get("failed_tasks", []),
        "gt_failures": {
            task_id: {"category": entry.get("category"), "reason": entry.get("reason", "")}
            for task_id, entry in document["tasks"].items()
            if entry.get("status") != "pass"
        },
    }
    date = document.get("date")
    run = RunResults(
        path=path,
        date=date if isinstance(date, str) else None,
        tasks=tasks,
        meta=meta,
        pass_at_k_file=side,
        pass_at_k_path=path,
    )
    return _guessed(run)


def _read_meta(document: Mapping[str, Any], path: Path) -> dict[str, Any]:
    """The "passbench" block ({} for an official file), after checking its schema version."""
    meta = document.get("passbench")
    if meta is None:
        return {}
    if not isinstance(meta, dict):
        raise ResultsFileError("must be a JSON object", path=path, field="passbench")
    check_schema(meta, path)
    return meta


def check_schema(meta: Mapping[str, Any], path: Path) -> None:
    """A file from a newer schema than this passbench reads is an error saying which passbench
    wrote it (so which one reads it)."""
    version = meta.get("schema_version", 1)
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise ResultsFileError(
            f"must be a positive integer, got {version!r}",
            path=path,
            field="passbench.schema_version",
        )
    if version > RESULT_SCHEMA_VERSION:
        writer = meta.get("passbench_version")
        by = f"passbench {writer}" if isinstance(writer, str) else "a newer passbench"
        needed = f"passbench {writer} or newer" if isinstance(writer, str) else "a newer passbench"
        raise ResultsFileError(
            f"written by {by} (result schema {version}); this passbench {__version__} reads "
            f"schema {RESULT_SCHEMA_VERSION} and older: upgrade to {needed}",
            path=path,
            field="passbench.schema_version",
        )


def _read_json(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ResultsFileError("file not found", path=path) from None
    except IsADirectoryError:
        raise ResultsFileError("is a directory, expected a JSON file", path=path) from None
    except UnicodeDecodeError:
        raise ResultsFileError("not valid UTF-8", path=path) from None
    except OSError as error:
        raise ResultsFileError(f"cannot read: {error.strerror}", path=path) from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise ResultsFileError(
            f"not valid JSON: {error.msg} (column {error.colno})", path=path, line=error.lineno
        ) from None


def _read_pass_at_k(path: Path) -> dict[str, Any]:
    document = _read_json(path)
    if not isinstance(document, dict):
        raise ResultsFileError("expected a JSON object (a _pass_at_k.json file)", path=path)
    _read_meta(document, path)
    rate = document.get("gt_pass_rate")
    if rate is not None and (not isinstance(rate, (int, float)) or isinstance(rate, bool)):
        raise ResultsFileError("must be a number", path=path, field="gt_pass_rate")
    return document


def _read_eval(value: Any, path: Path) -> dict[str, tuple[SampleResult, ...]]:
    if not isinstance(value, dict):
        raise ResultsFileError("must map task ids to lists of samples", path=path, field="eval")
    tasks: dict[str, tuple[SampleResult, ...]] = {}
    for task_id, samples in value.items():
        where = f"eval[{task_id!r}]"
        if not isinstance(samples, list):
            raise ResultsFileError("must be a list of samples", path=path, field=where)
        read = [
            _read_sample(task_id, i, item, path, f"{where}[{i}]") for i, item in enumerate(samples)
        ]
        # Ours carry sample_index (the generator's); official lists are numbered by position.
        seen: set[int] = set()
        for i, sample in enumerate(read):
            if sample.sample_index in seen:
                raise ResultsFileError(
                    f"{sample.sample_index} appears twice in the samples of {task_id!r}",
                    path=path,
                    field=f"{where}[{i}].sample_index",
                )
            seen.add(sample.sample_index)
        read.sort(key=lambda sample: sample.sample_index)
        tasks[task_id] = tuple(read)
    return tasks


def _read_sample(task_id: str, position: int, item: Any, path: Path, where: str) -> SampleResult:
    if not isinstance(item, dict):
        raise ResultsFileError("must be a JSON object", path=path, field=where)
    status = item.get("status")
    if status not in _STATUSES:
        raise ResultsFileError(
            f"must be one of {', '.join(_STATUSES)}, got {status!r}",
            path=path,
            field=f"{where}.status",
        )
    recorded_id = item.get("task_id", task_id)
    if recorded_id != task_id:
        raise ResultsFileError(
            f"is {recorded_id!r} inside the list of {task_id!r}",
            path=path,
            field=f"{where}.task_id",
        )
    solution = item.get("solution", "")
    if not isinstance(solution, str):
        raise ResultsFileError("must be a string", path=path, field=f"{where}.solution")
    details = item.get("details") or {}
    if isinstance(details, list):
        # Old official files stored details as a list; keep what it says, keyed by position.
        details = {str(i): str(entry) for i, entry in enumerate(details)}
    if not isinstance(details, dict):
        raise ResultsFileError(
            "must map test names to tracebacks", path=path, field=f"{where}.details"
        )
    category = item.get("category")
    if category is not None:
        try:
            category = ErrorCategory(category)
        except ValueError:
            known = ", ".join(member.value for member in ErrorCategory)
            raise ResultsFileError(
                f"unknown category {category!r} (known: {known})",
                path=path,
                field=f"{where}.category",
            ) from None
    index = item.get("sample_index", position)
    if not isinstance(index, int) or isinstance(index, bool) or index < 0:
        raise ResultsFileError(
            "must be a non-negative integer", path=path, field=f"{where}.sample_index"
        )
    return SampleResult(
        task_id=task_id,
        sample_index=index,
        status=status,
        solution=solution,
        details={str(name): str(text) for name, text in details.items()},
        category=category,
        reason=_optional(item, "reason", str, path, where),
        duration_s=_optional_number(item, "duration_s", path, where),
        wall_s=_optional_number(item, "wall_s", path, where),
        tests_run=_optional(item, "tests_run", int, path, where),
        isolation=_optional(item, "isolation", str, path, where),
        multipl_e_status=_optional(item, "multipl_e_status", str, path, where),
        functional=_optional_flag(item, "functional", path, where),
        secure=_optional_flag(item, "secure", path, where),
        raw_solution=_optional(item, "raw_solution", str, path, where),
        truncated=_optional(item, "truncated", str, path, where) or None,
        language=_optional(item, "language", str, path, where) or None,
        sanitize_error=_optional(item, "sanitize_error", str, path, where) or None,
    )


def _optional(item: Mapping[str, Any], key: str, kind: type, path: Path, where: str) -> Any:
    value = item.get(key)
    if value is None:
        return None
    if not isinstance(value, kind) or isinstance(value, bool):
        raise ResultsFileError(f"must be {kind.__name__}", path=path, field=f"{where}.{key}")
    return value


def _optional_flag(item: Mapping[str, Any], key: str, path: Path, where: str) -> bool | None:
    value = item.get(key)
    if value is None:
        return None
    if not isinstance(value, bool):
        raise ResultsFileError("must be true or false", path=path, field=f"{where}.{key}")
    return value


def _optional_number(item: Mapping[str, Any], key: str, path: Path, where: str) -> float | None:
    value = item.get(key)
    if value is None:
        return None
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        raise ResultsFileError("must be a number", path=path, field=f"{where}.{key}")
    return float(value)
