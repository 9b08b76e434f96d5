"""Writing result files: `<stem>_eval_results.json`, `<stem>_pass_at_k.json`, `ground_truth.json`.

The documents are built here from records (or from entries a caller built as data), in the
official formats with passbench's fields beside the official ones (docs/results-format.md), and
written atomically (a temporary file, fsync, a rename). Every file carries the `"passbench"` block
with `schema_version` and `passbench_version` first; `read.py` checks them.

The per-sample entries and per-task ground-truth entries are plain mappings: a benchmark that
records more per sample (HumanEval+'s `base_status`, `plus_status`, ...) adds keys to its
entries, and a file-level field (EvalPlus's `hash`) goes in `extra`; nothing here changes.

    entries = [sample_entry(sample, code, result) for ...]
    write_eval_results(path, entries, meta)
    write_pass_at_k(path, scores, meta, model=model_name(stem), split=..., ...)
"""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from passbench.core.records import RESULT_SCHEMA_VERSION, ExecResult, Sample
from passbench.core.runs import EVAL_RESULTS_SUFFIX, NO_ANSWER_TRUNCATED, PASS_AT_K_SUFFIX
from passbench.core.samplefile import write_json_atomic
from passbench.core.version import __version__
from passbench.stages.benchmarks import benchmark_names

#: The fields every official per-sample entry has, in the official order.
OFFICIAL_SAMPLE_FIELDS = ("task_id", "solution", "status", "details")
GROUND_TRUTH_FILE = "ground_truth.json"


_DIGIT_RUNS = re.compile(r"(\d+)")


def task_order(task_id: str) -> tuple[str | int, ...]:
    """Sort key in natural order, whatever the benchmark's id shape: "BigCodeBench/2" before
    "BigCodeBench/10", "HumanEval_2_x" before "HumanEval_10_y" (digit runs compare as numbers)."""
    parts = _DIGIT_RUNS.split(task_id)  # text, digits, text, ...: the same kind at each position
    return tuple(int(part) if index % 2 else part for index, part in enumerate(parts))


def now() -> str:
    """The `date` of a result file, as the official evaluator writes it."""
    return _dt.datetime.now().strftime("%Y-%m-%d %H:%M")


def result_paths(folder: Path, stem: str) -> tuple[Path, Path]:
    """`<stem>_eval_results.json` and `<stem>_pass_at_k.json` in `folder`."""
    return folder / f"{stem}_{EVAL_RESULTS_SUFFIX}", folder / f"{stem}_{PASS_AT_K_SUFFIX}"


def model_name(stem: str, benchmark: str | None = None) -> str:
    """The `model` of `_pass_at_k.json`: the stem before `--<benchmark>-`, as the official
    evaluator cuts its `--bigcodebench-` (a benchmark's `file_label` starts with its name).
    Without `benchmark`, before the first registered benchmark's name found in the stem."""
    names = (benchmark,) if benchmark else benchmark_names()
    for name in names:
        marker = f"--{name}-"
        if marker in stem:
            return stem.split(marker)[0]
    return stem


# ---- entries from records -------------------------------------------------------------------


def sample_entry(sample: Sample, solution: str, result: ExecResult) -> dict[str, Any]:
    """One sample's entry: the official fields, then passbench's (sample_index is the index
    the generator gave the sample)."""
    entry: dict[str, Any] = {
        "task_id": sample.task_id,
        "solution": solution,
        "status": result.status,
        "details": dict(result.details),
        "sample_index": sample.sample_index,
        "category": result.category.value if result.category else None,
        "reason": result.reason,
        "duration_s": round(result.duration_s, 4),
        "wall_s": round(result.wall_s, 4),
        "tests_run": result.tests_run,
        "isolation": result.isolation.value,  # what this verdict ran under (journal reuse too)
    }
    status = (result.outputs or {}).get("multipl_e_status")
    if isinstance(status, str):  # MultiPL-E's own: OK, SyntaxError, Exception, Timeout
        entry["multipl_e_status"] = status
    if sample.raw_solution is not None:
        entry["raw_solution"] = sample.raw_solution
    if sample.sanitize_error:
        entry["sanitize_error"] = sample.sanitize_error
    if sample.truncated:
        # run all the same, so pass@k is the official one; a failure is labelled, not a test's
        entry["truncated"] = sample.truncated
        if result.status != "pass":
            entry["verdict"] = NO_ANSWER_TRUNCATED
    return entry


def ground_truth_entry(result: ExecResult) -> dict[str, Any]:
    """One task's entry in ground_truth.json: the canonical solution's verdict and time."""
    return {
        "status": result.status,
        "duration_s": round(result.duration_s, 4),
        "category": result.category.value if result.category else None,
        "reason": result.reason,
        "isolation": result.isolation.value,
    }


# ---- documents -------------------------------------------------------------------------------


def passbench_block(meta: Mapping[str, Any]) -> dict[str, Any]:
    """The `"passbench"` block: schema and passbench version first, then `meta`."""
    return {
        "schema_version": RESULT_SCHEMA_VERSION,
        "passbench_version": __version__,
        **{key: value for key, value in meta.items() if key not in _STAMPS},
    }


_STAMPS = ("schema_version", "passbench_version")


def eval_results_document(
    entries: Iterable[Mapping[str, Any]],
    meta: Mapping[str, Any],
    *,
    date: str | None = None,
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """`{"date", "eval": {task_id: [entry, ...]}, "passbench", **extra}`: tasks in task order,
    each task's entries by `sample_index` (in the given order where there is none)."""
    grouped: dict[str, list[Mapping[str, Any]]] = {}
    for entry in entries:
        missing = [name for name in OFFICIAL_SAMPLE_FIELDS if name not in entry]
        if missing:
            raise ValueError(f"a result entry lacks {', '.join(missing)}: {dict(entry)!r:.200}")
        grouped.setdefault(str(entry["task_id"]), []).append(entry)
    block = {
        task_id: [dict(entry) for entry in _by_index(grouped[task_id])]
        for task_id in sorted(grouped, key=task_order)
    }
    document: dict[str, Any] = {"date": date or now(), "eval": block}
    document.update(extra or {})
    document["passbench"] = passbench_block(meta)
    return document


def _by_index(entries: list[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return sorted(entries, key=lambda entry: int(entry.get("sample_index", 0)))


def pass_at_k_document(
    scores: Mapping[str, float],
    meta: Mapping[str, Any],
    *,
    model: str,
    split: str,
    subset: str,
    calibrated: bool,
    gt_pass_rate: float | None,
    failed_tasks: Iterable[str],
    n_tasks: int,
    n_samples: int,
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """`{"pass@1": ..., "model", "split", "subset", "calibrated", "gt_pass_rate",
    "failed_tasks", ..., "passbench"}`."""
    document: dict[str, Any] = dict(scores)
    document.update(
        {
            "model": model,
            "split": split,
            "subset": subset,
            "calibrated": calibrated,
            "gt_pass_rate": gt_pass_rate,
            "failed_tasks": list(failed_tasks),
            "n_tasks": n_tasks,
            "n_samples": n_samples,
        }
    )
    document.update(extra or {})
    document["passbench"] = passbench_block(meta)
    return document


def ground_truth_document(
    tasks: Mapping[str, Mapping[str, Any]],
    meta: Mapping[str, Any],
    *,
    date: str | None = None,
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """`{"gt_pass_rate", "failed_tasks", "tasks": {task_id: entry}, "date", "passbench"}`;
    a task passes when its entry's status is "pass"."""
    ordered = {task_id: dict(tasks[task_id]) for task_id in sorted(tasks, key=task_order)}
    failed = [task_id for task_id, entry in ordered.items() if entry.get("status") != "pass"]
    document: dict[str, Any] = {
        "gt_pass_rate": (len(ordered) - len(failed)) / len(ordered) if ordered else float("nan"),
        "failed_tasks": failed,
        "tasks": ordered,
        "date": date or now(),
    }
    document.update(extra or {})
    document["passbench"] = passbench_block(meta)
    return document


# ---- writing ---------------------------------------------------------------------------------


def write_eval_results(
    path: Path,
    entries: Iterable[Mapping[str, Any]],
    meta: Mapping[str, Any],
    *,
    date: str | None = None,
    extra: Mapping[str, Any] | None = None,
) -> Path:
    """Build and atomically write `<stem>_eval_results.json`."""
    write_json_atomic(path, eval_results_document(entries, meta, date=date, extra=extra))
    return path


def write_pass_at_k(
    path: Path, scores: Mapping[str, float], meta: Mapping[str, Any], **fields: Any
) -> Path:
    """Build and atomically write `<stem>_pass_at_k.json` (`fields`: see pass_at_k_document)."""
    write_json_atomic(path, pass_at_k_document(scores, meta, **fields))
    return path


def write_ground_truth(
    path: Path,
    tasks: Mapping[str, Mapping[str, Any]],
    meta: Mapping[str, Any],
    *,
    date: str | None = None,
    extra: Mapping[str, Any] | None = None,
) -> Path:
    """Build and atomically write `ground_truth.json`."""
    write_json_atomic(path, ground_truth_document(tasks, meta, date=date, extra=extra))
    return path
