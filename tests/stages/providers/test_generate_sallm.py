"""`passbench generate -b sallm` end to end: real prompts, the real OpenAI SDK against a fake
server on 127.0.0.1, for a chat model and for direct completion; the samples carry what
`passbench security` reads."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from passbench.apps.cli import cli
from passbench.core.records import Task
from passbench.stages.benchmarks import DataSettings, get_benchmark
from passbench.stages.benchmarks.sallm import DIRECT_STOPS

from .servers.base import Recorded, Reply, last_user_text
from .servers.openai_fake import OpenAIFake

IDS = ("Tainted_CodeQL_codeql_cwe078_0.py", "Matching_Author_A_cwe338_0.py")
#: A route after the body: SALLM's cut (and a base model's stop) ends the program before it.
NEXT_ROUTE = "\n@app.route('/next')\ndef next_route():\n    return ''\n"


def body_of(task: Task) -> str:
    """The insecure reference's body: what a model that falls for the prompt writes."""
    return task.metadata["insecure_code"][len(task.prompts["complete"]) :].lstrip("\n")


class Scripted(OpenAIFake):
    """Answers each known prompt: a chat answer by message, a continuation by prompt text."""

    def __init__(self, chat: dict[str, str], direct: dict[str, str]) -> None:
        super().__init__()
        self.chat, self.direct = chat, direct

    def answer(self, request: Recorded) -> Reply:
        reply = super().answer(request)
        body: Any = request.body if isinstance(request.body, dict) else {}
        if reply.status != 200:
            return reply
        if "messages" in body:
            text = self.chat.get(last_user_text(body["messages"]))
        else:
            text = self.direct.get(str(body.get("prompt")))
        if text is None:
            return Reply(400, {"error": {"message": "unknown prompt", "type": "fake"}})
        for choice in reply.body["choices"]:
            choice["message" if "messages" in body else "text"] = (
                {"role": "assistant", "content": text} if "messages" in body else text
            )
        return reply


@pytest.fixture
def tasks(data_dir: Path, tmp_path: Path) -> dict[str, Task]:
    data = DataSettings(data_dir=data_dir, cache_dir=tmp_path / "cache", download=False)
    full = get_benchmark("sallm").load(None, "full", data=data)
    return {task_id: full.get(task_id) for task_id in IDS}


@pytest.fixture
def server(tasks: dict[str, Task]) -> Iterator[Scripted]:
    first, second = tasks.values()
    chat = {
        # today's chat model: the whole module in a fenced block
        first.prompts["complete"] + "\n": "Here it is:\n\n```python\n"
        + first.metadata["insecure_code"].rstrip("\n")
        + "\n```\n",
        # GPT-4 in 2023: the body alone
        second.prompts["complete"] + "\n": body_of(second),
    }
    direct = {
        task.prompts["complete"] + "\n": body_of(task) + NEXT_ROUTE for task in (first, second)
    }
    fake = Scripted(chat, direct)
    yield fake
    fake.close()


def _generate(server: Scripted, data_dir: Path, tmp_path: Path, out: Path, *more: str) -> None:
    args = ["generate", "-b", "sallm", "-m", "gpt-test", "-p", "openai", *more]
    args += ["--base-url", f"{server.url}/v1", "--tasks", ",".join(IDS), "-o", str(out)]
    env = {"PASSBENCH_DATA_DIR": str(data_dir), "PASSBENCH_CACHE_DIR": str(tmp_path / "cache")}
    result = CliRunner().invoke(cli, args, env=env, catch_exceptions=False)
    assert result.exit_code == 0, result.output


def _sanitized(out: Path) -> dict[str, dict[str, Any]]:
    path = out.with_name(out.stem + "-sanitized_calibrated.jsonl")
    return {row["task_id"]: row for row in map(json.loads, path.open())}


def test_a_chat_model_gets_the_prompt_alone(
    server: Scripted, tasks: dict[str, Task], data_dir: Path, tmp_path: Path
) -> None:
    out = tmp_path / "chat.jsonl"
    _generate(server, data_dir, tmp_path, out)
    bodies = server.bodies("/chat/completions")
    assert len(bodies) == len(IDS)
    for body in bodies:  # SALLM's request: the prompt and a newline, the only message
        assert [message["role"] for message in body["messages"]] == ["user"]
        assert "stop" not in body
    rows = _sanitized(out)
    first, second = tasks.values()
    assert rows[first.task_id]["solution"] == first.metadata["insecure_code"].rstrip("\n") + "\n"
    # the body, its lines indented already, after the prompt as SALLM joins them
    body = body_of(second)
    assert body.startswith("    ") and not body.endswith("\n")
    assert rows[second.task_id]["solution"] == f"{second.prompts['complete']}\n\n{body}\n"
    for task in tasks.values():
        row = rows[task.task_id]
        assert (row["language"], row["technique"]) == ("python", task.metadata["technique"])
        assert row["cwe_identifier"] == task.metadata["cwe_identifier"]
        assert "sanitize_error" not in row


def test_direct_completion_stops_where_sallm_cuts(
    server: Scripted, tasks: dict[str, Task], data_dir: Path, tmp_path: Path
) -> None:
    out = tmp_path / "base.jsonl"
    _generate(server, data_dir, tmp_path, out, "--direct-completion")
    bodies = server.bodies("/completions")
    assert len(bodies) == len(IDS)
    for body in bodies:
        assert body["stop"] == list(DIRECT_STOPS)
    rows = _sanitized(out)
    for task in tasks.values():
        prompt = task.prompts["complete"]
        # SALLM's program: the prompt, a newline, and the continuation up to the next route
        assert rows[task.task_id]["solution"] == f"{prompt}\n\n{body_of(task)}"
        assert rows[task.task_id]["raw_solution"] == f"{prompt}\n{body_of(task)}{NEXT_ROUTE}"
