"""What a sample row keeps of its conversation, and the next request rebuilt from it alone (a
resumed run has nothing else): the first prompt, the row's answers, the messages after them."""

from __future__ import annotations

import pytest

from passbench.apps.samplerows import continued, exchanges, follow_up_request, follow_ups
from passbench.core.errors import SampleFileError
from passbench.core.records import Exchange, Prompt, Task

TASK = Task("humaneval", "HumanEval/0", "f", {"instruct": "write f"}, "", "", "")
FIRST = Prompt(
    "HumanEval/0",
    "instruct",
    "write f",
    ({"role": "system", "content": "be brief"}, {"role": "user", "content": "write f"}),
)


def _said(role: str, content: str) -> dict[str, str]:
    return {"role": role, "content": content}


def test_a_follow_ups_row_is_rebuilt_into_the_next_request() -> None:
    row = {"task_id": "HumanEval/0", "sample_index": 0, "raw_solution": "third"}
    first_try = {**row, "raw_solution": "first"}
    second = {**row, "raw_solution": "second", **continued(first_try, FIRST, "it failed")}
    assert (second["earlier_answers"], second["follow_ups"]) == (["first"], ["it failed"])
    third = {**row, **continued(second, FIRST, "again")}
    assert (third["earlier_answers"], third["follow_ups"]) == (
        ["first", "second"],
        ["it failed", "again"],
    )
    assert exchanges(third, FIRST, "still no") == [
        Exchange("first", "it failed"),
        Exchange("second", "again"),
        Exchange("third", "still no"),
    ]
    asked = follow_up_request(third, FIRST, TASK, "instruct", "still no")
    assert asked.messages == (
        *FIRST.messages,
        _said("assistant", "first"),
        _said("user", "it failed"),
        _said("assistant", "second"),
        _said("user", "again"),
        _said("assistant", "third"),
        _said("user", "still no"),
    )


def test_a_row_written_before_follow_ups_were_recorded_reads_them_from_its_messages() -> None:
    """Earlier rows appended every follow-up at the end of `messages`: the user turns after
    the first prompt's are the messages that followed the earlier answers."""
    old = {
        "task_id": "HumanEval/0",
        "sample_index": 0,
        "raw_solution": "second",
        "earlier_answers": ["first"],
        "messages": [*FIRST.messages, _said("assistant", "first"), _said("user", "it failed")],
    }
    assert follow_ups(old, FIRST) == ["it failed"]
    assert exchanges(old, FIRST, "again") == [
        Exchange("first", "it failed"),
        Exchange("second", "again"),
    ]


def test_a_row_whose_answers_and_messages_disagree_is_refused() -> None:
    broken = {
        "task_id": "HumanEval/0",
        "sample_index": 3,
        "raw_solution": "second",
        "earlier_answers": ["first"],
        "follow_ups": [],
    }
    with pytest.raises(SampleFileError, match="sample 3 of HumanEval/0 has 1 earlier answers"):
        exchanges(broken, FIRST, "again")
