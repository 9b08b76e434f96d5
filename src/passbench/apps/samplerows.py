"""The rows of passbench's sample files: one line per sample, appended as each arrives.

A raw row is the model's answer and what produced it (`sample_row`); its sanitized twin adds
the program the answer stands for (`sanitized_row`). A row that continues a conversation (a
later try, a reflection) records the conversation it was sent (`messages`), the model's
earlier answers in it (`earlier_answers`), which a benchmark whose answers are edits applies
before the last (`conversation_answers`, the benchmark's `sanitize_answers`), and the user
message that followed each of them (`follow_ups`): with the first prompt, enough to lay out
the next request again after a restart (`follow_up_request`, the benchmark's `follow_up`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import IO, Any

from passbench.core.errors import SampleFileError
from passbench.core.records import Completion, Exchange, Prompt, Task
from passbench.stages.benchmarks import get_benchmark
from passbench.stages.sanitize import SanitizeResult


def sample_row(completion: Completion, prompt: Prompt, *, chat: bool) -> dict[str, Any]:
    """One raw-file line: the official fields first, passbench's beside them. For direct
    completion `raw_solution` is the prompt followed by the continuation, as officially."""
    raw = completion.text if chat else prompt.text + completion.text
    return {
        "task_id": completion.task_id,
        "raw_solution": raw,
        "sample_index": completion.sample_index,
        "model": completion.model,
        "provider": completion.provider,
        "finish_reason": completion.finish_reason,
        "usage": asdict(completion.usage),
        "latency_s": round(completion.latency_s, 3),
        "params": dict(completion.params),
        # the thinking, apart from the answer: never sanitized, never evaluated
        **({"reasoning": completion.reasoning} if completion.reasoning else {}),
        **({"truncated": completion.truncated} if completion.truncated else {}),
    }


def sanitize_task_answer(answer: str, task: Task, split: str) -> SanitizeResult:
    """The program a raw answer to `task` stands for: the benchmark's own rule where it has one
    (`sanitize_answer`: MultiPL-E's fenced block in its language, LiveCodeBench's last fenced
    block), else Python's sanitizer."""
    return get_benchmark(task.benchmark).sanitize_answer(answer, task, split)


def task_fields(task: Task) -> dict[str, Any]:
    """What the benchmark records about `task` in each of its sample rows (`sample_fields`:
    CyberSecEval's language and CWE, which `passbench security` reads); empty for most."""
    return dict(get_benchmark(task.benchmark).sample_fields(task))


def sanitized_row(raw_row: Mapping[str, Any], task: Task, split: str) -> dict[str, Any]:
    """The sanitized-file line for one raw line: `solution` first, the raw answer kept, and
    `sanitize_error` when no usable definition of the entry point was found."""
    result = sanitize_answers(conversation_answers(raw_row), task, split)
    row: dict[str, Any] = {"task_id": raw_row["task_id"], "solution": result.code}
    row.update({key: value for key, value in raw_row.items() if key != "task_id"})
    row.update(task_fields(task))
    if not result.ok:
        row["sanitize_error"] = result.reason
    return row


def conversation_answers(raw_row: Mapping[str, Any]) -> list[str]:
    """The model's answers in the row's conversation, oldest first: its `earlier_answers`
    (those of earlier tries and reflections, which its `messages` hold among the prompt's own
    example turns), then its own `raw_solution`."""
    earlier = raw_row.get("earlier_answers") or ()
    return [*(str(answer) for answer in earlier), str(raw_row["raw_solution"])]


def follow_ups(row: Mapping[str, Any], first: Prompt) -> list[str]:
    """The user messages that followed each of the row's earlier answers, oldest first: its
    `follow_ups`; for a row written before passbench recorded them, the user turns its
    `messages` added after the first prompt's (each follow-up was then appended at the end)."""
    if "follow_ups" in row:
        return [str(message) for message in row["follow_ups"] or ()]
    sent = list(row.get("messages") or ())[len(first.messages) :]
    return [str(message["content"]) for message in sent if message.get("role") == "user"]


def exchanges(row: Mapping[str, Any], first: Prompt, message: str) -> list[Exchange]:
    """The row's conversation after its first prompt, continued with `message`: each answer
    (the row's own last) with the user message that followed it."""
    answers = conversation_answers(row)
    messages = [*follow_ups(row, first), message]
    if len(messages) != len(answers):
        raise SampleFileError(
            f"sample {row['sample_index']} of {row['task_id']} has {len(answers) - 1} earlier "
            f"answers but {len(messages) - 1} follow-up messages; pass --no-resume to start "
            "afresh",
            field="follow_ups",
        )
    return [Exchange(answer, text) for answer, text in zip(answers, messages, strict=True)]


def follow_up_request(
    row: Mapping[str, Any], first: Prompt, task: Task, split: str, message: str
) -> Prompt:
    """The request that continues the row's conversation with `message`, laid out by the
    benchmark (`follow_up`) from the first prompt and the conversation's exchanges."""
    return get_benchmark(task.benchmark).follow_up(
        first, exchanges(row, first, message), task, split
    )


def continued(row: Mapping[str, Any], first: Prompt, message: str) -> dict[str, Any]:
    """The fields a row records when its answer continues `row`'s conversation after
    `message`: the conversation's answers so far and the messages that followed them."""
    return {
        "earlier_answers": conversation_answers(row),
        "follow_ups": [*follow_ups(row, first), message],
    }


def sanitize_answers(answers: Sequence[str], task: Task, split: str) -> SanitizeResult:
    """The program the answers of one conversation stand for (`sanitize_answers` of the
    benchmark: the last answer's, or for edits each applied over the ones before)."""
    return get_benchmark(task.benchmark).sanitize_answers(answers, task, split)


def read_rows(path: Path) -> list[dict[str, Any]]:
    """Rows of a file this module appends to. A last line cut short by an interruption is
    dropped (and cut from the file, so appending goes on cleanly); damage elsewhere is an error."""
    if not path.exists():
        return []
    data = path.read_bytes()
    lines = data.split(b"\n")
    rows: list[dict[str, Any]] = []
    good_bytes = 0
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            good_bytes += len(line) + 1
            continue
        try:
            row = json.loads(line)
        except (json.JSONDecodeError, UnicodeDecodeError):
            if number == len(lines):  # no newline after it: the write was interrupted
                with open(path, "r+b") as handle:
                    handle.truncate(min(good_bytes, len(data)))
                break
            raise SampleFileError("malformed JSON", path=path, line=number) from None
        if (
            not isinstance(row, dict)
            or not isinstance(row.get("task_id"), str)
            or not isinstance(row.get("sample_index"), int)
        ):
            raise SampleFileError(
                "expected an object with task_id and sample_index (written by passbench "
                "generate); pass --no-resume to start the file afresh",
                path=path,
                line=number,
            )
        rows.append(row)
        good_bytes += len(line) + 1
    else:
        if data and not data.endswith(b"\n"):  # whole last row, its newline not yet written
            with open(path, "ab") as handle:
                handle.write(b"\n")
    return rows


def row_key(row: Mapping[str, Any]) -> tuple[str, int]:
    return str(row["task_id"]), int(row["sample_index"])


class Appender:
    """Appends JSON lines, flushed one by one, so each finished sample survives a crash."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._handle: IO[str] | None = None  # opened on the first row: no empty files

    def write(self, row: Mapping[str, Any]) -> None:
        if self._handle is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._handle = open(self.path, "a", encoding="utf-8")  # noqa: SIM115 (closed in close())
        self._handle.write(json.dumps(row, ensure_ascii=False) + "\n")
        self._handle.flush()

    def close(self) -> None:
        if self._handle is not None:
            os.fsync(self._handle.fileno())
            self._handle.close()
            self._handle = None
