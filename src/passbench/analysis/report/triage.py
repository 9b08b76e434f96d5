"""Whose failure is it? Every failing sample is put in one of four classes.

- **harness**: passbench's own machinery lost the sample: its sandbox worker died, or a remote
  node's sandbox failed, while running it. Nothing is known about the code.
- **environment**: the sample could not pass here whatever its code: the task's canonical
  solution fails in this run's own ground truth (the missing piece named when its message shows
  it: NLTK data, TextBlob's corpora, the network, as `envgaps` reads them; otherwise a library
  version or data difference), the sample itself died for want of NLTK or TextBlob data, or it
  imports one of the task's own libraries that this environment lacks.
- **extraction**: code existed in the raw answer but was not recovered (`lost_code`): the
  sanitizer lost it, and the tests judged something else.
- **model**: the rest: a wrong answer (assertion failed), an error (an exception, a syntax or
  import error, memory, a program that killed itself or tampered with the tests), a timeout,
  no code in the answer, or no answer at all ("no answer (truncated)": the token limit or an
  unclosed thinking section cut it; see docs/inspect.md for how it counts).

The classes are tried in that order, so one sample is counted once: a task that cannot pass
here is the environment's whatever the answer, before the question of extraction arises.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from passbench.analysis.report import envgaps
from passbench.analysis.report.categories import Failure
from passbench.core.records import ErrorCategory
from passbench.core.runs import NO_ANSWER_TRUNCATED, SampleResult
from passbench.core.thinking import split_thinking
from passbench.stages.sanitize.fences import find_blocks
from passbench.stages.sanitize.units import Unit, split_units

CLASSES = ("model", "extraction", "environment", "harness")
EXAMPLES = 5

_HARNESS = re.compile(r"sandbox worker died|sandbox failed|could not start a sandbox")
_MISSING_MODULE = re.compile(r"No module named '([\w.]+)'")
_DEFINITIONS = ("FunctionDef", "AsyncFunctionDef", "ClassDef")


@dataclass(frozen=True)
class Verdict:
    """The class of one failing sample and what, within it, went wrong."""

    cls: str  # one of CLASSES
    kind: str  # e.g. "wrong answer", "code not recovered", "the network", "worker died"


@dataclass(frozen=True)
class TriageGroup:
    cls: str
    kind: str
    samples: int
    tasks: tuple[str, ...]  # the first few, in benchmark order


@dataclass(frozen=True)
class Triage:
    """Failing samples by class, and the extraction loss beside them."""

    failing: int
    by_class: Mapping[str, int]  # every class in CLASSES, 0 when none
    groups: tuple[TriageGroup, ...]
    # failing samples whose raw answer held the entry point's code, which the program that ran
    # does not contain (lost_code); checked only where the results carry the raw answer
    extraction_loss: int
    extraction_loss_tasks: tuple[str, ...]
    raw_checked: int  # failing samples whose raw answer was in the results


def lost_code(raw: str, solution: str, entry_point: str | None) -> bool:
    """True when code existed in `raw` that the program that ran (`solution`) lacks.

    "Code existed": outside its thinking sections, the answer holds a top-level definition
    (`def`, `async def` or `class`) of the entry point (of any function when the entry point is
    unknown) that parses as Python: in a fenced block, or in the text read as code. "Lacks":
    none of those definitions appears in `solution`, compared line by line with indentation,
    blank lines and trailing spaces ignored.
    """
    text = split_thinking(raw.replace("\r\n", "\n")).answer
    candidates = [_normalized(unit.source) for unit in _definitions(text, entry_point)]
    if not candidates:
        return False
    ran = "\n" + _normalized(solution) + "\n"
    return not any("\n" + candidate + "\n" in ran for candidate in candidates)


def _definitions(text: str, entry_point: str | None) -> list[Unit]:
    regions = [block.code for block in find_blocks(text) if block.is_python] + [text]
    found: list[Unit] = []
    for region, code in enumerate(regions):
        for unit in split_units(code, region, 0):
            if type(unit.node).__name__ not in _DEFINITIONS:
                continue
            if entry_point is None or getattr(unit.node, "name", None) == entry_point:
                found.append(unit)
    return found


def _normalized(code: str) -> str:
    return "\n".join(line.strip() for line in code.splitlines() if line.strip())


def classify(
    sample: SampleResult,
    failure: Failure,
    *,
    entry_point: str | None,
    libs: Sequence[str],
    gt_failure: Mapping[str, object] | None,
) -> Verdict:
    """The class of one failing sample (see the module's docstring for the rules)."""
    reason = failure.message or ""
    if failure.category is ErrorCategory.KILLED and _HARNESS.search(reason):
        return Verdict("harness", "sandbox worker died")
    if gt_failure is not None:
        gap = envgaps.gap_of(str(gt_failure.get("reason", "")))
        return Verdict("environment", gap or "canonical solution fails here too")
    gap = envgaps.gap_of(reason + "\n" + "\n".join(sample.details.values()))
    if gap is not None and gap != "the network":  # data this machine lacks, not the model's
        return Verdict("environment", gap)
    missing = _MISSING_MODULE.search(reason)
    if failure.category is ErrorCategory.IMPORT_ERROR and missing:
        top = missing.group(1).split(".")[0]
        if top in libs:
            return Verdict("environment", f"library missing: {top}")
    if sample.no_answer:
        return Verdict("model", NO_ANSWER_TRUNCATED)
    if sample.raw_solution is not None and lost_code(
        sample.raw_solution, sample.solution, entry_point
    ):
        return Verdict("extraction", "code not recovered")
    if sample.sanitize_error:
        return Verdict("model", "no code in the answer")
    if failure.category is ErrorCategory.ASSERTION_FAILED:
        return Verdict("model", "wrong answer")
    if failure.category is ErrorCategory.TIMEOUT:
        return Verdict("model", "timeout")
    return Verdict("model", "error")


def triage(
    tasks: Mapping[str, Sequence[SampleResult]],
    failures: Mapping[str, Sequence[Failure | None]],
    *,
    entry_points: Mapping[str, str],
    libs: Mapping[str, Sequence[str]],
    gt_failures: Mapping[str, Mapping[str, object]],
    order: Sequence[str],
) -> Triage:
    """Classify every failing sample of a run; `order` is the task ids in benchmark order."""
    counts: Counter[tuple[str, str]] = Counter()
    examples: dict[tuple[str, str], list[str]] = defaultdict(list)
    loss_tasks: list[str] = []
    loss = checked = failing = 0
    for task_id in order:
        for sample, failure in zip(tasks[task_id], failures[task_id], strict=True):
            if failure is None:
                continue
            failing += 1
            entry_point = entry_points.get(task_id)
            verdict = classify(
                sample,
                failure,
                entry_point=entry_point,
                libs=libs.get(task_id, ()),
                gt_failure=gt_failures.get(task_id),
            )
            key = (verdict.cls, verdict.kind)
            counts[key] += 1
            if task_id not in examples[key]:
                examples[key].append(task_id)
            if sample.raw_solution is not None:
                checked += 1
                if lost_code(sample.raw_solution, sample.solution, entry_point):
                    loss += 1
                    if not loss_tasks or loss_tasks[-1] != task_id:
                        loss_tasks.append(task_id)
    by_class = {cls: sum(n for (c, _), n in counts.items() if c == cls) for cls in CLASSES}
    groups = sorted(
        (
            TriageGroup(cls, kind, n, tuple(examples[(cls, kind)][:EXAMPLES]))
            for (cls, kind), n in counts.items()
        ),
        key=lambda group: (CLASSES.index(group.cls), -group.samples, group.kind),
    )
    return Triage(
        failing=failing,
        by_class=by_class,
        groups=tuple(groups),
        extraction_loss=loss,
        extraction_loss_tasks=tuple(loss_tasks),
        raw_checked=checked,
    )


def loss_line(result: Triage) -> str:
    """The extraction loss, in one line for every report."""
    if not result.failing:
        return "extraction loss: no failing samples"
    if not result.raw_checked:
        return "extraction loss: not measured (the results carry no raw answers)"
    share = result.extraction_loss / result.raw_checked
    tasks = ", ".join(result.extraction_loss_tasks[:EXAMPLES])
    more = len(result.extraction_loss_tasks) - EXAMPLES
    listed = f": {tasks}{f' (+{more} tasks)' if more > 0 else ''}" if tasks else ""
    return (
        f"extraction loss: {result.extraction_loss} of {result.raw_checked} failing samples "
        f"({share:.1%}) had code in the raw answer that the program run lacks{listed}"
    )


def class_line(result: Triage) -> str:
    """The failing samples by class, in one line."""
    parts = [f"{cls} {result.by_class.get(cls, 0)}" for cls in CLASSES]
    return f"{result.failing} failing samples: " + ", ".join(parts)


def triage_dict(result: Triage) -> dict[str, object]:
    return {
        "failing": result.failing,
        "by_class": dict(result.by_class),
        "groups": [
            {"class": g.cls, "kind": g.kind, "samples": g.samples, "examples": list(g.tasks)}
            for g in result.groups
        ],
        "extraction_loss": {
            "samples": result.extraction_loss,
            "checked": result.raw_checked,
            "tasks": list(result.extraction_loss_tasks),
        },
    }
