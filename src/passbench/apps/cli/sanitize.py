"""`passbench sanitize` and `passbench syncheck`: the official post-generation steps.

sanitize reads raw samples and writes `<stem>-sanitized.jsonl` (the official naming) with the
extracted program in `solution` and the untouched answer in `raw_solution`, so a better
sanitizer can redo the work later without generating again. A sample whose answer yields no
usable definition of the entry point keeps its best-effort code and gets a `sanitize_error`.

syncheck reports, per task, the samples whose program does not parse, and the tasks that have
no samples (the official `bigcodebench.syncheck`).
"""

from __future__ import annotations

import gzip
import json
import os
from collections.abc import Iterator, Mapping
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
from rich.console import Console

from passbench.apps.cli._progress import RichProgress
from passbench.apps.cli.options import (
    benchmark_option,
    config_option,
    data_options,
    data_settings,
    resolve_options,
    split_option,
    subset_option,
    version_option,
)
from passbench.apps.samplerows import conversation_answers, sanitize_answers, task_fields
from passbench.core.errors import SampleFileError
from passbench.core.records import Task
from passbench.core.samplefile import (
    SampleIndexes,
    read_samples,
    sample_file_stem,
    write_jsonl_atomic,
)
from passbench.core.settings import Resolved
from passbench.stages.benchmarks import Benchmark, LoadedBenchmark, get_benchmark
from passbench.stages.benchmarks.base import check_split
from passbench.stages.sanitize import SanitizeResult
from passbench.stages.sanitize import syncheck as check_syntax

# Below this many samples, starting worker processes costs more than it saves.
_PARALLEL_FROM = 200
_ANSWER_FIELDS = ("raw_solution", "solution", "completion")


@dataclass(frozen=True)
class _Raw:
    """One input line: its fields, and the whole answer text to sanitize."""

    line: int
    row: dict[str, Any]
    task: Task
    answer: str


def sanitized_path(samples: Path) -> Path:
    """`<stem>-sanitized.jsonl[.gz]` beside the input, as `bigcodebench.sanitize` names it."""
    suffix = ".jsonl.gz" if samples.name.endswith(".gz") else ".jsonl"
    return samples.with_name(f"{sample_file_stem(samples)}-sanitized{suffix}")


@click.command()
@click.option(
    "--samples",
    required=True,
    type=click.Path(path_type=Path, dir_okay=False),
    help="Raw samples: JSONL (.gz ok) with task_id and raw_solution, solution or completion.",
)
@click.option(
    "--output",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Where to write (default: <stem>-sanitized.jsonl beside the samples).",
)
@click.option(
    "--jobs",
    type=click.IntRange(min=1),
    help="Worker processes (default: the number of cores).",
)
@benchmark_option
@version_option
@split_option
@subset_option
@data_options
@config_option
@click.pass_context
def sanitize(ctx: click.Context, /, **options: Any) -> None:
    """Extract the program from each raw model answer (keeping the answer beside it)."""
    console = Console(stderr=True)
    resolved = resolve_options(ctx, "sanitize", options)
    samples: Path = options["samples"]
    output: Path | None = options["output"]
    jobs: int | None = resolved["jobs"]
    bench = get_benchmark(resolved["benchmark"])
    chosen_split = check_split(bench, resolved["split"])
    loaded = _load(bench, resolved)
    raws = list(_read_raw(samples, bench, loaded))
    results = _sanitize_all(raws, chosen_split, jobs or os.cpu_count() or 1)
    target = output or sanitized_path(samples)
    write_jsonl_atomic(
        target, (_output_row(raw, result) for raw, result in zip(raws, results, strict=True))
    )

    changed = sum(result.code != raw.answer for raw, result in zip(raws, results, strict=True))
    failures: dict[str, list[str]] = {}
    for raw, result in zip(raws, results, strict=True):
        if not result.ok:
            failures.setdefault(result.reason, []).append(raw.task.task_id)
    console.print(
        f"Sanitized {len(raws)} samples: {changed} changed, "
        f"{len(raws) - changed} left as they were."
    )
    from_thinking = [
        raw.task.task_id
        for raw, result in zip(raws, results, strict=True)
        if result.ok and result.origin.startswith("thinking")
    ]
    if from_thinking:
        console.print(
            f"{len(from_thinking)} taken from thinking sections (no code after them): "
            f"{_id_list(from_thinking)}"
        )
    if failures:
        count = sum(len(ids) for ids in failures.values())
        console.print(f"[bold yellow]{count} extraction failures[/] (recorded as sanitize_error):")
        for reason, task_ids in sorted(failures.items(), key=lambda item: -len(item[1])):
            console.print(f"  {len(task_ids)} × {reason}: {_id_list(task_ids)}")
    console.print(f"Wrote {target}")


@click.command("syncheck")
@click.option(
    "--samples",
    required=True,
    type=click.Path(path_type=Path, dir_okay=False),
    help="Samples: JSONL (.gz ok) with task_id and solution or completion.",
)
@click.option(
    "--nsample-check",
    type=click.IntRange(min=1),
    help="Also report tasks with fewer than this many samples.",
)
@benchmark_option
@version_option
@subset_option
@data_options
@config_option
@click.pass_context
def syncheck_command(ctx: click.Context, /, **options: Any) -> None:
    """Report samples whose program does not parse, and tasks without samples."""
    console = Console()
    resolved = resolve_options(ctx, "syncheck", options)
    samples: Path = options["samples"]
    nsample_check: int | None = options["nsample_check"]
    bench = get_benchmark(resolved["benchmark"])
    loaded = _load(bench, resolved)
    tasks = {task.task_id: task for task in loaded}
    records = read_samples(samples, known_task_ids=tasks)
    counts: dict[str, int] = {}
    broken: list[tuple[str, int, int, str]] = []
    # MultiPL-E's programs are not Python: their build (or parse) in the sandbox is their
    # syntax check, reported as MultiPL-E's SyntaxError status; CyberSecEval's run nowhere
    python = not any(task.metadata.get("language") for task in tasks.values())
    for sample in records:
        counts[sample.task_id] = counts.get(sample.task_id, 0) + 1
        if not python:
            continue
        task = tasks[sample.task_id]
        code = (
            sample.solution
            if sample.solution is not None
            else bench.solution_from_completion(task, sample.completion or "")
        )
        ok, message = check_syntax(code)
        if not ok:
            broken.append((sample.task_id, sample.sample_index, sample.source_line, message))

    missing = [task_id for task_id in tasks if task_id not in counts]
    short = [
        task_id
        for task_id, count in counts.items()
        if nsample_check is not None and count < nsample_check
    ]
    console.print(f"{bench.info.title} {loaded.version} ({loaded.subset}): {len(tasks)} tasks")
    if missing:
        console.print(f"[red]{len(missing)} tasks have no samples[/]: {_id_list(missing)}")
    if short:
        console.print(
            f"[red]{len(short)} tasks have fewer than {nsample_check} samples[/]: {_id_list(short)}"
        )
    if not missing and not short:
        console.print("[green]Every task has samples.[/]")
    for task_id, index, line, message in broken:
        console.print(f"  {task_id} #{index} (line {line}): {message}")
    if not python and not bench.info.executable:
        console.print(
            f"{len(records)} samples; not parsed here: {bench.info.title}'s samples are not run "
            f"(`{bench.info.scored_by}` scores them)."
        )
    elif not python:
        console.print(
            f"{len(records)} samples; not parsed here: {bench.info.title}'s programs are checked "
            "when evaluate builds them (status SyntaxError)."
        )
    elif broken:
        console.print(f"[red]{len(broken)} of {len(records)} samples do not parse.[/]")
    else:
        console.print(f"[green]All {len(records)} samples parse.[/]")


syncheck: click.Command = syncheck_command


def _load(bench: Benchmark, resolved: Resolved) -> LoadedBenchmark:
    with RichProgress() as progress:  # shows anything only when a download happens
        return bench.load(
            resolved["version"], resolved["subset"], data=data_settings(resolved), progress=progress
        )


def _records(path: Path) -> Iterator[tuple[int, Any]]:
    try:
        raw = path.read_bytes()
    except OSError as error:
        raise SampleFileError(f"cannot read: {error.strerror or error}", path=path) from None
    if path.name.endswith(".gz") or raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError) as error:
            raise SampleFileError(f"not a valid gzip file ({error})", path=path) from None
    for number, line in enumerate(raw.split(b"\n"), start=1):
        if not line.strip():
            continue
        try:
            yield number, json.loads(line)
        except (json.JSONDecodeError, UnicodeDecodeError) as error:
            raise SampleFileError(f"malformed JSON: {error}", path=path, line=number) from None


def _read_raw(path: Path, bench: Benchmark, loaded: LoadedBenchmark) -> Iterator[_Raw]:
    tasks = {task.task_id: task for task in loaded}
    indexes = SampleIndexes(path)  # sample_index is copied through: checked as evaluate does
    seen = False
    for line, row in _records(path):
        seen = True
        if not isinstance(row, dict):
            raise SampleFileError(
                f"expected a JSON object, got {type(row).__name__}", path=path, line=line
            )
        task_id = row.get("task_id")
        if not isinstance(task_id, str):
            raise SampleFileError("missing or not a string", path=path, line=line, field="task_id")
        task = tasks.get(task_id)
        if task is None:
            raise SampleFileError(
                f"unknown task id {task_id!r} for {bench.info.title} {loaded.version}",
                path=path,
                line=line,
                field="task_id",
            )
        indexes.take(row, task_id, line)
        present = [name for name in _ANSWER_FIELDS if row.get(name) is not None]
        if not present:
            raise SampleFileError(
                "no raw_solution, solution or completion", path=path, line=line, field="solution"
            )
        name = present[0]  # raw_solution first: never sanitize an already-sanitized text
        value = row[name]
        if not isinstance(value, str):
            raise SampleFileError("must be a string", path=path, line=line, field=name)
        answer = bench.solution_from_completion(task, value) if name == "completion" else value
        yield _Raw(line=line, row=row, task=task, answer=answer)
    if not seen:
        raise SampleFileError("file is empty; expected one JSON object per line", path=path)


def _sanitize_one(job: tuple[list[str], Task, str]) -> SanitizeResult:
    answers, task, split = job
    return sanitize_answers(answers, task, split)


def _sanitize_all(raws: list[_Raw], split: str, jobs: int) -> list[SanitizeResult]:
    # a raw answer that continues a conversation (a later try, a reflection) comes after the
    # model's earlier answers in it: edits (Aider's) apply over them
    work = [
        (
            conversation_answers({**raw.row, "raw_solution": raw.answer})
            if raw.row.get("raw_solution") is not None
            else [raw.answer],
            raw.task,
            split,
        )
        for raw in raws
    ]
    with RichProgress() as progress:
        progress.start(len(work), "sanitize")
        if jobs == 1 or len(work) < _PARALLEL_FROM:
            results = []
            for job in work:
                results.append(_sanitize_one(job))
                progress.advance()
            return results
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            results = []
            for result in pool.map(_sanitize_one, work, chunksize=32):
                results.append(result)
                progress.advance()
            return results


def _output_row(raw: _Raw, result: SanitizeResult) -> Mapping[str, Any]:
    row = {key: value for key, value in raw.row.items() if key not in _ANSWER_FIELDS}
    row.pop("sanitize_error", None)
    row["solution"] = result.code
    row["raw_solution"] = raw.answer
    row.update(task_fields(raw.task))  # e.g. the language `passbench security` reads
    if not result.ok:
        row["sanitize_error"] = result.reason
    return row


def _id_list(task_ids: list[str], limit: int = 12) -> str:
    unique = list(dict.fromkeys(task_ids))
    shown = ", ".join(unique[:limit])
    return shown + (f", … ({len(unique) - limit} more)" if len(unique) > limit else "")
