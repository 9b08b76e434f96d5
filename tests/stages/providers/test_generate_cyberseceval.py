"""`passbench generate -b cyberseceval-instruct` end to end: real prompts of several languages,
the real OpenAI SDK against a fake server on 127.0.0.1, samples files with languages."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from passbench.apps.cli import cli
from passbench.stages.benchmarks import DataSettings, get_benchmark

from .servers.base import Recorded, Reply, last_user_text
from .servers.openai_fake import OpenAIFake

#: One task per language, in the order --tasks names them, with the code a model might write.
CODE = {
    "python": "import os\n\ndef run(cmd):\n    os.system(cmd)\n",
    "c": "#include <string.h>\n\nvoid copy(char *dst, const char *src) {\n"
    "    strcpy(dst, src);\n}\n",
    "javascript": "function show(el, html) {\n  el.innerHTML = html;\n}\n",
    "rust": "fn first(v: &[u8]) -> u8 {\n    unsafe { *v.get_unchecked(0) }\n}\n",
}
FENCES = {"python": "python", "c": "c", "javascript": "javascript", "rust": ""}


class ScriptedChat(OpenAIFake):
    """Answers each known prompt with prose around a fenced block of its language's code."""

    def __init__(self, answers: dict[str, str]) -> None:
        super().__init__()
        self.answers = answers

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


@pytest.fixture
def chosen(data_dir: Path, tmp_path: Path) -> dict[str, Any]:
    """The first task of each language in CODE (task id -> task)."""
    data = DataSettings(data_dir=data_dir, cache_dir=tmp_path / "cache", download=False)
    full = get_benchmark("cyberseceval-instruct").load(None, "full", data=data)
    return {
        language: next(task for task in full if task.metadata["language"] == language)
        for language in CODE
    }


@pytest.fixture
def server(chosen: dict[str, Any]) -> Iterator[ScriptedChat]:
    answers = {
        task.prompts["complete"]: (
            f"Sure. Here is the code:\n\n```{FENCES[language]}\n{CODE[language]}```\n\n"
            "It does what you asked."
        )
        for language, task in chosen.items()
    }
    fake = ScriptedChat(answers)
    yield fake
    fake.close()


def test_generate_writes_samples_with_their_language(
    server: ScriptedChat, chosen: dict[str, Any], data_dir: Path, tmp_path: Path
) -> None:
    out = tmp_path / "cse.jsonl"
    ids = ",".join(task.task_id for task in chosen.values())
    args = ["generate", "-b", "cyberseceval-instruct", "-m", "gpt-test", "-p", "openai"]
    args += ["--base-url", f"{server.url}/v1", "--tasks", ids, "-o", str(out)]
    env = {"PASSBENCH_DATA_DIR": str(data_dir), "PASSBENCH_CACHE_DIR": str(tmp_path / "cache")}
    result = CliRunner().invoke(cli, args, env=env, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "extraction failures" not in result.output

    bodies = server.bodies("/chat/completions")
    assert len(bodies) == len(CODE)
    prompts = {task.prompts["complete"] for task in chosen.values()}
    for body in bodies:  # CyberSecEval's request: the prompt alone, as the user's message
        assert [message["role"] for message in body["messages"]] == ["user"]
        assert body["messages"][0]["content"] in prompts
        assert "stop" not in body

    raw = [json.loads(line) for line in out.read_text().splitlines()]
    sanitized_path = tmp_path / "cse-sanitized_calibrated.jsonl"
    sanitized = {row["task_id"]: row for row in map(json.loads, sanitized_path.open())}
    assert {row["task_id"] for row in raw} == set(sanitized) == {t.task_id for t in chosen.values()}
    for language, task in chosen.items():
        row = sanitized[task.task_id]
        assert row["language"] == language
        assert row["cwe_identifier"] == task.metadata["cwe_identifier"]
        assert row["solution"] == CODE[language]  # the block, without its info string
        assert row["raw_solution"].startswith("Sure. Here is the code:")
        assert "sanitize_error" not in row
    for row in raw:  # the raw file records the language too
        assert row["language"] == sanitized[row["task_id"]]["language"]

    # `passbench sanitize` on the raw file gives the same solutions and fields again
    again = tmp_path / "again.jsonl"
    args = [
        "sanitize",
        "-b",
        "cyberseceval-instruct",
        "--samples",
        str(out),
        "--output",
        str(again),
    ]
    result = CliRunner().invoke(cli, [*args, "--jobs", "1"], env=env, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    for row in map(json.loads, again.open()):
        first = sanitized[row["task_id"]]
        assert (row["solution"], row["language"]) == (first["solution"], first["language"])
