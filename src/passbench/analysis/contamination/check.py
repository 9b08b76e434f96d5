"""`passbench contamination overlap`: which tasks' prompts a corpus contains, as a result file.

The task text is what the model is shown, in the benchmark's prompt style: for BigCodeBench's
instruct split, as BigCodeBench's own check takes it, the instruction before its first code
fence (`instruct_prompt.split("```")[0]`); for every other benchmark and split, the whole prompt.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from passbench.analysis.contamination.corpus import corpus_files, read_chunks
from passbench.analysis.contamination.overlap import (
    OverlapScanner,
    OverlapSettings,
    Source,
    TaskOverlap,
    contaminated,
)
from passbench.core.errors import InputError
from passbench.core.progress import NullProgress, Progress
from passbench.core.records import Task
from passbench.core.version import __version__

#: Version of the overlap result file; bump when a field changes meaning.
OVERLAP_SCHEMA_VERSION = 1
KIND = "contamination-overlap"
TOKENIZER = "whitespace: str.split(), n-grams joined by one space (BigCodeBench n_gram_check.py)"
_MB = 1 << 20
_SKIPPED_SHOWN = 20


def task_text(task: Task, split: str) -> str:
    """The text of `task` the check looks for (see the module's docstring)."""
    text = task.prompts[split]
    return text.split("```")[0] if split == "instruct" else text


def prompt_rule(split: str) -> str:
    return 'instruct_prompt.split("```")[0]' if split == "instruct" else f"the {split} prompt"


@dataclass(frozen=True)
class CorpusInfo:
    paths: tuple[str, ...]
    sha256: str
    bytes: int
    files: int
    documents: int
    skipped: tuple[str, ...]  # "name: why"


@dataclass(frozen=True)
class OverlapReport:
    settings: OverlapSettings
    corpus: CorpusInfo
    tasks: tuple[TaskOverlap, ...]
    seconds: float

    def contaminated(self, n: int | None = None) -> list[str]:
        """Tasks sharing at least min_shared n-grams (n: the first of the settings')."""
        return contaminated(self.tasks, n or self.settings.ns[0], self.settings.min_shared)


def check_overlap(
    texts: Mapping[str, str],
    corpus: Sequence[Path],
    settings: OverlapSettings | None = None,
    *,
    field: str | None = None,
    include: Sequence[str] = (),
    progress: Progress | None = None,
) -> OverlapReport:
    """Stream `corpus` once against the tasks' `texts` (task id -> text); `field` and
    `include` as in passbench.analysis.contamination.corpus."""
    settings = settings or OverlapSettings()
    progress = progress or NullProgress()
    files = corpus_files(corpus, include)
    total = sum(file.path.stat().st_size for file in files)
    hasher = hashlib.sha256()
    skipped: list[str] = []

    def skip(name: str, why: str) -> None:
        skipped.append(f"{name}: {why}")

    scanner = OverlapScanner(texts, settings)
    started = time.perf_counter()
    steps = max(1, -(-total // _MB))  # progress in MiB of the corpus
    progress.start(steps, "corpus MiB")
    done = shown = 0
    for chunk in read_chunks(files, hasher, field, skip):
        scanner.scan_chunk(chunk)
        done += chunk.size
        if done - shown >= _MB:
            progress.advance((done - shown) // _MB, info=chunk.path)
            shown += (done - shown) // _MB * _MB
    progress.advance(steps - shown // _MB)
    progress.finish()
    if skipped:  # one line: a folder of code can hold thousands of .pyc and .so files
        progress.warn(f"skipped {len(skipped)} file(s), e.g. {skipped[0]}")
    info = CorpusInfo(
        tuple(str(path) for path in corpus),
        hasher.hexdigest(),
        done,
        len(files),
        scanner.documents,
        tuple(skipped),
    )
    return OverlapReport(settings, info, tuple(scanner.results()), time.perf_counter() - started)


# ---- the result file -----------------------------------------------------------------------


def _source(source: Source | None) -> dict[str, Any] | None:
    if source is None:
        return None
    return {"path": source.path, "line": source.line, "record": source.record}


def task_dict(result: TaskOverlap, settings: OverlapSettings) -> dict[str, Any]:
    flagged = len(result.hits.get(settings.ns[0], ())) >= settings.min_shared
    return {
        "contaminated": flagged,
        "tokens": result.tokens,
        "ngrams": {str(n): count for n, count in result.ngrams.items()},
        "shared": {str(n): len(hits) for n, hits in result.hits.items()},
        "hits": {str(n): list(hits) for n, hits in result.hits.items()},
        "longest_common_substring": {
            "tokens": result.lcs,
            "text": result.lcs_text,
            "source": _source(result.closest),
        },
    }


def overlap_document(report: OverlapReport, meta: Mapping[str, Any]) -> dict[str, Any]:
    """The result file: what was checked against what, under which rule, then per task.
    `meta` says which tasks (benchmark, version, split, subset, dataset_sha256)."""
    settings = report.settings
    count = len(report.tasks)
    by_n = {str(n): report.contaminated(n) for n in settings.ns}
    return {
        "kind": KIND,
        "schema_version": OVERLAP_SCHEMA_VERSION,
        "passbench_version": __version__,
        **meta,
        "prompt_text": prompt_rule(str(meta.get("split", "complete"))),
        "tokenizer": TOKENIZER,
        "n": list(settings.ns),
        "thresholds": {
            "contaminated_n": settings.ns[0],
            "min_shared_ngrams": settings.min_shared,
            "lcs_min_tokens": settings.lcs_min,
        },
        "corpus": {
            "paths": list(report.corpus.paths),
            "sha256": report.corpus.sha256,
            "bytes": report.corpus.bytes,
            "files": report.corpus.files,
            "documents": report.corpus.documents,
            "skipped": len(report.corpus.skipped),
            "skipped_examples": list(report.corpus.skipped[:_SKIPPED_SHOWN]),
        },
        "seconds": round(report.seconds, 3),
        "task_count": count,
        "contaminated": report.contaminated(),
        "contaminated_by_n": by_n,
        "percent_by_n": {n: 100 * len(ids) / count if count else 0.0 for n, ids in by_n.items()},
        "tasks": {result.task_id: task_dict(result, settings) for result in report.tasks},
    }


def read_contaminated(path: Path) -> tuple[set[str], dict[str, Any]]:
    """The contaminated task ids of an overlap result file, and the file; InputError naming
    the file when it is not one."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise InputError(f"cannot read: {error}", path=path) from None
    if not isinstance(document, dict) or document.get("kind") != KIND:
        raise InputError(
            f'not a `passbench contamination overlap` result file (no "kind": {KIND!r})',
            path=path,
        )
    ids = document.get("contaminated")
    if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
        raise InputError("expected a list of task ids", path=path, field="contaminated")
    return set(ids), document
