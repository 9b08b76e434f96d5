"""`passbench run --tries N` end to end, through the real `openai` client against a loopback
OpenAI-compatible server whose model answers wrongly until it has seen its test output a given
number of times, on MultiPL-E's JavaScript tasks (whose failing runs print node's output)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.apps.loopback_run import invoke, run_args
from tests.stages.providers.servers.base import Recorded, Reply
from tests.stages.providers.servers.openai_fake import OpenAIFake

from passbench.apps.cli import main
from passbench.core.errors import PermanentProviderError
from passbench.stages.benchmarks import DataSettings, get_benchmark
from passbench.stages.feedback import TEST_FAILURES_NO_FILES
from passbench.stages.prompts import build_prompt

BENCHMARK = "multipl-e-js"
RIGHT = {
    "HumanEval_0_has_close_elements": """function has_close_elements(numbers, threshold){
  for (let i = 0; i < numbers.length; i++)
    for (let j = 0; j < numbers.length; j++)
      if (i !== j && Math.abs(numbers[i] - numbers[j]) < threshold) return true;
  return false;
}""",
    "HumanEval_3_below_zero": """function below_zero(operations){
  let balance = 0;
  for (const op of operations) { balance += op; if (balance < 0) return true; }
  return false;
}""",
    "HumanEval_4_mean_absolute_deviation": """function mean_absolute_deviation(numbers){
  const mean = numbers.reduce((a, b) => a + b, 0) / numbers.length;
  return numbers.reduce((a, x) => a + Math.abs(x - mean), 0) / numbers.length;
}""",
}
#: How many times each task's model must see its test output before it answers right.
FEEDBACK_NEEDED = {
    "HumanEval_0_has_close_elements": 1,
    "HumanEval_3_below_zero": 0,
    "HumanEval_4_mean_absolute_deviation": 2,
}
#: A wrong answer's first lines of output: a timing and a sandbox folder, which a follow-up
#: must not show, then 60 numbered lines, of which a follow-up shows the first 49.
NOISE_HEAD = "checked in 0.25s in /tmp/tmpabcd1234/program.js"


def _wrong(task_id: str) -> str:
    entry = task_id.split("_", 2)[2]
    return (
        f"function {entry}(...args){{\n"
        f'  console.error("{NOISE_HEAD}");\n'
        '  for (let i = 0; i < 60; i++) console.error("noise " + i);\n'
        "  return null;\n}"
    )


class TeachableServer(OpenAIFake):
    """Answers each task's conversation: wrong until it holds FEEDBACK_NEEDED[task] test
    reports, right after; refuses (401) the tasks in `refuse` once they have feedback."""

    def __init__(self, prompts: dict[str, str]) -> None:
        super().__init__()
        self.task_of = {text: task_id for task_id, text in prompts.items()}
        self.refuse: set[str] = set()

    def conversation(self, request: Recorded) -> tuple[str, list[dict[str, Any]]]:
        messages: list[dict[str, Any]] = request.body["messages"]
        return self.task_of[messages[0]["content"]], messages

    def answer(self, request: Recorded) -> Reply:
        reply = super().answer(request)
        task_id, messages = self.conversation(request)
        reports = sum(1 for message in messages if message["role"] == "assistant")
        if reports and task_id in self.refuse:
            return Reply(401, {"error": {"message": "key revoked", "code": "invalid_api_key"}})
        code = RIGHT[task_id] if reports >= FEEDBACK_NEEDED[task_id] else _wrong(task_id)
        for choice in reply.body["choices"]:
            choice["message"]["content"] = f"Here it is:\n```javascript\n{code}\n```\n"
        return reply

    def follow_ups(self, task_id: str) -> list[list[dict[str, Any]]]:
        found = [self.conversation(request) for request in self.requests]
        return [messages for task, messages in found if task == task_id and len(messages) > 1]


@pytest.fixture
def server(data_dir: Path, tmp_path: Path) -> Iterator[TeachableServer]:
    data = DataSettings(data_dir=data_dir, cache_dir=tmp_path / "cache", download=False)
    loaded = get_benchmark(BENCHMARK).load(None, "full", data=data)
    prompts = {
        task.task_id: build_prompt(
            task, "complete", chat=True, prefill=False, chat_template=False
        ).text
        for task in loaded.tasks
        if task.task_id in RIGHT
    }
    fake = TeachableServer(prompts)
    yield fake
    fake.close()


def _args(server: TeachableServer, out: Path, *extra: str) -> list[str]:
    return run_args(server.url, BENCHMARK, RIGHT, out, *extra)


def _invoke(args: list[str], data_dir: Path, tmp_path: Path) -> tuple[int, str]:
    return invoke(args, data_dir, tmp_path / "cache")


STEM = "fake-chat--main--multipl-e-js-complete--openai-0-1"


def _scores(out: Path, suffix: str = "") -> dict[str, Any]:
    path = out / f"{STEM}{suffix}-sanitized_calibrated_pass_at_k.json"
    scores: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return scores


@pytest.mark.bwrap
def test_failing_samples_get_their_test_output_back_until_they_pass(
    server: TeachableServer, data_dir: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    code, text = _invoke(
        _args(server, out, "--tries", "3", "--feedback-lines", "50"), data_dir, tmp_path
    )
    assert code == 0, text
    # try 1: three requests; try 2: the two failing tasks; try 3: the one still failing
    assert len(server.requests) == 3 + 2 + 1
    assert _scores(out)["pass_rate_1"] == pytest.approx(1 / 3)
    assert _scores(out, "_try2")["pass_rate_2"] == pytest.approx(2 / 3)
    final = _scores(out, "_try3")
    assert (final["pass_rate_1"], final["pass_rate_2"], final["pass_rate_3"]) == (
        pytest.approx(1 / 3),
        pytest.approx(2 / 3),
        1.0,
    )
    assert final["pass@1"] == 1.0
    lines = " ".join(text.split())
    assert "pass_rate_1: 0.333" in lines and "pass_rate_3: 1.000" in lines, text

    # the follow-up: the first prompt, the wrong answer, then the test output in Aider's words
    (second,) = server.follow_ups("HumanEval_0_has_close_elements")
    first_prompt, answer, feedback = second
    assert first_prompt["role"] == "user" and answer["role"] == "assistant"
    assert "console.error" in answer["content"]
    assert feedback["role"] == "user"
    message = feedback["content"]
    assert message.endswith(TEST_FAILURES_NO_FILES)
    output = message[: -len(TEST_FAILURES_NO_FILES)].split("\n")
    assert len(output) == 50  # --feedback-lines 50: the first 50 lines
    assert output[0] == "checked  in program.js"  # no timing, no sandbox folder
    assert output[1:] == [f"noise {i}" for i in range(49)]

    # try 3 continues try 2's conversation: two answers, two test reports
    later = server.follow_ups("HumanEval_4_mean_absolute_deviation")
    assert [len(messages) for messages in later] == [3, 5]
    assert later[1][:3] == later[0]
    assert later[1][4]["content"].endswith(TEST_FAILURES_NO_FILES)

    # the passing task was carried, not asked again, and its sample says which try made it
    try3 = out / f"{STEM}_try3.jsonl"
    rows = {row["task_id"]: row for row in map(json.loads, try3.read_text().splitlines())}
    assert {task: row["try"] for task, row in rows.items()} == {
        "HumanEval_0_has_close_elements": 2,
        "HumanEval_3_below_zero": 1,
        "HumanEval_4_mean_absolute_deviation": 3,
    }
    # and its verdict came from the journal: not run again (the same timings, to the digit)
    verdicts = [
        json.loads((out / f"{STEM}{suffix}-sanitized_calibrated_eval_results.json").read_text())
        for suffix in ("", "_try3")
    ]
    carried = [entries["eval"]["HumanEval_3_below_zero"][0] for entries in verdicts]
    assert carried[0]["status"] == carried[1]["status"] == "pass"
    assert carried[0]["wall_s"] == carried[1]["wall_s"]

    # inspect and compare read the pass rates after each try from the last try's files
    last, second = (
        str(out / f"{STEM}{suffix}-sanitized_calibrated_eval_results.json")
        for suffix in ("_try3", "_try2")
    )
    code, shown = _invoke(["inspect", last, "--format", "json"], data_dir, tmp_path)
    assert json.loads(shown)["summary"]["pass_rates_by_try"] == {
        "pass_rate_1": pytest.approx(1 / 3),
        "pass_rate_2": pytest.approx(2 / 3),
        "pass_rate_3": 1.0,
    }
    code, shown = _invoke(["compare", second, last, "--format", "json"], data_dir, tmp_path)
    note = json.loads(shown)["pass_rates_by_try"]["note"]
    assert note.startswith("pass rates per try not compared") and note.endswith(".json) 3)")


@pytest.mark.bwrap
def test_an_interrupted_try_resumes_without_asking_again(
    server: TeachableServer, data_dir: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    server.refuse = {"HumanEval_4_mean_absolute_deviation"}
    with pytest.raises(PermanentProviderError):
        _invoke(_args(server, out, "--tries", "2"), data_dir, tmp_path)
    # try 1's three, the follow-up of HumanEval_0 (asked first, one at a time), and the refused
    assert len(server.requests) == 5
    try2 = out / f"{STEM}_try2.jsonl"
    assert {json.loads(line)["task_id"] for line in try2.read_text().splitlines()} == {
        "HumanEval_0_has_close_elements",
        "HumanEval_3_below_zero",  # passed at try 1: carried
    }

    server.refuse = set()
    code, text = _invoke(_args(server, out, "--tries", "2"), data_dir, tmp_path)
    assert code == 0, text
    assert len(server.requests) == 6  # only the follow-up that was refused
    assert len(server.requests[-1].body["messages"]) == 3
    assert server.task_of[server.requests[-1].body["messages"][0]["content"]] == (
        "HumanEval_4_mean_absolute_deviation"
    )
    scores = _scores(out, "_try2")
    assert scores["pass_rate_1"] < scores["pass_rate_2"] == pytest.approx(2 / 3)


def test_a_completion_model_is_refused_before_any_request(
    server: TeachableServer, data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = _args(server, tmp_path / "out", "--tries", "2", "--direct-completion")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PASSBENCH_DATA_DIR", str(data_dir))
        patch.setenv("PASSBENCH_CACHE_DIR", str(tmp_path / "cache"))
        with pytest.raises(SystemExit) as exit_info:
            main(args)
    assert exit_info.value.code == 2
    error = capsys.readouterr().err.strip()
    assert error.startswith("error:") and "--tries above 1 needs a chat model" in error
    assert len(error.splitlines()) == 1
    assert server.requests == []
