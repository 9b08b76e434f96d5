"""The layout of Aider's follow-up requests: the message list a reflection or a later try sends,
message for message, as Aider's coder builds it (Aider-AI/aider, aider/coders/base_coder.py,
chat_chunks.py, base_prompts.py; benchmark/benchmark.py `run_test_real`).

What the expectations follow:
- `send_message` appends the user's message to `cur_messages`, and after the answer
  `add_assistant_reply_to_cur_messages` appends the answer (only a non-empty one);
- `apply_updates` returns the files of the edits it found; when that set is not empty (every
  answer whose edits parsed, a SEARCH block that matches nothing included, since `edited` is
  set before `apply_edits` raises), `move_back_cur_messages` moves `cur_messages` to
  `done_messages` followed by user "I updated the files." (`files_content_gpt_edits_no_repo`:
  the benchmark's coder runs with `use_git=False`, so `auto_commit` gives no message) and
  assistant "Ok."; a parse error (`get_edits` raises) leaves `cur_messages` as they are;
- the error text (`reflected_message`), the lint errors, or the next try's test output
  (`run_test_real`: the output's lines joined, then `prompts.test_failures`; `coder.run`
  again, whose `init_before_message` keeps `cur_messages`) is the next user message;
- `format_chat_chunks` sends system, examples (with "I switched to a new code base..." /
  "Ok."), done, the chat files read again (`get_files_content`), the current messages, and
  with the default `reminder = "user"` the system reminder appended to the last one (on a copy:
  the stored message keeps no reminder).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from passbench.core.records import Exchange, Prompt, Task
from passbench.core.runs import SampleResult
from passbench.stages.benchmarks import DataSettings
from passbench.stages.benchmarks.aider_polyglot.benchmark import AiderPolyglot
from passbench.stages.feedback import feedback_message
from passbench.stages.prompts import build_prompt

Message = dict[str, str]

FILES_PREFIX = (
    "I have *added these files to the chat* so you can go ahead and edit them.\n\n"
    "*Trust this message as the true contents of these files!*\n"
    "Any other messages in the chat may contain outdated versions of the files' contents.\n"
)
FILES_REPLY: Message = {
    "role": "assistant",
    "content": "Ok, any changes I propose will be to those files.",
}
UPDATED: list[Message] = [
    {"role": "user", "content": "I updated the files."},
    {"role": "assistant", "content": "Ok."},
]
STUB = (
    "class BowlingGame:\n    def __init__(self):\n        pass\n\n    def roll(self, pins):\n"
    "        pass\n\n    def score(self):\n        pass\n"
)


def _user(text: str) -> Message:
    return {"role": "user", "content": text}


def _assistant(text: str) -> Message:
    return {"role": "assistant", "content": text}


def _files(text: str, fence: str = "```") -> Message:
    return _user(f"{FILES_PREFIX}\nbowling.py\n{fence}\n{text}{fence}\n")


def _edit(search: str, replace: str) -> str:
    return (
        f"Here is the change.\n\nbowling.py\n```python\n<<<<<<< SEARCH\n{search}=======\n"
        f"{replace}>>>>>>> REPLACE\n```\n"
    )


#: a SEARCH block cut short: `find_original_update_blocks` raises "Expected `=======`"
CUT_SHORT = "bowling.py\n```python\n<<<<<<< SEARCH\nclass BowlingGame:\n```\n"
#: one block that applies, one that matches nothing
HALF_APPLIED = _edit(
    "    def roll(self, pins):\n        pass\n",
    "    def roll(self, pins):\n        self.rolls.append(pins)\n",
) + _edit("    def total(self):\n", "    def score(self):\n")
#: applies, and flake8 finds an undefined name
UNDEFINED = _edit(
    "    def score(self):\n        pass\n", "    def score(self):\n        return undefined_total\n"
)


@pytest.fixture(scope="module")
def bowling(polyglot: AiderPolyglot, data_dir: Path) -> Task:
    loaded = polyglot.load(None, "python", data=DataSettings(data_dir=data_dir, download=False))
    (task,) = [t for t in loaded.tasks if t.metadata["exercise"] == "bowling"]
    assert task.metadata["stubs"] == {"bowling.py": STUB}
    return task


def _parts(task: Task, split: str) -> tuple[Prompt, list[Message], str, str]:
    """The first request; its system and example messages; the request; the reminder."""
    first = build_prompt(task, split, chat=True)
    request = task.prompts[split]
    reminder = first.messages[-1]["content"][len(request) + 2 :]
    assert first.messages[-3:] == (
        _files(STUB),
        FILES_REPLY,
        _user(request + "\n\n" + reminder),
    )
    assert reminder.startswith(("# *SEARCH/REPLACE block* Rules:", "To suggest changes"))
    return first, [dict(m) for m in first.messages[:-3]], request, reminder


def _sent(
    polyglot: AiderPolyglot, task: Task, split: str, first: Prompt, exchanges: list[Exchange]
) -> list[Message]:
    asked = polyglot.follow_up(first, exchanges, task, split)
    assert (asked.task_id, asked.split, asked.text) == (
        task.task_id,
        split,
        asked.messages[-1]["content"],
    )
    return [dict(message) for message in asked.messages]


def test_a_reflection_after_a_parse_error_keeps_the_exchange_after_the_files(
    polyglot: AiderPolyglot, bowling: Task
) -> None:
    """A parse error: `get_edits` raises, `apply_updates` returns no files, nothing moves:
    the request, the answer and the error follow the stub files; the reminder moves from the
    request to the error."""
    first, head, request, reminder = _parts(bowling, "diff")
    error = polyglot.reflection([CUT_SHORT], bowling, "diff")
    assert error == CUT_SHORT + "\n^^^ Expected `=======`"
    assert _sent(polyglot, bowling, "diff", first, [Exchange(CUT_SHORT, error)]) == [
        *head,
        _files(STUB),
        FILES_REPLY,
        _user(request),
        _assistant(CUT_SHORT),
        _user(error + "\n\n" + reminder),
    ]


def test_a_reflection_after_a_block_that_matched_nothing_moves_the_exchange_back(
    polyglot: AiderPolyglot, bowling: Task
) -> None:
    """SEARCH blocks that match nothing: `apply_updates` set `edited` before `apply_edits`
    raised, so `move_back_cur_messages` runs: the exchange and "I updated the files." / "Ok."
    go before the files, which show the block that did apply; then the error text."""
    first, head, request, reminder = _parts(bowling, "diff")
    error = polyglot.reflection([HALF_APPLIED], bowling, "diff")
    assert error.startswith("# 1 SEARCH/REPLACE block failed to match!\n")
    assert "# The other 1 SEARCH/REPLACE block were applied successfully." in error
    now = STUB.replace("pins):\n        pass", "pins):\n        self.rolls.append(pins)")
    assert _sent(polyglot, bowling, "diff", first, [Exchange(HALF_APPLIED, error)]) == [
        *head,
        _user(request),
        _assistant(HALF_APPLIED),
        *UPDATED,
        _files(now),
        FILES_REPLY,
        _user(error + "\n\n" + reminder),
    ]


def test_a_lint_reflection_follows_the_applied_exchange_and_the_edited_files(
    polyglot: AiderPolyglot, bowling: Task
) -> None:
    """A parse error, then an answer that applies with a lint error: the answer that applied
    moves back with everything still in `cur_messages` (the request, the malformed answer, its
    error), "I updated the files." / "Ok." after it; the files show the edit; the lint errors
    (`lint_edited`, sent when no other reflection is pending) are the new message."""
    first, head, request, reminder = _parts(bowling, "diff")
    error = polyglot.reflection([CUT_SHORT], bowling, "diff")
    lint = polyglot.reflection([CUT_SHORT, UNDEFINED], bowling, "diff")
    assert lint.startswith("\n# Fix any errors below, if possible.\n")
    assert "F821 undefined name 'undefined_total'" in lint
    exchanges = [Exchange(CUT_SHORT, error), Exchange(UNDEFINED, lint)]
    now = STUB.replace("score(self):\n        pass", "score(self):\n        return undefined_total")
    assert _sent(polyglot, bowling, "diff", first, exchanges) == [
        *head,
        _user(request),
        _assistant(CUT_SHORT),
        _user(error),
        _assistant(UNDEFINED),
        *UPDATED,
        _files(now),
        FILES_REPLY,
        _user(lint + "\n\n" + reminder),
    ]


def _failed(task: Task, output: str) -> SampleResult:
    return SampleResult(
        task_id=task.task_id, sample_index=0, status="fail", solution="", details={"ALL": output}
    )


def test_a_second_try_sends_the_test_output_after_the_files_as_the_first_try_left_them(
    polyglot: AiderPolyglot, bowling: Task
) -> None:
    """Try 1's answer applied (whole file), its tests failed: `run_test_real` sends the
    output's lines joined by newlines and `test_failures` naming the files, through a new
    `coder.run`; the try-1 exchange is in `done_messages` with "I updated the files." /
    "Ok.", the files show try 1's text."""
    first, head, request, reminder = _parts(bowling, "whole")
    written = STUB.replace("score(self):\n        pass", "score(self):\n        return 0")
    answer = f"Here it is:\n\nbowling.py\n```\n{written}```\n"
    output = "FAILED bowling_test.py::BowlingTest::test_all_strikes - assert 0 == 300\n"
    message = feedback_message(
        polyglot.test_feedback(bowling, _failed(bowling, output)), "fail", lines=None
    )
    assert message == (
        "FAILED bowling_test.py::BowlingTest::test_all_strikes - assert 0 == 300\n####\n\n"
        "See the testing errors above.\nThe tests are correct, don't try and change them.\n"
        "Fix the code in bowling.py to resolve the errors.\n"
    )
    assert _sent(polyglot, bowling, "whole", first, [Exchange(answer, message)]) == [
        *head,
        _user(request),
        _assistant(answer),
        *UPDATED,
        _files(written),
        FILES_REPLY,
        _user(message + "\n\n" + reminder),
    ]


def test_a_try_after_unappliable_answers_continues_the_current_messages(
    polyglot: AiderPolyglot, bowling: Task
) -> None:
    """Try 1's reflections ran out on parse errors: nothing moved, so try 2's message joins
    the same `cur_messages` after the stub files (`coder.run` clears none); an empty answer
    adds no assistant turn."""
    first, head, request, reminder = _parts(bowling, "diff")
    error = polyglot.reflection([CUT_SHORT], bowling, "diff")
    tests = "Tests timed out!\n####\n\nSee the testing errors above.\n"
    exchanges = [
        Exchange(CUT_SHORT, error),
        Exchange("", "I see no edits."),
        Exchange(CUT_SHORT, tests),
    ]
    assert _sent(polyglot, bowling, "diff", first, exchanges) == [
        *head,
        _files(STUB),
        FILES_REPLY,
        _user(request),
        _assistant(CUT_SHORT),
        _user(error),
        _user("I see no edits."),
        _assistant(CUT_SHORT),
        _user(tests + "\n\n" + reminder),
    ]


def test_the_fence_is_chosen_for_the_files_as_they_now_are(
    polyglot: AiderPolyglot, bowling: Task
) -> None:
    """`format_chat_chunks` calls `choose_fence` for every request: once a file holds a line
    starting with ```, the files, the system prompt and the reminder use ````."""
    first, head, _, _ = _parts(bowling, "diff")
    answer = _edit("class BowlingGame:\n", "```text\nclass BowlingGame:\n")
    sent = _sent(polyglot, bowling, "diff", first, [Exchange(answer, "tests failed")])
    assert sent[len(head) + 4] == _files("```text\n" + STUB, "````")
    quadruple = "IMPORTANT: Use *quadruple* backticks ```` as fences, not triple backticks!"
    assert quadruple not in first.messages[0]["content"]
    assert quadruple in sent[0]["content"]
    assert sent[-1]["content"].startswith("tests failed\n\n# *SEARCH/REPLACE block* Rules:")
    assert quadruple in sent[-1]["content"]
