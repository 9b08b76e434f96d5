"""A run on a benchmark and the same samples on its corrected release, side by side.

A corrected release (a benchmark whose `corrects(version)` names the release it replaces) keeps
the original's task ids and changes some tasks' fields; it may leave tasks out. Given the two
runs of the same samples, this module says:

- both pass@1 figures: the official one over the original run's tasks, the corrected one over
  the corrected run's, and the official one again over the tasks both runs have (the same
  denominator as the corrected figure);
- the tasks whose verdict changed (the share of the task's samples that pass differs), each with
  the fields the correction touched, compared field by field on the two releases' task records;
  a change on a task whose fields are all equal is run-to-run variation, and is said so;
- the tasks the correction excluded, with their official verdicts: never counted as failures.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from passbench.core import scoring
from passbench.core.errors import InputError
from passbench.core.records import ErrorCategory, Task
from passbench.stages.benchmarks import DataSettings, Original, benchmark_names, get_benchmark
from passbench.stages.results import RunResults
from passbench.stages.results import task_order as _task_order

#: Task fields in the order they are reported: what the tests run first, then the prompts.
_FIELD_ORDER = ("test", "canonical_solution", "code_prompt", "entry_point", "libs")
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class FieldChange:
    """One field of a task that differs between the original release and the correction."""

    field: str  # "test", "canonical_solution", "code_prompt", "complete_prompt", "libs", ...
    # only whitespace (text) or only the order (lists) differs: it cannot change what runs
    cosmetic: bool = False

    def __str__(self) -> str:
        if not self.cosmetic:
            return self.field
        return f"{self.field} ({'order' if self.field == 'libs' else 'whitespace'} only)"


def task_fields(task: Task) -> dict[str, Any]:
    """A task's comparable fields by name: each split's prompt as `<split>_prompt`."""
    fields: dict[str, Any] = {
        "test": task.test,
        "canonical_solution": task.canonical_solution,
        "code_prompt": task.code_prompt,
        "entry_point": task.entry_point,
        "libs": task.libs,
    }
    for split, prompt in task.prompts.items():
        fields[f"{split}_prompt"] = prompt
    return fields


def field_changes(original: Task, corrected: Task) -> tuple[FieldChange, ...]:
    """The fields of `corrected` that differ from `original`'s, in report order."""
    before, after = task_fields(original), task_fields(corrected)
    names = [*_FIELD_ORDER, *sorted((set(before) | set(after)) - set(_FIELD_ORDER))]
    changes = []
    for name in names:
        old, new = before.get(name), after.get(name)
        if old == new:
            continue
        changes.append(FieldChange(name, _cosmetic(old, new)))
    return tuple(changes)


def _cosmetic(old: Any, new: Any) -> bool:
    if isinstance(old, str) and isinstance(new, str):
        return _SPACE.sub("", old) == _SPACE.sub("", new)
    if isinstance(old, tuple) and isinstance(new, tuple):
        return sorted(old) == sorted(new)
    return False


@dataclass(frozen=True)
class TaskSetDiff:
    """Two releases of one benchmark compared task by task."""

    original: str  # "bigcodebench v0.1.4"
    corrected: str
    changed: Mapping[str, tuple[FieldChange, ...]]  # task id -> its changed fields (only those)
    excluded: tuple[str, ...]  # the original's tasks the correction lacks
    added: tuple[str, ...]  # the correction's tasks the original lacks
    n_original: int
    n_corrected: int


def diff_task_sets(
    original: Sequence[Task], corrected: Sequence[Task], labels: tuple[str, str]
) -> TaskSetDiff:
    before = {task.task_id: task for task in original}
    after = {task.task_id: task for task in corrected}
    changed = {}
    for task_id, task in after.items():
        if task_id in before and (changes := field_changes(before[task_id], task)):
            changed[task_id] = changes
    return TaskSetDiff(
        original=labels[0],
        corrected=labels[1],
        changed=changed,
        excluded=tuple(sorted(set(before) - set(after), key=_task_order)),
        added=tuple(sorted(set(after) - set(before), key=_task_order)),
        n_original=len(before),
        n_corrected=len(after),
    )


def load_task_diff(
    corrected_name: str, corrected_version: str, original: Original, data: DataSettings
) -> TaskSetDiff:
    """Both releases' full task sets, loaded through the registry, compared."""
    fixed = get_benchmark(corrected_name).load(corrected_version, data=data)
    old = get_benchmark(original.benchmark).load(original.version, data=data)
    labels = (f"{old.benchmark} {old.version}", f"{fixed.benchmark} {fixed.version}")
    return diff_task_sets(old.all_tasks, fixed.all_tasks, labels)


# ---- the two runs ------------------------------------------------------------------------


@dataclass(frozen=True)
class RunPair:
    """The original run and the corrected run of the same samples, with the release the
    correction replaces (its version: the one the original run recorded, else the declared)."""

    original_run: RunResults
    corrected_run: RunResults
    corrected_version: str
    original: Original


def correcting_benchmarks() -> tuple[str, ...]:
    """The registered benchmarks whose default version corrects another's release."""
    return tuple(
        name
        for name in benchmark_names()
        if get_benchmark(name).corrects(get_benchmark(name).info.default_version) is not None
    )


def original_of(name: str, version: str | None) -> tuple[str, Original]:
    """(the version, the release it corrects) of benchmark `name`; InputError when `name`
    corrects nothing."""
    bench = get_benchmark(name)
    version = version or bench.info.default_version
    original = bench.corrects(version)
    if original is None:
        offered = ", ".join(correcting_benchmarks()) or "none is registered"
        raise InputError(
            f"{name} {version} is not a corrected release of another benchmark; corrected "
            f"releases: {offered}",
            field="benchmark",
        )
    return version, original


def pair_runs(first: RunResults, second: RunResults) -> RunPair:
    """Which of two runs is the corrected one (its benchmark corrects the other's), in either
    order; InputError when neither is, or when they cannot be runs of the same samples."""
    for original_run, corrected_run in ((first, second), (second, first)):
        name = corrected_run.benchmark
        if name is None or name not in benchmark_names():
            continue
        version = corrected_run.dataset_version or get_benchmark(name).info.default_version
        original = get_benchmark(name).corrects(version)
        if original is None:
            continue
        if original_run.benchmark != original.benchmark:
            raise InputError(
                f"{corrected_run.path} is a {name} run, which corrects {original.benchmark}; "
                f"{original_run.path} is a {original_run.benchmark or 'unknown benchmark'} run",
                field="RESULTS",
            )
        _same_protocol(original_run, corrected_run)
        if original_run.dataset_version and original_run.dataset_version != original.version:
            original = Original(original.benchmark, original_run.dataset_version, original.excluded)
        return RunPair(original_run, corrected_run, version, original)
    raise InputError(
        f"neither {first.path} nor {second.path} is a run of a corrected release "
        f"({', '.join(correcting_benchmarks())}): give an original run and a corrected one",
        field="RESULTS",
    )


def _same_protocol(original: RunResults, corrected: RunResults) -> None:
    for what in ("split", "subset", "calibrated"):
        a, b = getattr(original, what), getattr(corrected, what)
        if a is not None and b is not None and a != b:
            raise InputError(
                f"the runs differ in {what} ({a} in {original.path}, {b} in {corrected.path}): "
                "evaluate the same samples the same way on both",
                field="RESULTS",
            )


@dataclass(frozen=True)
class VerdictChange:
    """A task whose share of passing samples differs between the two runs."""

    task_id: str
    official: float  # pass rate in the original run
    corrected: float
    fields: tuple[FieldChange, ...]  # () : no field changed, run-to-run variation
    corrected_reference_fails: bool  # the correction's canonical solution fails here
    # the verdicts for people: the samples' one status ("pass", "fail", "timeout") when they
    # share it, else the share passing ("40%")
    official_verdict: str = ""
    corrected_verdict: str = ""

    @property
    def cause(self) -> str:
        if not self.fields:
            return "no field changed (run-to-run variation)"
        return ", ".join(str(change) for change in self.fields)


@dataclass(frozen=True)
class CorrectionReport:
    original: str  # "bigcodebench v0.1.4"
    corrected: str  # "bigcodebench-plus v1.0.2"
    original_path: str
    corrected_path: str
    official_pass_at_1: float  # over the original run's tasks
    official_tasks: int
    corrected_pass_at_1: float  # over the corrected run's tasks
    corrected_tasks: int
    official_on_shared: float  # the original run over the tasks both runs have
    shared_tasks: int
    changes: tuple[VerdictChange, ...]
    excluded: Mapping[str, float]  # excluded task -> its pass rate in the original run
    only_original: tuple[str, ...]  # tasks only the original run has, not excluded
    only_corrected: tuple[str, ...]
    shared_with_changed_fields: int  # shared tasks whose fields the correction touched
    corrected_reference_failures: tuple[str, ...]  # shared tasks whose corrected GT fails

    @property
    def newly_passing(self) -> int:
        return sum(1 for change in self.changes if change.corrected > change.official)

    @property
    def newly_failing(self) -> int:
        return sum(1 for change in self.changes if change.corrected < change.official)

    @property
    def unexplained(self) -> int:
        """Changed verdicts on tasks the correction left as they were."""
        return sum(1 for change in self.changes if not change.fields)


def _verdicts(run: RunResults) -> dict[str, str]:
    verdicts = {}
    for task, samples in run.tasks.items():
        # a failure by the time limit is said apart: on a loaded machine it is the machine
        statuses = {
            "timeout" if sample.category is ErrorCategory.TIMEOUT else sample.status
            for sample in samples
        }
        if len(statuses) == 1:
            verdicts[task] = statuses.pop()
        elif samples:
            verdicts[task] = f"{sum(s.passed for s in samples) / len(samples):.0%}"
    return verdicts


def _rates(run: RunResults) -> dict[str, float]:
    return {task: c / n for task, (n, c) in run.counts().items()}


def _pass_at_1(run: RunResults, tasks: set[str] | None = None) -> float:
    counts = {t: nc for t, nc in run.counts().items() if tasks is None or t in tasks}
    return scoring.pass_at_k_table(counts, (1,)).get("pass@1", float("nan"))


def correction_report(pair: RunPair, diff: TaskSetDiff) -> CorrectionReport:
    official, corrected = _rates(pair.original_run), _rates(pair.corrected_run)
    shared = set(official) & set(corrected)
    failed_refs = set(pair.corrected_run.gt_failed_tasks)
    said = _verdicts(pair.original_run), _verdicts(pair.corrected_run)
    changes = tuple(
        VerdictChange(
            task_id=task,
            official=official[task],
            corrected=corrected[task],
            fields=diff.changed.get(task, ()),
            corrected_reference_fails=task in failed_refs,
            official_verdict=said[0][task],
            corrected_verdict=said[1][task],
        )
        for task in sorted(shared, key=_task_order)
        if official[task] != corrected[task]
    )
    excluded = set(diff.excluded)
    return CorrectionReport(
        original=diff.original,
        corrected=diff.corrected,
        original_path=str(pair.original_run.path),
        corrected_path=str(pair.corrected_run.path),
        official_pass_at_1=_pass_at_1(pair.original_run),
        official_tasks=len(official),
        corrected_pass_at_1=_pass_at_1(pair.corrected_run),
        corrected_tasks=len(corrected),
        official_on_shared=_pass_at_1(pair.original_run, shared),
        shared_tasks=len(shared),
        changes=changes,
        excluded={t: official[t] for t in sorted(excluded & set(official), key=_task_order)},
        only_original=tuple(sorted(set(official) - shared - excluded, key=_task_order)),
        only_corrected=tuple(sorted(set(corrected) - shared, key=_task_order)),
        shared_with_changed_fields=len(shared & set(diff.changed)),
        corrected_reference_failures=tuple(sorted(shared & failed_refs, key=_task_order)),
    )


def report_json(report: CorrectionReport) -> dict[str, Any]:
    """The report as plain JSON values (`passbench corrections --format json`)."""
    return {
        "original": report.original,
        "corrected": report.corrected,
        "original_results": report.original_path,
        "corrected_results": report.corrected_path,
        "official_pass_at_1": report.official_pass_at_1,
        "official_tasks": report.official_tasks,
        "corrected_pass_at_1": report.corrected_pass_at_1,
        "corrected_tasks": report.corrected_tasks,
        "official_pass_at_1_on_shared": report.official_on_shared,
        "shared_tasks": report.shared_tasks,
        "shared_tasks_with_changed_fields": report.shared_with_changed_fields,
        "verdict_changes": len(report.changes),
        "newly_passing": report.newly_passing,
        "newly_failing": report.newly_failing,
        "changes_without_field_change": report.unexplained,
        "changed_tasks": [
            {
                "task_id": change.task_id,
                "official": change.official,
                "corrected": change.corrected,
                "official_verdict": change.official_verdict,
                "corrected_verdict": change.corrected_verdict,
                "fields": [change.field for change in change.fields],
                "cosmetic_fields": [c.field for c in change.fields if c.cosmetic],
                "corrected_reference_fails": change.corrected_reference_fails,
            }
            for change in report.changes
        ],
        "excluded_tasks": [
            {"task_id": task, "official": rate} for task, rate in report.excluded.items()
        ],
        "only_original": list(report.only_original),
        "only_corrected": list(report.only_corrected),
        "corrected_reference_failures": list(report.corrected_reference_failures),
    }


def _verdict(rate: float) -> str:
    """A task's verdict in a run: pass / fail with one sample, else the share passing."""
    if rate in (0.0, 1.0):
        return "pass" if rate else "fail"
    return f"{rate:.0%}"


def report_text(report: CorrectionReport, limit: int | None = None) -> str:
    """The report as plain text for a terminal or a file: both pass@1 figures, then every
    task whose verdict changed (the first `limit`) with the fields the correction touched."""
    rows = (
        (f"{report.original} (official)", report.official_pass_at_1, report.official_tasks),
        (f"{report.corrected} (corrected)", report.corrected_pass_at_1, report.corrected_tasks),
        ("official, on the shared tasks", report.official_on_shared, report.shared_tasks),
    )
    width = max(len(label) for label, _, _ in rows)
    lines = [f"{'':<{width}}  {'pass@1':>7}  tasks"]
    lines += [f"{label:<{width}}  {value:>7.1%}  {n}" for label, value, n in rows]
    lines += [
        "",
        f"The correction changed fields of {report.shared_with_changed_fields} of the "
        f"{report.shared_tasks} shared tasks; verdicts changed on {len(report.changes)}: "
        f"{report.newly_passing} pass more, {report.newly_failing} pass less"
        + (
            f", {report.unexplained} of them on tasks it left unchanged (run-to-run variation)"
            if report.unexplained
            else ""
        )
        + ".",
    ]
    if report.excluded:
        shown = ", ".join(f"{t} ({_verdict(r)} officially)" for t, r in report.excluded.items())
        lines.append(f"Excluded by the correction, not scored: {shown}.")
    for label, tasks in (
        ("Only in the official run (no corrected verdict)", report.only_original),
        ("Only in the corrected run", report.only_corrected),
    ):
        if tasks:
            lines.append(f"{label}: {', '.join(tasks)}.")
    if report.changes:
        changes = report.changes if not limit else report.changes[:limit]
        more = len(report.changes) - len(changes)
        lines += ["", "Tasks whose verdict changed" + (f" (first {limit})" if more else "") + ":"]
        task_width = max(len(c.task_id) for c in changes)
        header = "official  corrected  why: fields the correction touched"
        lines.append(f"{'task':<{task_width}}  {header}")
        for change in changes:
            fails = change.corrected_reference_fails
            note = "; its corrected reference fails here" if fails else ""
            lines.append(
                f"{change.task_id:<{task_width}}  {change.official_verdict:>8}  "
                f"{change.corrected_verdict:>9}  {change.cause}{note}"
            )
        if more:
            lines.append(f"... {more} more (--limit 0 lists all)")
    return "\n".join(lines) + "\n"
