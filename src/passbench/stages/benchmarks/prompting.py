"""How a benchmark words its prompts: the `PromptStyle` each benchmark module defines.

`passbench.stages.prompts` builds every prompt from the benchmark's style, so the wording of one
benchmark lives in that benchmark's module and nowhere else. The pieces shared by the official
tools (BigCodeBench and EvalPlus use the same prefixes and end markers) are defined here once:

- `INSTRUCTION_PREFIX`, `RESPONSE_PREFIX`: `bigcodebench/generate.py`, `evalplus/codegen.py`;
- `EOS`: `bigcodebench/provider/utility.py` (identical in `evalplus/provider/utility.py`);
- `DIRECT_COMPLETION_EOS`: `extra_eos_for_direct_completion("bigcodebench")`, which EvalPlus
  uses for HumanEval too;
- `FENCE_CLOSE_EOS`: added by the official local backends for chat models whose prefill
  opens a code fence.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from passbench.core.records import Prompt, Task

#: Default instruction prefix (bigcodebench generate.py, evalplus codegen.py).
INSTRUCTION_PREFIX = (
    "Please provide a self-contained Python script that solves the following problem in a "
    "markdown code block:"
)
#: Default response prefix of both official tools.
RESPONSE_PREFIX = (
    "Below is a Python script with a self-contained function that solves the problem and passes "
    "corresponding tests:"
)
#: The model-independent end markers of the official tools.
END_MARKERS: tuple[str, ...] = ("<|endoftext|>", "<|endofmask|>", "</s>")
#: `EOS` of `bigcodebench/provider/utility.py` (identical in `evalplus/provider/utility.py`).
EOS: tuple[str, ...] = (*END_MARKERS, "\nif __name__", "\ndef main(", "\nprint(")
#: `extra_eos_for_direct_completion("bigcodebench")`; EvalPlus uses the same list for HumanEval.
DIRECT_COMPLETION_EOS: tuple[str, ...] = ("\ndef ", "\nclass ", "\nimport ", "\nfrom ", "\nassert ")
#: Added by the official local backends for chat models whose prefill opens a code fence.
FENCE_CLOSE_EOS = "\n```\n"

ChatStops = Callable[[str, bool], tuple[str, ...]]
"""`(response prefix, prefill) -> stop sequences` of a chat model."""


@dataclass(frozen=True)
class PromptStyle:
    """How one benchmark words its prompts and where generation stops.

    Built by the benchmark's module and read by `passbench.stages.prompts`, which adds what every
    benchmark shares (the split check, the overridable prefixes, the prefilled fence).
    """

    # base model: task prompt -> text to complete
    direct: Callable[[str], str]
    # chat model: (instruction prefix, task prompt, split, chat_template) -> user message
    user_message: Callable[[str, str, str, bool], str]
    # the stop sequences of a base model (the official local backends')
    direct_stops: tuple[str, ...]
    # the stop sequences of a chat model
    chat_stops: ChatStops
    # splits a base model may be asked (direct completion needs code to continue)
    direct_splits: frozenset[str] = frozenset({"complete"})
    instruction_prefix: str = INSTRUCTION_PREFIX
    response_prefix: str = RESPONSE_PREFIX
    # the info string of the code fence a prefilled response opens
    fence: str = "python"
    # a benchmark whose prompt is not a prefixed task prompt builds it whole:
    # (task, split, chat) -> Prompt (LiveCodeBench's system and user messages)
    build: Callable[[Task, str, bool], Prompt] | None = None


def stop_at_fence_always(response_prefix: str, prefill: bool) -> tuple[str, ...]:
    """EvalPlus's local backends: chat models always stop at a closing fence."""
    return (*EOS, FENCE_CLOSE_EOS)


def stop_at_fence_in_prefix(response_prefix: str, prefill: bool) -> tuple[str, ...]:
    """BigCodeBench's `provider/vllm.py`: a closing fence stops a chat model only when the
    prefilled response prefix itself contains a fence."""
    if prefill and "```" in response_prefix:
        return (*EOS, FENCE_CLOSE_EOS)
    return EOS


def identity(text: str) -> str:
    """The task prompt unchanged (BigCodeBench's and MultiPL-E's direct completion)."""
    return text


def other_language_style(title: str, fence: str, direct_stops: tuple[str, ...]) -> PromptStyle:
    """How passbench prompts for a program in another language than Python (MultiPL-E's and
    HumanEval-X's languages). Base models: the prompt unchanged, stopping at `direct_stops`
    only. Chat models (passbench's choice; those harnesses have none): EvalPlus's wording with
    the language `title` named and its `fence` opened, stopping at the end markers, and at a
    closing fence when the response was prefilled with an opened one; Python's other end
    markers ("\\nprint(", ...) would cut code in these languages."""

    def user_message(prefix: str, task_prompt: str, split: str, chat_template: bool) -> str:
        return f"{prefix}\n```{fence}\n{task_prompt.strip()}\n```\n"

    def chat_stops(response_prefix: str, prefill: bool) -> tuple[str, ...]:
        return (*END_MARKERS, FENCE_CLOSE_EOS) if prefill else END_MARKERS

    return PromptStyle(
        direct=identity,
        user_message=user_message,
        direct_stops=direct_stops,
        chat_stops=chat_stops,
        instruction_prefix=(
            f"Please provide a self-contained {title} program that solves the "
            "following problem in a markdown code block:"
        ),
        response_prefix=(
            f"Below is a {title} program with a self-contained function that solves "
            "the problem and passes corresponding tests:"
        ),
        fence=fence,
    )
