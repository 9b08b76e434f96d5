"""BigCodeBench (bigcode-project/bigcodebench): 1,140 tasks tested by unittest classes.

Every string this module builds from a task is joined exactly as the official evaluator
(bigcodebench.evaluate) joins it, so verdicts and scores stay comparable:

- ground truth:   complete_prompt + "\\n" + canonical_solution          (get_groundtruth)
- from completion: complete_prompt + completion                         (evaluate)
- calibrated:      code_prompt + "\\n    pass\\n" + solution             (evaluate, calibrated)
- tested program:  solution + "\\n" + test, then unittest class TestCases (eval.unsafe_execute)

Prompts follow `bigcodebench/provider/utility.py::make_raw_chat_prompt`, `bigcodebench/generate.py`
(default prefixes) and `bigcodebench/provider/{openai,anthropic,vllm,hf}.py` (who prefills, which
stop sequences): `PROMPT_STYLE`.
"""

from __future__ import annotations

import gzip
import hashlib
import json
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

from passbench.core.errors import DatasetError
from passbench.core.progress import Progress
from passbench.core.records import Task
from passbench.stages.benchmarks._fields import RecordReader
from passbench.stages.benchmarks.base import BenchmarkBase, BenchmarkInfo, Original
from passbench.stages.benchmarks.data import (
    DataFile,
    DataSettings,
    ResolvedFile,
    read_jsonl,
    resolve,
)
from passbench.stages.benchmarks.preload import heavy_libs
from passbench.stages.benchmarks.prompting import (
    DIRECT_COMPLETION_EOS,
    EOS,
    PromptStyle,
    identity,
    stop_at_fence_in_prefix,
)

NAME = "bigcodebench"
PLUS_NAME = "bigcodebench-plus"
_RELEASES = "bigcode-project/bigcodebench-annotation/releases/download"
_HARD_IDS = "bigcodebench/hard-task-ids.json"
#: BCBPlus's committed build of each release: the commit, and the sha256 of the file's text
#: (the `sha256` its Hugging Face card publishes), which a download must match.
_PLUS_BUILDS = {
    "v1.0.2": (
        "e86d63d8c089bd8fd1e16ff6daaa7b43f13e34dc",
        "3b05c95c55e018d50dadea49d79878e6814ed638d6f89afaf099c4e90dc69a16",
    ),
}
#: The v0.1.4 tasks each BigCodeBench+ release left out (upstream's exclusions).
_PLUS_EXCLUDED = {
    "v1.0.2": ("BigCodeBench/354", "BigCodeBench/501", "BigCodeBench/814", "BigCodeBench/1040"),
}


def parse_tasks(path: Path) -> tuple[Task, ...]:
    """Tasks of a BigCodeBench jsonl(.gz) file; DatasetError names the file, line and field."""
    tasks: list[Task] = []
    seen: dict[str, int] = {}
    for line, raw in read_jsonl(path):
        record = RecordReader(raw, path, line)
        task_id = _unique_id(record, seen)
        tasks.append(_task(NAME, task_id, record, {"doc_struct": raw.get("doc_struct", "")}))
    if not tasks:
        raise DatasetError(f"{path}: no tasks in file")
    return tuple(tasks)


def _unique_id(record: RecordReader, seen: dict[str, int]) -> str:
    task_id = record.text("task_id")
    if task_id in seen:
        raise record.error("task_id", f"'{task_id}' already on line {seen[task_id]}")
    seen[task_id] = record.line
    return task_id


def _task(benchmark: str, task_id: str, fields: RecordReader, metadata: dict[str, Any]) -> Task:
    """One task from a record with BigCodeBench's fields (a row, or BigCodeBench+'s `content`)."""
    return Task(
        benchmark=benchmark,
        task_id=task_id,
        entry_point=fields.text("entry_point"),
        prompts={
            "complete": fields.text("complete_prompt"),
            "instruct": fields.text("instruct_prompt"),
        },
        code_prompt=fields.text("code_prompt"),
        test=fields.text("test"),
        canonical_solution=fields.text("canonical_solution"),
        libs=fields.string_list("libs"),
        metadata=metadata,
    )


def parse_plus_tasks(path: Path) -> tuple[Task, ...]:
    """Tasks of a BigCodeBench+ jsonl(.gz) file: rows `{task_id, version, version_id, status,
    content: {BigCodeBench's fields but doc_struct}}`. Rows whose status is not "active" are
    excluded tasks and left out, as BCBPlus leaves them out."""
    tasks: list[Task] = []
    seen: dict[str, int] = {}
    for line, raw in read_jsonl(path):
        record = RecordReader(raw, path, line)
        task_id = _unique_id(record, seen)
        if record.text("status") != "active":
            continue
        content = raw.get("content")
        if not isinstance(content, dict):
            raise record.error("content", "expected an object of the task's fields")
        revision = raw.get("version")
        if isinstance(revision, bool) or not isinstance(revision, int):
            raise record.error("version", f"expected an integer, got {revision!r:.40}")
        metadata = {"revision": revision, "revision_id": raw.get("version_id", "")}
        fields = RecordReader(content, path, line, prefix="content.")
        tasks.append(_task(PLUS_NAME, task_id, fields, metadata))
    if not tasks:
        raise DatasetError(f"{path}: no active tasks in file")
    return tuple(tasks)


def parse_hard_ids(path: Path) -> tuple[str, ...]:
    """Task ids of BigCodeBench-Hard: {"task_ids": [...], "count": n} or a plain JSON list."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise DatasetError(f"{path}: cannot read hard-subset task ids: {error}") from error
    ids = document.get("task_ids") if isinstance(document, dict) else document
    if not isinstance(ids, list) or not ids or not all(isinstance(i, str) for i in ids):
        raise DatasetError(f"{path}: field 'task_ids': expected a non-empty list of task ids")
    if isinstance(document, dict) and document.get("count", len(ids)) != len(ids):
        raise DatasetError(f"{path}: field 'count' is {document['count']}, but {len(ids)} ids")
    return tuple(ids)


def hard_ids_from_release(data: bytes) -> bytes:
    """The public home of the hard subset is a whole jsonl.gz of tasks; keep only its ids."""
    try:
        text = (gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data).decode("utf-8")
    except (OSError, EOFError, UnicodeDecodeError) as error:
        raise DatasetError(f"cannot read hard-subset tasks: {error}") from error
    ids: list[str] = []
    for line, row in enumerate(text.splitlines(), start=1):
        if not row.strip():
            continue
        try:
            record = json.loads(row)
        except json.JSONDecodeError as error:
            raise DatasetError(f"line {line}: not valid JSON: {error}") from error
        if not isinstance(record, dict) or not isinstance(record.get("task_id"), str):
            raise DatasetError(f"line {line}: field 'task_id': missing")
        ids.append(record["task_id"])
    document = {"subset": "hard", "count": len(ids), "task_ids": ids}
    return (json.dumps(document, indent=1) + "\n").encode()


def task_file(version: str) -> DataFile:
    return DataFile(
        relpath=f"bigcodebench/BigCodeBench-{version}.jsonl.gz",
        url_path=f"{_RELEASES}/{version}/BigCodeBench.jsonl.gz",
        check=parse_tasks,
    )


def hard_ids_file(version: str) -> DataFile:
    return DataFile(
        relpath=_HARD_IDS,
        url_path=f"{_RELEASES}/{version}/BigCodeBench-Hard.jsonl.gz",
        check=parse_hard_ids,
        convert=hard_ids_from_release,
    )


def plus_task_file(version: str) -> DataFile:
    commit, text_sha256 = _PLUS_BUILDS[version]

    def convert(data: bytes) -> bytes:
        # the public build is plain jsonl: kept gzipped like the other task files, once its
        # text is exactly the published release's
        text = gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data
        if hashlib.sha256(text).hexdigest() != text_sha256:
            raise DatasetError(f"BigCodeBench+ {version}: the text's sha256 is not {text_sha256}")
        return gzip.compress(text, mtime=0)

    return DataFile(
        relpath=f"bigcodebench/BigCodeBench-Plus-{version}.jsonl.gz",
        url_path=f"ethanelasky/BCBPlus/raw/{commit}/build/bcbplus_full_{version}.jsonl",
        check=parse_plus_tasks,
        convert=convert,
    )


def _user_message(prefix: str, task_prompt: str, split: str, chat_template: bool) -> str:
    # make_raw_chat_prompt: the same user message for API and chat-template backends.
    if split == "complete":
        return f"{prefix}\n```\n{task_prompt.strip()}\n```\n"
    return f"{prefix}\n{task_prompt.strip()}\n"


#: Base models complete the Complete prompt unchanged and stop at the next top-level statement
#: (`EOS + extra_eos_for_direct_completion("bigcodebench")`); chat models stop at a closing
#: fence only when the response prefix itself contains one (`provider/vllm.py`).
PROMPT_STYLE = PromptStyle(
    direct=identity,
    user_message=_user_message,
    direct_stops=EOS + DIRECT_COMPLETION_EOS,
    chat_stops=stop_at_fence_in_prefix,
)


class BigCodeBench(BenchmarkBase):
    """The BigCodeBench benchmark (Complete and Instruct splits; full and hard subsets)."""

    info = BenchmarkInfo(
        name=NAME,
        title="BigCodeBench",
        id_prefix="BigCodeBench/",
        splits=("complete", "instruct"),
        subsets=("full", "hard"),
        subset_sizes={"full": 1140, "hard": 148},  # v0.1.4, as published
        versions=("v0.1.4", "v0.1.5"),
        default_version="v0.1.4",  # the official evaluator's default
        env_name="bigcodebench",
        default_timeout_s=240.0,  # bigcodebench.eval.utils.TIMEOUT_LIMIT
        prompt_style=PROMPT_STYLE,
    )

    def data_file(self, version: str) -> DataFile:
        return task_file(version)

    def parse_tasks(self, path: Path) -> tuple[Task, ...]:
        return parse_tasks(path)

    def select_subset(
        self,
        tasks: tuple[Task, ...],
        subset: str,
        version: str,
        source: ResolvedFile,
        data: DataSettings,
        progress: Progress | None,
    ) -> tuple[tuple[Task, ...], tuple[ResolvedFile, ...]]:
        if subset != "hard":
            return tasks, ()
        ids_file = resolve(hard_ids_file(self.hard_list_version(version)), data, progress=progress)
        kept = select(
            tasks,
            parse_hard_ids(ids_file.path),
            source.path,
            allow_missing=self.hard_list_names_excluded_tasks,
        )
        return kept, (ids_file,)

    # which release's published Hard list selects the subset, and whether it may name tasks
    # this task set no longer has
    hard_list_names_excluded_tasks = False

    def hard_list_version(self, version: str) -> str:
        return version

    def program_fields(self, task: Task, code: str, timeout_s: float) -> dict[str, Any]:
        return {
            "source": code + "\n" + task.test,
            "style": "unittest",
            "test_class": "TestCases",
            "timeout_s": timeout_s,
            "preload": heavy_libs(task),
        }

    def canonical_code(self, task: Task) -> str:
        return task.prompts["complete"] + "\n" + task.canonical_solution

    def calibrated_code(self, task: Task, solution: str) -> str:
        # The code prompt first (imports + a stub), so a solution that forgot the prompt's
        # imports still runs; the official evaluator's default "calibrated" mode does this.
        return task.code_prompt + "\n    pass\n" + solution


class BigCodeBenchPlus(BigCodeBench):
    """BigCodeBench+ (BCBPlus): BigCodeBench v0.1.4 with corrected specs, tests and canonical
    solutions, four tasks excluded; graded exactly as BigCodeBench (same programs, environment,
    limits and calibration). Its Hard subset is BigCodeBench-Hard's ids that it kept."""

    info = replace(
        BigCodeBench.info,
        name=PLUS_NAME,
        title="BigCodeBench+",
        subset_sizes={"full": 1136, "hard": 146},  # v1.0.2
        versions=tuple(_PLUS_BUILDS),
        default_version="v1.0.2",
        # its ids are BigCodeBench's: an official file of BigCodeBench ids is BigCodeBench's
        guess_from_ids=False,
    )

    def data_file(self, version: str) -> DataFile:
        return plus_task_file(version)

    def parse_tasks(self, path: Path) -> tuple[Task, ...]:
        return parse_plus_tasks(path)

    # the Hard list of the release it corrects; the tasks it excluded are in that list
    hard_list_names_excluded_tasks = True

    def hard_list_version(self, version: str) -> str:
        return self.original_version

    @property
    def original_version(self) -> str:
        return BigCodeBench.info.default_version

    def corrects(self, version: str) -> Original | None:
        return Original(NAME, self.original_version, _PLUS_EXCLUDED[version])


def select(
    tasks: tuple[Task, ...], ids: Iterable[str], path: Path, *, allow_missing: bool = False
) -> tuple[Task, ...]:
    """The tasks whose ids are in `ids`, in dataset order; every id must be present unless
    `allow_missing` (a corrected release that excluded some)."""
    wanted = set(ids)
    chosen = tuple(task for task in tasks if task.task_id in wanted)
    if allow_missing:
        return chosen
    missing = wanted - {task.task_id for task in chosen}
    if missing:
        shown = ", ".join(sorted(missing)[:5])
        raise DatasetError(
            f"{path}: lacks {len(missing)} task(s) of the hard subset ({shown}"
            f"{', ...' if len(missing) > 5 else ''})"
        )
    return chosen
