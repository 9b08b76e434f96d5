"""The follow-up message of a multi-turn run, in Aider's protocol (benchmark/benchmark.py's
`run_test_real` and `cleanup_test_output`, benchmark/prompts.py's `test_failures`)."""

from __future__ import annotations

from passbench.core.records import Exchange, Prompt, Task
from passbench.stages.benchmarks import BenchmarkBase, TestFeedback
from passbench.stages.feedback import (
    feedback_message,
    first_lines,
    normalise_test_output,
)

#: Aider's text after the test output, as its benchmark sends it.
AIDER_CLOSING = (
    "\n####\n\nSee the testing errors above.\nThe tests are correct, don't try and change "
    "them.\nFix the code in bowling.py to resolve the errors.\n"
)


def test_the_message_is_the_output_then_aiders_request() -> None:
    feedback = TestFeedback("FAILED test_score - assert 3 == 4\n", files=("bowling.py",))
    assert feedback_message(feedback, "fail", lines=50) == (
        "FAILED test_score - assert 3 == 4" + AIDER_CLOSING
    )


def test_files_are_named_space_separated_and_no_files_leaves_the_phrase_out() -> None:
    two = feedback_message(TestFeedback("x", files=("a.go", "b.go")), "fail", lines=None)
    assert "Fix the code in a.go b.go to resolve the errors.\n" in two
    none = feedback_message(TestFeedback("x"), "fail", lines=None)
    assert none.endswith("\nFix the code to resolve the errors.\n")


def test_timings_and_the_sandbox_folder_are_taken_out() -> None:
    output = (
        "==== 1 failed, 2 passed in 0.12s ====\n"
        '  File "/tmp/tmpk2_9xq0a/program.py", line 3, in f\n'
        "    at test (/tmp/tmpoa91ifxe/program.js:11:10)\n"
        "test result: FAILED. finished in 12.50s\n"
        "kept: in 3s, in 0.5 s, /tmp/tmpfolder/x, /tmp/tmpk2_9xq0a1/y\n"
    )
    assert normalise_test_output(output) == (
        "==== 1 failed, 2 passed  ====\n"
        '  File "program.py", line 3, in f\n'
        "    at test (program.js:11:10)\n"
        "test result: FAILED. finished \n"
        "kept: in 3s, in 0.5 s, /tmp/tmpfolder/x, /tmp/tmpk2_9xq0a1/y\n"
    )


def test_the_output_is_cut_to_its_first_lines() -> None:
    output = "\n".join(f"line {i}" for i in range(120)) + "\n"
    message = feedback_message(TestFeedback(output), "fail", lines=50)
    shown = message.split("\n####\n")[0].split("\n")
    assert shown == [f"line {i}" for i in range(50)]
    everything = feedback_message(TestFeedback(output), "fail", lines=None)
    assert everything.split("\n####\n")[0].split("\n") == [f"line {i}" for i in range(120)]
    assert first_lines("a\r\nb\n\nc", 3) == "a\nb\n"


def test_a_timeout_sends_aiders_words_instead_of_output() -> None:
    message = feedback_message(TestFeedback("partial output"), "timeout", lines=50)
    assert message.startswith("Tests timed out!\n####\n")
    assert "partial output" not in message


def test_by_default_the_conversation_continues_with_each_answer_and_message() -> None:
    """`Benchmark.follow_up`'s default layout: the first request, then each answer (after the
    response prefix it was given) and the message that followed it."""
    first = Prompt(
        task_id="T/1",
        split="instruct",
        text="write f",
        messages=({"role": "system", "content": "be brief"}, {"role": "user", "content": "f?"}),
        response_prefix="```python\n",
    )
    default = BenchmarkBase()
    task = Task("T", "T/1", "f", {"instruct": "write f"}, "", "", "")
    answered = Exchange("def f(): pass\n```", "it failed")
    second = default.follow_up(first, [answered], task, "instruct")
    assert second.messages == (
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "f?"},
        {"role": "assistant", "content": "```python\ndef f(): pass\n```"},
        {"role": "user", "content": "it failed"},
    )
    assert (second.task_id, second.split, second.text) == ("T/1", "instruct", "it failed")
    assert second.response_prefix == first.response_prefix
    again = Exchange("def f(): return 1\n```", "again")
    third = default.follow_up(first, [answered, again], task, "instruct")
    assert third.messages[:4] == second.messages and len(third.messages) == 6
    assert third.messages[4:] == (
        {"role": "assistant", "content": "```python\ndef f(): return 1\n```"},
        {"role": "user", "content": "again"},
    )
