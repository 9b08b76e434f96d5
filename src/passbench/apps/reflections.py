"""Aider's reflections: an answer that is not to stand is sent back within the same request.

Aider (aider/coders/base_coder.py `run_one`, `send_message`, `apply_updates`) counts an answer
whose edits cannot be applied as malformed (`num_malformed_responses`) and sends the error text
back to the model as the next user message, in the same conversation; an answer whose edits
applied has the files it edited linted, and their errors are sent back the same way. Both count
toward one limit, `max_reflections` (3) per request, before the tests run. A benchmark says
whether its answers are such edits: its `max_reflections` (0 by default: an answer stands as
given) and its `reflection` for a conversation's answers (Aider's error text or lint errors, ""
when the last answer stands).

The request that sends a reflection is laid out by the benchmark (`follow_up`: Aider's moves
an applied answer's exchange before the files, shown again as they now are). Here a chat answer
with a reflection is held in a side file beside the raw samples (`STEM.reflecting.jsonl`)
instead of being written; once every answer of the request has arrived, each held sample is
asked again with its reflection, and its new answer held again, until an answer stands or the
sample's reflections run out; then its last answer is written as the sample, with the
conversation it was given (`messages`), its earlier answers and the messages after them
(`earlier_answers`, `follow_ups`: what the next request is rebuilt from) and how many
reflections it took (`reflections`). Its program comes from every answer of the conversation in
turn (`samplerows.conversation_answers`), as Aider's files keep each edit. A run that stops
keeps the side file: the next run continues each held sample from its last answer, asking
nothing twice.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from passbench.apps.samplerows import (
    Appender,
    continued,
    conversation_answers,
    follow_up_request,
    read_rows,
    row_key,
    sample_row,
    task_fields,
)
from passbench.core.records import Prompt, Task
from passbench.core.samplefile import sample_file_stem
from passbench.stages.benchmarks import get_benchmark
from passbench.stages.providers import ModelRunner

Row = dict[str, Any]


def reflecting_file(raw: Path) -> Path:
    """The side file of the samples of `raw` held for a reflection."""
    return raw.with_name(f"{sample_file_stem(raw)}.reflecting.jsonl")


class Reflections:
    """The samples of one sample file held for a reflection, and the asking of them again."""

    def __init__(
        self,
        raw: Path,
        tasks: Mapping[str, Task],
        prompts: Mapping[str, Prompt],
        split: str,
        *,
        chat: bool,
        done: set[tuple[str, int]],
    ) -> None:
        self.tasks = tasks
        self.prompts = prompts
        self.split = split
        self.chat = chat
        self.path = reflecting_file(raw)
        # held by an earlier run that stopped: the last answer of each, unless written since
        self.held: dict[tuple[str, int], Row] = {
            row_key(row): row
            for row in read_rows(self.path)
            if row["task_id"] in tasks and row_key(row) not in done
        }
        self._out = Appender(self.path)
        # the reflection of each held row's last answer, once worked out
        self._messages: dict[tuple[str, int, int], str] = {}

    def reflection(self, row: Row) -> str:
        """What to send back for the row's answer: "" when it stands, when the benchmark does
        not reflect or the sample's reflections ran out, or for a completion model."""
        task = self.tasks[str(row["task_id"])]
        limit = get_benchmark(task.benchmark).info.max_reflections
        if not self.chat or int(row.get("reflections", 0)) >= limit:
            return ""
        answers = conversation_answers(row)
        key = (*row_key(row), len(answers))  # one answer of one sample's conversation
        if key not in self._messages:  # linting runs tools: once per answer
            benchmark = get_benchmark(task.benchmark)
            self._messages[key] = benchmark.reflection(answers, task, self.split)
        return self._messages[key]

    def hold(self, row: Row) -> bool:
        """Hold the row when its answer is to be sent back (True), else leave it be written."""
        if not self.reflection(row):
            return False
        self._out.write(row)
        self.held[row_key(row)] = row
        return True

    async def settle(self, runner: ModelRunner, write: Callable[[Row], None]) -> None:
        """Ask every held sample again until its answer stands or its reflections run out,
        writing each sample's last answer through `write`."""
        try:
            while self.held:
                asked: dict[int, list[tuple[Prompt, Row, str]]] = {}
                for key, row in list(self.held.items()):
                    message = self.reflection(row)
                    if not message:
                        write(row)
                        del self.held[key]
                        continue
                    asked.setdefault(int(row["sample_index"]), []).append(
                        (self._follow_up(row, message), row, message)
                    )
                for index in sorted(asked):
                    await self._ask(runner, index, asked[index])
        finally:
            self._out.close()
        self.path.unlink(missing_ok=True)  # every held sample is written

    def close(self) -> None:
        self._out.close()

    def _follow_up(self, row: Row, message: str) -> Prompt:
        task_id = str(row["task_id"])
        return follow_up_request(
            row, self.prompts[task_id], self.tasks[task_id], self.split, message
        )

    async def _ask(
        self, runner: ModelRunner, index: int, asked: list[tuple[Prompt, Row, str]]
    ) -> None:
        by_id = {prompt.task_id: (prompt, row, message) for prompt, row, message in asked}
        prompts = [prompt for prompt, _, _ in asked]
        async for completion in runner.iter_completions(prompts, 1, first_index=index):
            prompt, before, message = by_id[completion.task_id]
            row = sample_row(completion, prompt, chat=True)
            row.update(task_fields(self.tasks[completion.task_id]))
            if "try" in before:
                row["try"] = before["try"]
            row["messages"] = [dict(turn) for turn in prompt.messages]
            row.update(continued(before, self.prompts[completion.task_id], message))
            row["reflections"] = int(before.get("reflections", 0)) + 1
            row["usage"] = _added(before.get("usage"), row.get("usage"))
            self._out.write(row)
            self.held[row_key(row)] = row


def _added(before: Any, now: Any) -> dict[str, Any]:
    """The tokens (and cost, when both requests know it) of the sample's requests so far."""
    first, second = dict(before or {}), dict(now or {})
    total: dict[str, Any] = {
        name: int(first.get(name) or 0) + int(second.get(name) or 0)
        for name in ("input_tokens", "output_tokens")
    }
    cost_before, cost_now = first.get("cost_usd"), second.get("cost_usd")
    total["cost_usd"] = (
        None if cost_before is None or cost_now is None else float(cost_before) + float(cost_now)
    )
    return total
