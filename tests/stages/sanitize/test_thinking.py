from __future__ import annotations

import pytest

from passbench.stages.sanitize.thinking import split_thinking


@pytest.mark.parametrize(
    ("opener", "closer"),
    [
        ("<think>", "</think>"),
        ("<thinking>", "</thinking>"),
        ("<|begin_of_thought|>", "<|end_of_thought|>"),
        ("<seed:think>", "</seed:think>"),
        ("[THINK]", "[/THINK]"),
        ("◁think▷", "◁/think▷"),
    ],
)
def test_sections_are_taken_out(opener: str, closer: str) -> None:
    split = split_thinking(f"{opener}draft one{closer}answer {opener}draft two{closer}end")
    assert split.answer == "answer end"
    assert split.thinking == ("draft one", "draft two")


def test_a_section_opened_by_the_chat_template_ends_at_its_closer() -> None:
    split = split_thinking("reasoning with code\n</think>\nthe answer")
    assert split.answer == "\nthe answer"
    assert split.thinking == ("reasoning with code\n",)


def test_an_unclosed_section_runs_to_the_end() -> None:
    split = split_thinking("before <think> still thinking when the tokens ran out")
    assert split.answer == "before "
    assert split.thinking == (" still thinking when the tokens ran out",)


def test_harmony_format_keeps_only_the_final_channel() -> None:
    text = (
        "<|channel|>analysis<|message|>draft<|end|>"
        "<|start|>assistant<|channel|>final<|message|>the answer<|return|>"
    )
    split = split_thinking(text)
    assert split.answer == "the answer"
    assert "draft" in "".join(split.thinking)


def test_solution_markers_are_dropped() -> None:
    text = "<|begin_of_thought|>x<|end_of_thought|><|begin_of_solution|>code<|end_of_solution|>"
    assert split_thinking(text).answer == "code"


def test_text_without_markers_is_unchanged() -> None:
    text = "def f():\n    return '<thin>'\n"
    assert split_thinking(text).answer == text
    assert split_thinking(text).thinking == ()
