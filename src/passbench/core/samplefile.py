"""Reading and writing sample files (JSONL, optionally gzipped): the I/O edge for Samples.

A sample file holds one JSON object a line with `task_id` and either `solution` (a whole
program) or `completion` (text appended to the Complete prompt); `raw_solution` may ride along,
and `sample_index`: the index the generator gave the sample (`passbench generate` writes it, and
answers to concurrent requests arrive in any order). Where a line has none, the sample gets the
task's lowest index not taken, in file order, so an official file is numbered by file order.
Everything is validated here, so later stages can trust the Sample records they get.
"""

from __future__ import annotations

import gzip
import json
import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from passbench.core.errors import SampleFileError
from passbench.core.records import Sample
from passbench.core.thinking import split_thinking, truncation


def sample_file_stem(path: str | Path) -> str:
    """The file name without `.jsonl` / `.jsonl.gz`, as result files are named after it."""
    name = Path(path).name
    for suffix in (".jsonl.gz", ".jsonl", ".json.gz", ".json"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise SampleFileError("file not found", path=path) from None
    except IsADirectoryError:
        raise SampleFileError(
            "is a directory, expected a .jsonl or .jsonl.gz file", path=path
        ) from None
    except OSError as error:
        raise SampleFileError(f"cannot read: {error.strerror}", path=path) from None
    if path.name.endswith(".gz") or raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError) as error:
            raise SampleFileError(f"not a valid gzip file ({error})", path=path) from None
    if not raw.strip():
        raise SampleFileError("file is empty; expected one JSON object per line", path=path)
    for number, line_bytes in enumerate(raw.split(b"\n"), start=1):
        try:
            line = line_bytes.decode("utf-8")
        except UnicodeDecodeError as error:
            raise SampleFileError(
                f"not valid UTF-8 (byte {error.start + 1} of the line)", path=path, line=number
            ) from None
        if line.strip():
            yield number, line


def read_samples(path: str | Path, known_task_ids: Iterable[str] | None = None) -> list[Sample]:
    """Read and validate every sample in `path`.

    Samples keep file order. Each has the `sample_index` its line gives, else the task's
    lowest index not taken (see the module's docstring). Raises SampleFileError naming the
    file, line and field of the first problem.
    """
    path = Path(path)
    known = set(known_task_ids) if known_task_ids is not None else None
    indexes = SampleIndexes(path)
    samples: list[Sample] = []
    given: list[int | None] = []
    for number, line in _lines(path):
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            raise SampleFileError(
                f"malformed JSON: {error.msg} (column {error.colno})", path=path, line=number
            ) from None
        sample = _sample_from_record(record, path, number, known)
        given.append(indexes.take(record, sample.task_id, number))
        samples.append(sample)
    return [
        replace(sample, sample_index=index if index is not None else indexes.next(sample.task_id))
        for sample, index in zip(samples, given, strict=True)
    ]


class SampleIndexes:
    """The sample indexes of one file: each given one checked (a non-negative integer, unique
    within its task), and the lowest free one handed out for lines that give none."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._taken: dict[str, dict[int, int]] = {}  # task id -> index -> line
        self._next: dict[str, int] = {}

    def take(self, record: Mapping[str, Any], task_id: str, line: int) -> int | None:
        """The line's `sample_index`, checked; None when it has none."""
        index = record.get("sample_index")
        if index is None:
            return None
        if isinstance(index, bool) or not isinstance(index, int) or index < 0:
            raise SampleFileError(
                f"must be a non-negative integer, got {index!r}",
                path=self.path,
                line=line,
                field="sample_index",
            )
        taken = self._taken.setdefault(task_id, {})
        if index in taken:
            raise SampleFileError(
                f"{index} is taken by line {taken[index]} for {task_id}; each sample of a task "
                "needs its own",
                path=self.path,
                line=line,
                field="sample_index",
            )
        taken[index] = line
        return index

    def next(self, task_id: str) -> int:
        """The task's lowest index neither given nor handed out yet (after every `take`)."""
        taken = self._taken.setdefault(task_id, {})
        index = self._next.get(task_id, 0)
        while index in taken:
            index += 1
        taken[index] = 0
        self._next[task_id] = index + 1
        return index


def _sample_from_record(record: Any, path: Path, line: int, known: set[str] | None) -> Sample:
    if not isinstance(record, dict):
        raise SampleFileError(
            f"expected a JSON object, got {type(record).__name__}", path=path, line=line
        )
    task_id = record.get("task_id")
    if task_id is None:
        raise SampleFileError("missing", path=path, line=line, field="task_id")
    if not isinstance(task_id, str):
        raise SampleFileError("must be a string", path=path, line=line, field="task_id")
    if known is not None and task_id not in known:
        raise SampleFileError(
            f"unknown task id {task_id!r} for this benchmark", path=path, line=line, field="task_id"
        )
    solution = record.get("solution")
    completion = record.get("completion")
    if solution is None and completion is None:
        raise SampleFileError(
            "no 'solution' or 'completion' field", path=path, line=line, field="solution"
        )
    for name, value in (("solution", solution), ("completion", completion)):
        if value is not None and not isinstance(value, str):
            raise SampleFileError("must be a string", path=path, line=line, field=name)
    raw = record.get("raw_solution")
    sanitize_error = record.get("sanitize_error")
    return Sample(
        task_id=task_id,
        solution=solution if isinstance(solution, str) else None,
        completion=None if isinstance(solution, str) else completion,
        raw_solution=raw if isinstance(raw, str) else None,
        source_line=line,
        truncated=_truncated(record, raw),
        sanitize_error=sanitize_error if isinstance(sanitize_error, str) else "",
    )


def _truncated(record: Mapping[str, Any], raw: Any) -> str:
    """Why the answer was cut short: what `passbench generate` recorded, else what another
    tool's file shows (its `finish_reason`, or a thinking section its answer never closed)."""
    recorded = record.get("truncated")
    if isinstance(recorded, str):
        return recorded
    finish = record.get("finish_reason")
    unclosed = isinstance(raw, str) and split_thinking(raw).unclosed
    return truncation(finish if isinstance(finish, str) else None, thinking_unclosed=unclosed)


def write_jsonl_atomic(path: str | Path, rows: Iterable[Mapping[str, Any]]) -> None:
    """Write rows as JSONL through a temporary file and a rename, so no reader ever sees half."""
    path = Path(path)
    temporary = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(temporary, "wt", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    os.replace(temporary, path)


def write_json_atomic(path: str | Path, data: Any) -> None:
    """Write JSON through a temporary file, fsync and a rename."""
    path = Path(path)
    temporary = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    with open(temporary, "w", encoding="utf-8") as handle:
        json.dump(data, handle, indent=2, ensure_ascii=False)
        handle.write("\n")
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, path)
