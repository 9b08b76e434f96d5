"""A reasoning model through the real OpenAI client, end to end (`passbench run`): a loopback
server sends `reasoning_content` beside each answer and cuts some answers at the token limit.
The reasoning must stay out of what is evaluated, answered tasks must score as their code
deserves, and a truncated answer must be recorded as "no answer (truncated)", never as a test
failure."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.apps.loopback_run import invoke
from tests.stages.providers.servers.base import Recorded, Reply, last_user_text
from tests.stages.providers.servers.canonical_fake import CanonicalChatServer

from passbench.core.records import Task
from passbench.stages.benchmarks import DataSettings, get_benchmark

#: Cut mid-program at the token limit: no answer.
CUT_MID_CODE = ("HumanEval/0", "HumanEval/1")
#: Cut at the token limit after the program was complete: it passes, as officially.
CUT_AFTER_CODE = "HumanEval/2"
#: Answers wrong code while its reasoning holds the right one: must fail.
WRONG_ANSWER = "HumanEval/5"


class ReasoningServer(CanonicalChatServer):
    """Each answer comes with `reasoning_content` holding a draft of the entry point: a wrong
    one, except for WRONG_ANSWER, whose reasoning has the right program and answer a wrong one."""

    def __init__(self, tasks: list[Task]) -> None:
        super().__init__(tasks, get_benchmark("humaneval"), styles=("prose",))
        self.by_prompt = {prompt: task for prompt, task in zip(self.answers, tasks, strict=True)}

    def answer(self, request: Recorded) -> Reply:
        reply = super().answer(request)
        if reply.status != 200:
            return reply
        task = self.by_prompt[last_user_text(request.body["messages"])]
        wrong = f"def {task.entry_point}(*args):\n    return None\n"
        right = self.answers_by_task[task.task_id]
        for choice in reply.body["choices"]:
            message = choice["message"]
            message["reasoning_content"] = f"A first draft:\n```python\n{wrong}```\nNo."
            if task.task_id in CUT_MID_CODE:
                message["content"] = right[: len(right) // 2]
                choice["finish_reason"] = "length"
            elif task.task_id == CUT_AFTER_CODE:
                choice["finish_reason"] = "length"
            elif task.task_id == WRONG_ANSWER:
                message["reasoning_content"] = f"The solution is:\n{right}"
                message["content"] = f"```python\n{wrong}```"
        return reply


@pytest.mark.bwrap
def test_reasoning_is_kept_apart_and_truncated_answers_are_not_test_failures(
    data_dir: Path, tmp_path: Path
) -> None:
    data = DataSettings(data_dir=data_dir, cache_dir=tmp_path / "cache", download=False)
    tasks = list(get_benchmark("humaneval").load(None, "full", data=data))[:7]
    server = ReasoningServer(tasks)
    out = tmp_path / "out"
    args = ["run", "-m", "r1", "-p", "openai", "--base-url", f"{server.url}/v1"]
    args += ["-b", "humaneval", "--id-range", "0-7", "--output-dir", str(out), "--no-cache"]
    try:
        exit_code, output = invoke(args, data_dir, tmp_path / "cache")
    finally:
        server.close()
    assert exit_code == 0, output

    stem = "r1--main--humaneval-complete--openai-0-1"
    raw = {
        row["task_id"]: row
        for row in map(json.loads, (out / f"{stem}.jsonl").read_text().splitlines())
    }
    for row in raw.values():  # the reasoning is in its own field, never in the answer
        assert row["reasoning"].startswith(("A first draft:", "The solution is:"))
        assert "A first draft" not in row["raw_solution"]
    assert {task for task, row in raw.items() if "truncated" in row} == {
        *CUT_MID_CODE,
        CUT_AFTER_CODE,
    }

    results = out / f"{stem}-sanitized_calibrated_eval_results.json"
    verdicts = {
        task: entries[0] for task, entries in json.loads(results.read_text())["eval"].items()
    }
    for task in CUT_MID_CODE:
        assert verdicts[task]["status"] == "fail"  # officially a failure: pass@1 counts it
        assert verdicts[task]["verdict"] == "no answer (truncated)"
        assert verdicts[task]["truncated"] == "token limit (finish reason 'length')"
    assert (
        verdicts[CUT_AFTER_CODE]["status"] == "pass" and "verdict" not in verdicts[CUT_AFTER_CODE]
    )
    # the right program was only in the reasoning: the answer's wrong one is what counts
    assert verdicts[WRONG_ANSWER]["status"] == "fail" and "verdict" not in verdicts[WRONG_ANSWER]
    passing = {task for task, entry in verdicts.items() if entry["status"] == "pass"}
    assert passing == {"HumanEval/2", "HumanEval/3", "HumanEval/4", "HumanEval/6"}

    scores = json.loads((out / f"{stem}-sanitized_calibrated_pass_at_k.json").read_text())
    assert scores["pass@1"] == pytest.approx(4 / 7)
    summary = " ".join(output.split())
    assert "passed 4, failed tests 1, extraction failures 0, no answer (truncated) 2" in summary
