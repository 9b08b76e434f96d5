"""Aider's reflections end to end: `passbench run` on Aider's polyglot benchmark (diff edit
format) through the real `openai` client against a loopback server whose model first answers
one exercise with a SEARCH/REPLACE edit that matches nothing, then, once it has Aider's error
text, with a correct edit. The case passes in its one try and counts as not well formed; the
other exercise is answered well at once. Real exercises, real sandbox."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.apps.loopback_run import invoke, run_args
from tests.stages.providers.servers.base import Recorded, Reply
from tests.stages.providers.servers.openai_fake import OpenAIFake

from passbench.core.errors import PermanentProviderError
from passbench.core.records import Task
from passbench.stages.benchmarks import DataSettings, get_benchmark

EXERCISES = ("bowling", "zipper")  # Python's; bowling gets the malformed edit first
#: Aider's error text (editblock_coder.py `apply_edits`), word for word
NO_MATCH = (
    "# 1 SEARCH/REPLACE block failed to match!\n\n"
    "## SearchReplaceNoExactMatch: This SEARCH block failed to exactly match lines in "
    "bowling.py\n<<<<<<< SEARCH\ndef roll_a_strike_somewhere(pins):\n    return pins\n"
    "=======\ndef roll_a_strike_somewhere(pins):\n    return 10\n>>>>>>> REPLACE\n\n"
)
MUST_MATCH = (
    "The SEARCH section must exactly match an existing block of lines including all white "
    "space, comments, indentation, docstrings, etc\n"
)
#: what Aider's coder adds once an answer's edits are applied (`move_back_cur_messages`)
UPDATED = [
    {"role": "user", "content": "I updated the files."},
    {"role": "assistant", "content": "Ok."},
]
FILES_START = "I have *added these files to the chat*"


def _edit(name: str, search: str, replace: str) -> str:
    return (
        f"Here is the change.\n\n{name}\n```python\n<<<<<<< SEARCH\n{search}=======\n"
        f"{replace}>>>>>>> REPLACE\n```\n"
    )


def _right_edit(task: Task) -> str:
    """The whole stub replaced by the reference solution, as one SEARCH/REPLACE block."""
    (name, path), *_ = task.metadata["shown"].items()
    stub = task.metadata["stubs"][path]
    reference = next(iter(json.loads(task.canonical_solution)["files"].values()))
    return _edit(name, stub if stub.endswith("\n") else stub + "\n", reference)


class EditingModel(OpenAIFake):
    """Answers each exercise's conversation: bowling's first answer matches nothing; every
    other answer is the right edit. `refuse`: exercises whose reflections get a 401."""

    def __init__(self, tasks: dict[str, Task]) -> None:
        super().__init__()
        self.tasks = tasks
        self.refuse: set[str] = set()

    def exercise(self, request: Recorded) -> str:
        text = "\n".join(str(m["content"]) for m in request.body["messages"])
        (found,) = [name for name in EXERCISES if f"{name}.py" in text]
        return found

    def answer(self, request: Recorded) -> Reply:
        reply = super().answer(request)
        exercise = self.exercise(request)
        messages = request.body["messages"]
        reflected = messages[-1]["content"].startswith("# 1 SEARCH/REPLACE")
        if reflected and exercise in self.refuse:
            return Reply(401, {"error": {"message": "key revoked", "code": "invalid_api_key"}})
        if exercise == "bowling" and not reflected:
            code = _edit(
                "bowling.py",
                "def roll_a_strike_somewhere(pins):\n    return pins\n",
                "def roll_a_strike_somewhere(pins):\n    return 10\n",
            )
        else:
            code = _right_edit(self.tasks[exercise])
        for choice in reply.body["choices"]:
            choice["message"]["content"] = code
        return reply

    def requests_of(self, exercise: str) -> list[list[dict[str, Any]]]:
        return [r.body["messages"] for r in self.requests if self.exercise(r) == exercise]


@pytest.fixture
def server(data_dir: Path, tmp_path: Path) -> Iterator[EditingModel]:
    data = DataSettings(data_dir=data_dir, cache_dir=tmp_path / "cache", download=False)
    loaded = get_benchmark("aider-polyglot").load(None, "python", data=data)
    tasks = {
        str(t.metadata["exercise"]): t for t in loaded.tasks if t.metadata["exercise"] in EXERCISES
    }
    fake = EditingModel(tasks)
    yield fake
    fake.close()


def _run(server: EditingModel, out: Path, data_dir: Path, tmp_path: Path) -> str:
    ids = [task.task_id for task in server.tasks.values()]
    extra = ("--subset", "python", "--split", "diff")
    args = run_args(server.url, "aider-polyglot", ids, out, *extra)
    code, output = invoke(args, data_dir, tmp_path / "cache")
    assert code == 0, output
    return output


def _files(out: Path, suffix: str) -> Path:
    (path,) = out.glob(f"*{suffix}")
    return path


@pytest.mark.bwrap
def test_a_malformed_edit_is_sent_back_with_aiders_error_and_counts_as_not_well_formed(
    server: EditingModel, data_dir: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    _run(server, out, data_dir, tmp_path)
    # zipper: one request; bowling: the malformed answer, then its reflection
    assert len(server.requests_of("zipper")) == 1
    first, second = server.requests_of("bowling")
    # Aider's layout: the exchange (its SEARCH block was parsed, so it counts as edits) moves
    # before the files with "I updated the files." / "Ok."; the reminder goes on the newest
    head = first[:-3]  # system, examples, "I switched to a new code base" / "Ok."
    assert second[: len(head)] == head and len(second) == len(first) + 4
    asked, answer, *updated = second[len(head) : len(head) + 4]
    request = first[-1]["content"]
    assert asked["role"] == "user" and request.startswith(asked["content"] + "\n\n")
    reminder = request[len(asked["content"]) :]
    assert answer["role"] == "assistant" and "roll_a_strike_somewhere" in answer["content"]
    assert updated == UPDATED
    assert second[-3:-1] == first[-3:-1]  # the files again: no block applied
    reflection = second[-1]
    assert reflection["role"] == "user"
    assert reflection["content"].startswith(NO_MATCH)
    assert reflection["content"].endswith(MUST_MATCH + reminder)

    scores = json.loads(_files(out, "_pass_at_k.json").read_text(encoding="utf-8"))
    assert scores["pass@1"] == 1.0  # both pass in their one try
    assert scores["percent_cases_well_formed"] == 0.5  # bowling had a malformed answer
    assert scores["num_malformed_responses"] == 1

    rows = [json.loads(line) for line in _files(out, "-sanitized_calibrated.jsonl").open()]
    by_exercise = {row["task_id"].rsplit("/", 1)[1]: row for row in rows}
    assert by_exercise["bowling"]["reflections"] == 1
    # what the next request is rebuilt from: the answers and the messages after them
    assert by_exercise["bowling"]["follow_ups"] == [reflection["content"][: -len(reminder)]]
    assert len(by_exercise["bowling"]["earlier_answers"]) == 1
    assert "reflections" not in by_exercise["zipper"]
    solution = json.loads(by_exercise["bowling"]["solution"])
    assert solution["malformed"] == "" and solution["malformed_responses"] == 1
    assert not list(out.glob("*.reflecting.jsonl"))  # every held sample was written


@pytest.mark.bwrap
def test_a_run_stopped_during_a_reflection_resumes_without_asking_again(
    server: EditingModel, data_dir: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    server.refuse = {"bowling"}
    with pytest.raises(PermanentProviderError):
        _run(server, out, data_dir, tmp_path)
    assert len(server.requests_of("bowling")) == 2  # the malformed answer, the refused one
    refused = server.requests_of("bowling")[1]
    (held,) = out.glob("*.reflecting.jsonl")
    assert [json.loads(line)["task_id"].endswith("/bowling") for line in held.open()] == [True]

    server.refuse = set()
    asked = len(server.requests)
    _run(server, out, data_dir, tmp_path)
    # only the reflection that was refused: not the first answer, not zipper again
    assert len(server.requests) == asked + 1
    # rebuilt from the held row alone, the same request as the one refused
    assert server.requests[-1].body["messages"] == refused
    assert refused[-1]["content"].startswith(NO_MATCH)
    scores = json.loads(_files(out, "_pass_at_k.json").read_text(encoding="utf-8"))
    assert scores["pass@1"] == 1.0 and scores["num_malformed_responses"] == 1


class TwoTryModel(EditingModel):
    """zipper: try 1 marks the stub (an edit that applies, tests still fail); once it has the
    test output, an edit whose SEARCH is the marked stub: it applies only over try 1's edit."""

    def answer(self, request: Recorded) -> Reply:
        reply = OpenAIFake.answer(self, request)
        task = self.tasks["zipper"]
        (name, path), *_ = task.metadata["shown"].items()
        stub = task.metadata["stubs"][path]
        reference = next(iter(json.loads(task.canonical_solution)["files"].values()))
        tested = "See the testing errors above." in request.body["messages"][-1]["content"]
        if tested:
            code = _edit(name, "# marked by try 1\n" + stub, reference)
        else:
            first = stub.splitlines(keepends=True)[0]
            code = _edit(name, first, "# marked by try 1\n" + first)
        for choice in reply.body["choices"]:
            choice["message"]["content"] = code
        return reply


@pytest.mark.bwrap
def test_a_later_tries_edits_apply_over_the_earlier_tries(data_dir: Path, tmp_path: Path) -> None:
    data = DataSettings(data_dir=data_dir, cache_dir=tmp_path / "cache", download=False)
    loaded = get_benchmark("aider-polyglot").load(None, "python", data=data)
    (zipper,) = [t for t in loaded.tasks if t.metadata["exercise"] == "zipper"]
    model = TwoTryModel({"zipper": zipper})
    try:
        extra = ("--subset", "python", "--split", "diff", "--tries", "2")
        args = run_args(model.url, "aider-polyglot", [zipper.task_id], tmp_path / "out", *extra)
        code, output = invoke(args, data_dir, tmp_path / "c")
        assert code == 0, output
    finally:
        model.close()
    assert len(model.requests) == 2  # no reflection: both edits applied
    # try 2 as Aider sends it: try 1's exchange before the files, which show try 1's edit
    first, second = (request.body["messages"] for request in model.requests)
    head = first[:-3]
    assert second[: len(head)] == head
    assert second[len(head) + 1]["content"].count("# marked by try 1") == 1
    assert second[len(head) + 2 : len(head) + 4] == UPDATED
    files = second[len(head) + 4]["content"]
    assert files.startswith(FILES_START) and "# marked by try 1\n" in files
    tested = second[-1]["content"]
    assert "Fix the code in zipper.py to resolve the errors.\n\n\n# *SEARCH/REPLACE" in tested
    scores = json.loads(
        _files(tmp_path / "out", "_try2-sanitized_calibrated_pass_at_k.json").read_text()
    )
    assert (scores["pass_rate_1"], scores["pass_rate_2"]) == (0.0, 1.0)
    assert scores["percent_cases_well_formed"] == 1.0
    (row,) = [json.loads(line) for line in _files(tmp_path / "out", "_try2.jsonl").open()]
    assert len(row["earlier_answers"]) == 1 and "# marked by try 1" in row["earlier_answers"][0]


#: the start of Aider's lint reflection for a Python file (aider/linter.py, base_coder.py)
LINT_START = (
    "\n# Fix any errors below, if possible.\n\n## Running: /usr/bin/python3 -m flake8 "
    "--select=E9,F821,F823,F831,F406,F407,F701,F702,F704,F706 --show-source --isolated "
)


class LintingModel(EditingModel):
    """Each first answer is the right edit with a call of an undefined name after it (an edit
    that applies, and that flake8 finds fatal). bowling, once it has the lint errors, removes
    the call; zipper never does."""

    def answer(self, request: Recorded) -> Reply:
        reply = OpenAIFake.answer(self, request)
        exercise = self.exercise(request)
        linted = request.body["messages"][-1]["content"].startswith(LINT_START)
        if exercise == "bowling" and linted:
            code = _edit(f"{exercise}.py", "undefined_helper()\n", "")
        elif linted:
            code = _edit(f"{exercise}.py", "undefined_helper()\n", "undefined_helper()\n")
        else:
            code = _right_edit(self.tasks[exercise]).replace(
                ">>>>>>> REPLACE", "undefined_helper()\n>>>>>>> REPLACE"
            )
        for choice in reply.body["choices"]:
            choice["message"]["content"] = code
        return reply


@pytest.mark.bwrap
def test_lint_errors_of_an_applied_edit_are_sent_back_within_the_same_reflections(
    data_dir: Path, tmp_path: Path
) -> None:
    data = DataSettings(data_dir=data_dir, cache_dir=tmp_path / "cache", download=False)
    loaded = get_benchmark("aider-polyglot").load(None, "python", data=data)
    model = LintingModel(
        {
            str(t.metadata["exercise"]): t
            for t in loaded.tasks
            if t.metadata["exercise"] in EXERCISES
        }
    )
    out = tmp_path / "out"
    try:
        _run(model, out, data_dir, tmp_path)
    finally:
        model.close()
    first, second = model.requests_of("bowling")
    # the applied answer moves before the files, which now show its edit
    head = first[:-3]
    assert second[: len(head)] == head
    assert second[len(head) + 2 : len(head) + 4] == UPDATED
    assert second[-3]["content"].startswith(FILES_START)
    assert "undefined_helper()" in second[-3]["content"]
    lint = second[-1]["content"]
    reference = next(iter(json.loads(model.tasks["bowling"].canonical_solution)["files"].values()))
    line = len(reference.splitlines()) + 1  # the call after the reference's last line
    assert lint.startswith(
        f"{LINT_START}bowling.py\n\nbowling.py:{line}:1: F821 undefined name 'undefined_helper'\n"
    )
    assert f"{line:3}█undefined_helper()\n" in lint
    # zipper: its first answer and three lint reflections (Aider's max_reflections), then it stands
    asked = model.requests_of("zipper")
    assert len(asked) == 4 and all(r[-1]["content"].startswith(LINT_START) for r in asked[1:])
    assert [r.count(UPDATED[0]) for r in asked] == [0, 1, 2, 3]  # each applied answer moved

    scores = json.loads(_files(out, "_pass_at_k.json").read_text(encoding="utf-8"))
    assert scores["pass@1"] == 0.5  # zipper's undefined name fails its tests
    assert scores["percent_cases_well_formed"] == 1.0  # lint errors are not malformed edits
    assert scores["num_malformed_responses"] == 0 and scores["syntax_errors"] == 0
    rows = [json.loads(line) for line in _files(out, "-sanitized_calibrated.jsonl").open()]
    by_exercise = {row["task_id"].rsplit("/", 1)[1]: row for row in rows}
    assert (by_exercise["bowling"]["reflections"], by_exercise["zipper"]["reflections"]) == (1, 3)
    assert (
        "undefined_helper"
        not in json.loads(by_exercise["bowling"]["solution"])["files"]["bowling.py"]
    )
    assert not list(out.glob("*.reflecting.jsonl"))
