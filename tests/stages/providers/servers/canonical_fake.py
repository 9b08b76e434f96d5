"""An OpenAI-compatible server whose model answers with the canonical solutions, dressed up as
chat answers (passbench.stages.sanitize.wrappers): for end-to-end runs of generate -> sanitize ->
evaluate whose pass@1 must equal the ground truth's pass rate.

    server = CanonicalChatServer(tasks, benchmark, split="complete")
    ... passbench run --provider openai --base-url {server.url}/v1 ...
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

from passbench.core.records import Task
from passbench.stages.benchmarks import Benchmark
from passbench.stages.prompts import build_prompt
from passbench.stages.sanitize.wrappers import WRAPPERS, wrap_answer

from .base import Recorded, Reply, last_user_text
from .openai_fake import OpenAIFake

#: The prompt the fake cannot place gets this: prose without code, an extraction failure.
NO_CODE = "I am sorry, I cannot help with that."


class CanonicalChatServer(OpenAIFake):
    """Answers each task's chat prompt (the official API protocol: the user message alone)
    with its canonical program wrapped in one of the answer styles, cycling through them."""

    def __init__(
        self,
        tasks: Sequence[Task],
        benchmark: Benchmark,
        *,
        split: str = "complete",
        styles: Sequence[str] = tuple(WRAPPERS),
        unanswerable: Sequence[str] = (),
    ) -> None:
        super().__init__()
        self.answers: dict[str, str] = {}
        self.styles: dict[str, str] = {}
        self.answers_by_task: dict[str, str] = {}
        cycle = itertools.cycle(styles)
        for task in tasks:
            prompt = build_prompt(task, split, chat=True, prefill=False, chat_template=False)
            style = next(cycle)
            code = task.prompts["complete"] if split == "complete" else task.code_prompt
            self.styles[task.task_id] = style
            self.answers[prompt.text] = self.answers_by_task[task.task_id] = (
                NO_CODE
                if task.task_id in unanswerable
                else wrap_answer(
                    benchmark.canonical_code(task),
                    style,
                    entry_point=task.entry_point,
                    prompt=code,
                )
            )

    def answer(self, request: Recorded) -> Reply:
        reply = super().answer(request)
        body: Any = request.body if isinstance(request.body, dict) else {}
        if reply.status != 200 or "messages" not in body:
            return reply
        text = self.answers.get(last_user_text(body["messages"]))
        if text is None:
            return Reply(400, {"error": {"message": "unknown prompt", "type": "fake"}})
        for choice in reply.body["choices"]:
            choice["message"]["content"] = text
        return reply
