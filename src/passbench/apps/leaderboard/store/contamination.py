"""Contamination checks into the store: `passbench db import-contamination OVERLAP.json...`.

An overlap result file (`passbench contamination overlap -o FILE`, docs/contamination.md) says
which tasks of a benchmark's split a corpus contains. It names no model: the leaderboard's
model page shows a check beside every run of the same benchmark, split and subset (and the same
dataset, where both name one; `matching_checks`).

The whole file is checked before anything is written, and written in one transaction; a bad
field is an error naming the file and the field. A file is keyed by the sha256 of its bytes:
importing it again finds the stored check and adds nothing.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlalchemy.exc import DataError, IntegrityError
from sqlalchemy.orm import Session, selectinload

from passbench.apps.leaderboard.store.database import Store
from passbench.apps.leaderboard.store.importing import first_line
from passbench.apps.leaderboard.store.models import ContaminatedTask, ContaminationCheck, Run
from passbench.core.errors import ResultsFileError

#: What `passbench contamination overlap` writes (passbench.analysis.contamination.check): the same
#: values, repeated so that the store does not import the checker.
KIND = "contamination-overlap"
SCHEMA_VERSIONS = (1,)


@dataclass(frozen=True)
class ImportedCheck:
    """What importing one overlap file did."""

    path: Path
    check_id: int
    created: bool
    benchmark: str
    split: str
    subset: str | None
    task_count: int
    contaminated: int  # tasks flagged at the check's contaminated_n
    contaminated_n: int


def import_contamination(store: Store, path: str | Path) -> ImportedCheck:
    """Store the overlap result file at `path` (checked whole first)."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise ResultsFileError("file not found", path=path) from None
    except OSError as error:
        raise ResultsFileError(f"cannot read: {error.strerror or error}", path=path) from None
    row = check_row(_document(data, path), path)
    row.content_sha256 = hashlib.sha256(data).hexdigest()
    try:
        with store.transaction() as session:
            found = session.scalar(
                select(ContaminationCheck).where(
                    ContaminationCheck.content_sha256 == row.content_sha256
                )
            )
            created = found is None
            if found is None:
                session.add(row)
                session.flush()
                found = row
            flagged = sum(1 for task in found.tasks if task.n == found.contaminated_n)
            return ImportedCheck(
                path=path,
                check_id=found.id,
                created=created,
                benchmark=found.benchmark,
                split=found.split,
                subset=found.subset,
                task_count=found.task_count,
                contaminated=flagged,
                contaminated_n=found.contaminated_n,
            )
    except (IntegrityError, DataError) as error:
        raise ResultsFileError(f"cannot be stored: {first_line(error)}", path=path) from None


def _document(data: bytes, path: Path) -> dict[str, Any]:
    try:
        document = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as error:
        raise ResultsFileError(f"not UTF-8 text: {error.reason}", path=path) from None
    except json.JSONDecodeError as error:
        raise ResultsFileError(
            f"not valid JSON: {error.msg} (column {error.colno})", path=path, line=error.lineno
        ) from None
    if not isinstance(document, dict) or document.get("kind") != KIND:
        raise ResultsFileError(
            f'not a `passbench contamination overlap` result file (no "kind": {KIND!r})',
            path=path,
        )
    version = document.get("schema_version")
    if version not in SCHEMA_VERSIONS:
        raise ResultsFileError(
            f"schema version {version!r} is not one this passbench reads "
            f"({', '.join(map(str, SCHEMA_VERSIONS))})",
            path=path,
            field="schema_version",
        )
    return document


def check_row(document: Mapping[str, Any], path: Path) -> ContaminationCheck:
    """The check's row and its flagged tasks, from a parsed overlap file; ResultsFileError
    naming the field when one is missing or of the wrong kind."""

    def field(
        where: Mapping[str, Any], key: str, kind: type | tuple[type, ...], prefix: str = ""
    ) -> Any:
        value = where.get(key)
        if value is None and not isinstance(kind, tuple):
            raise ResultsFileError("is missing", path=path, field=prefix + key)
        if value is not None and (not isinstance(value, kind) or isinstance(value, bool)):
            kinds = kind if isinstance(kind, tuple) else (kind,)
            names = " or ".join(k.__name__ for k in kinds if k is not type(None))
            raise ResultsFileError(f"must be {names}", path=path, field=prefix + key)
        return value

    def count(where: Mapping[str, Any], key: str, prefix: str = "") -> int:
        value: int = field(where, key, int, prefix)
        if value < 0:
            raise ResultsFileError("must not be negative", path=path, field=prefix + key)
        return value

    def ids(value: Any, name: str) -> list[str]:
        if not isinstance(value, list) or not all(isinstance(i, str) and i for i in value):
            raise ResultsFileError("must be a list of task ids", path=path, field=name)
        return list(dict.fromkeys(value))

    optional = (str, type(None))
    ns = document.get("n")
    if not isinstance(ns, list) or not ns or not all(_positive(n) for n in ns):
        raise ResultsFileError("must be a list of n-gram sizes", path=path, field="n")
    thresholds = field(document, "thresholds", dict)
    contaminated_n = count(thresholds, "contaminated_n", "thresholds.")
    if contaminated_n not in ns:
        raise ResultsFileError(
            f"{contaminated_n} is not one of the file's n ({ns})",
            path=path,
            field="thresholds.contaminated_n",
        )
    corpus = field(document, "corpus", dict)
    corpus_sha256 = field(corpus, "sha256", str, "corpus.")
    paths = corpus.get("paths")
    if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
        raise ResultsFileError("must be a list of paths", path=path, field="corpus.paths")
    by_n = field(document, "contaminated_by_n", dict)
    flagged = {n: ids(by_n.get(str(n)), f"contaminated_by_n.{n}") for n in ns}
    if ids(document.get("contaminated"), "contaminated") != flagged[contaminated_n]:
        raise ResultsFileError(
            f"disagrees with contaminated_by_n.{contaminated_n}", path=path, field="contaminated"
        )
    tasks = document.get("tasks") or {}
    if not isinstance(tasks, dict):
        raise ResultsFileError("must be an object of task ids", path=path, field="tasks")
    task_count = count(document, "task_count")
    row = ContaminationCheck(
        source_name=path.name,
        benchmark=field(document, "benchmark", str),
        dataset_version=field(document, "version", optional),
        split=field(document, "split", str),
        subset=field(document, "subset", optional),
        dataset_sha256=field(document, "dataset_sha256", optional),
        corpus_sha256=corpus_sha256,
        corpus_bytes=count(corpus, "bytes", "corpus."),
        corpus_files=count(corpus, "files", "corpus."),
        corpus_documents=count(corpus, "documents", "corpus."),
        corpus_paths=list(paths),
        ns=list(ns),
        contaminated_n=contaminated_n,
        thresholds=dict(thresholds),
        tokenizer=field(document, "tokenizer", str),
        prompt_text=field(document, "prompt_text", optional),
        task_count=task_count,
        harness_version=field(document, "passbench_version", optional),
    )
    row.tasks = [
        ContaminatedTask(n=n, task_id=task_id, shared=_shared(tasks.get(task_id), n))
        for n in ns
        for task_id in flagged[n]
    ]
    if len(flagged[contaminated_n]) > task_count:
        raise ResultsFileError(
            f"flags {len(flagged[contaminated_n])} tasks of {task_count} checked",
            path=path,
            field="task_count",
        )
    return row


def _positive(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def _shared(task: Any, n: int) -> int | None:
    """How many n-grams the file says the task shares (None where it does not say)."""
    shared = task.get("shared") if isinstance(task, dict) else None
    value = shared.get(str(n)) if isinstance(shared, dict) else None
    return value if _positive(value) else None


def stored_checks(session: Session) -> list[ContaminationCheck]:
    """Every stored check with its flagged tasks, oldest first (a few rows: one per corpus
    and benchmark split checked)."""
    query = (
        select(ContaminationCheck)
        .options(selectinload(ContaminationCheck.tasks))
        .order_by(ContaminationCheck.id)
    )
    return list(session.scalars(query).all())


def checks_run(check: ContaminationCheck, run: Run) -> bool:
    """Whether `check` checked `run`'s tasks: the same benchmark, split and subset; the same
    dataset version and dataset hash wherever both the run and the check name one (a file
    from the official evaluator names neither)."""
    if run.benchmark is None or run.split is None:
        return False
    if (check.benchmark, check.split, check.subset) != (run.benchmark, run.split, run.subset):
        return False
    return all(
        None in (ours, theirs) or ours == theirs
        for ours, theirs in (
            (check.dataset_version, run.dataset_version),
            (check.dataset_sha256, run.dataset_sha256),
        )
    )


def matching_checks(session: Session, run: Run) -> list[ContaminationCheck]:
    """The stored checks of `run`'s tasks (`checks_run`), oldest first."""
    return [check for check in stored_checks(session) if checks_run(check, run)]


def flagged_tasks(check: ContaminationCheck, n: int | None = None) -> set[str]:
    """The tasks `check` flags at `n` (default: its verdict's n)."""
    chosen = check.contaminated_n if n is None else n
    return {task.task_id for task in check.tasks if task.n == chosen}


def corpus_label(check: ContaminationCheck, width: int = 3) -> str:
    """Which corpus, in a few words: its paths (the first `width`), size and hash."""
    paths: Sequence[str] = check.corpus_paths or ["?"]
    shown = ", ".join(paths[:width]) + (f" (+{len(paths) - width})" if len(paths) > width else "")
    return f"{shown} ({_size(check.corpus_bytes)}, sha256 {check.corpus_sha256[:12]})"


def _size(count: int) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if count >= scale:
            return f"{count / scale:.1f} {unit}"
    return f"{count} B"
