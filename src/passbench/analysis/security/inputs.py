"""What `passbench security` scans: a results file (verdicts too) or a samples file.

    *_eval_results.json (or its _pass_at_k.json)  -> every sample's solution and status
    *.jsonl / *.jsonl.gz                           -> every sample's solution (or completion)

The benchmark's tasks (from the registry, offline) give each sample its libraries and
language: a task's `metadata["language"]` when it has one (CyberSecEval's prompts), else the
benchmark's language (Python, or a MultiPL-E language). Without tasks every sample is taken
as the benchmark's language and has no libraries; the note says why.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from passbench.analysis.security.scan import ScanItem
from passbench.core.errors import InputError
from passbench.core.records import Task
from passbench.core.runs import results_stem
from passbench.core.samplefile import read_samples, sample_file_stem
from passbench.stages.benchmarks import DataSettings, benchmark_language
from passbench.stages.results.read import guess_benchmark, load_results
from passbench.stages.results.taskinfo import TaskCatalog, load_catalog

SECURITY_SUFFIX = "security.json"
_SAMPLE_SUFFIXES = (".jsonl", ".jsonl.gz")


@dataclass(frozen=True)
class ScanInput:
    path: Path
    kind: Literal["results", "samples"]
    benchmark: str | None
    items: tuple[ScanItem, ...]
    sha256: str  # of the input file
    stem: str
    note: str = ""  # why libraries or languages could not be read from the tasks

    @property
    def default_output(self) -> Path:
        return self.path.with_name(f"{self.stem}_{SECURITY_SUFFIX}")


def security_path_for(results_path: Path) -> Path:
    """`<stem>_security.json` beside a results or samples file: where inspect looks."""
    if results_path.name.endswith(_SAMPLE_SUFFIXES):
        return results_path.with_name(f"{sample_file_stem(results_path)}_{SECURITY_SUFFIX}")
    return results_path.with_name(f"{results_stem(results_path)}_{SECURITY_SUFFIX}")


def read_input(
    path: str | Path, *, benchmark: str | None = None, data: DataSettings | None = None
) -> ScanInput:
    """Read `path` into ScanItems; InputError (one line, naming the file) on bad input."""
    path = Path(path)
    if not path.exists():
        raise InputError("file not found", path=path)
    if path.is_dir():
        raise InputError(
            "is a folder; expected a results (.json) or samples (.jsonl) file", path=path
        )
    if path.name.endswith(_SAMPLE_SUFFIXES):
        return _from_samples(path, benchmark, data)
    if path.name.endswith(".json"):
        return _from_results(path, benchmark, data)
    raise InputError(
        "expected an _eval_results.json results file or a .jsonl / .jsonl.gz samples file",
        path=path,
    )


def _from_results(path: Path, benchmark: str | None, data: DataSettings | None) -> ScanInput:
    run = load_results(path)
    name = benchmark or run.benchmark
    catalog = load_catalog(name, run.dataset_version, data)
    items = [
        _item(catalog, name, sample.task_id, sample.sample_index, sample.solution, sample.status)
        for task_id in run.tasks
        for sample in run.tasks[task_id]
    ]
    return ScanInput(
        path=run.path,
        kind="results",
        benchmark=name,
        items=tuple(items),
        sha256=_sha256(run.path),
        stem=results_stem(run.path),
        note=catalog.note,
    )


def _from_samples(path: Path, benchmark: str | None, data: DataSettings | None) -> ScanInput:
    samples = read_samples(path)
    name = benchmark or guess_benchmark({sample.task_id: None for sample in samples})
    catalog = load_catalog(name, None, data)
    items = []
    for sample in samples:
        code = sample.solution
        if code is None:  # a completion: the program is the Complete prompt + the completion
            task = catalog.tasks.get(sample.task_id)
            prompt = task.prompts.get("complete", "") if task is not None else ""
            code = prompt + (sample.completion or "")
        items.append(_item(catalog, name, sample.task_id, sample.sample_index, code, None))
    return ScanInput(
        path=path,
        kind="samples",
        benchmark=name,
        items=tuple(items),
        sha256=_sha256(path),
        stem=sample_file_stem(path),
        note=catalog.note,
    )


def _item(
    catalog: TaskCatalog,
    benchmark: str | None,
    task_id: str,
    index: int,
    code: str,
    status: str | None,
) -> ScanItem:
    task = catalog.tasks.get(task_id)
    return ScanItem(
        task_id=task_id,
        sample_index=index,
        code=code,
        language=task_language(task, benchmark),
        libs=task.libs if task is not None else (),
        status=status,
    )


def task_language(task: Task | None, benchmark: str | None) -> str:
    """A task's own language (metadata["language"]), else its benchmark's."""
    if task is not None:
        language = task.metadata.get("language")
        if isinstance(language, str) and language:
            return language
    return benchmark_language(benchmark)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
