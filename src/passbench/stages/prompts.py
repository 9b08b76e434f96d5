"""Task + split + model kind -> what the model is asked (pure).

The wording belongs to each benchmark: its module defines a `PromptStyle`
(passbench.stages.benchmarks.prompting) that reproduces its official protocol byte for byte,
because a
prompt that differs by one newline changes scores. This module looks the style up through the
benchmark registry and does what every benchmark shares.

Base models (no chat template) complete the prompt directly. Chat models get the instruction
prefix and the task, and, where the provider can prefill the assistant's turn (local chat
templates: vLLM, transformers), the response prefix followed by an opened code fence. The
official API backends (OpenAI, Anthropic, Google, Mistral) send the user message alone; a provider
that wants official numbers does the same and ignores `Prompt.response_prefix`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from passbench.core.errors import InputError, UnknownNameError
from passbench.core.records import Prompt, Task
from passbench.stages.benchmarks import DEFAULT_BENCHMARK, get_benchmark
from passbench.stages.benchmarks.prompting import (
    DIRECT_COMPLETION_EOS,
    EOS,
    FENCE_CLOSE_EOS,
    INSTRUCTION_PREFIX,
    RESPONSE_PREFIX,
    PromptStyle,
)

# The official tools render a chat template with this marker in the assistant turn, then cut the
# text at it, so the rendered prompt ends exactly where the model should continue.
_MAGIC_SPLITTER = "-[[]]-this-is-really-our-highest-priority-[[]]-"

ApplyChatTemplate = Callable[[Sequence[Mapping[str, str]], bool], str]
"""`(messages, add_generation_prompt) -> text`, e.g. a wrapper around a Hugging Face
tokenizer's `apply_chat_template(messages, tokenize=False, add_generation_prompt=...)`."""


def prompt_style(benchmark: str) -> PromptStyle:
    """The registered benchmark's prompt style; UnknownNameError naming the valid benchmarks."""
    return get_benchmark(benchmark).info.prompt_style


def build_prompt(
    task: Task,
    split: str,
    *,
    chat: bool,
    instruction_prefix: str | None = None,
    response_prefix: str | None = None,
    prefill: bool = True,
    chat_template: bool = False,
) -> Prompt:
    """The official prompt for `task` in `split`, worded by its benchmark's `PromptStyle`.

    chat: False for a base model (direct completion of the prompt), True for a chat model.
    instruction_prefix / response_prefix: override the official defaults.
    prefill: set `Prompt.response_prefix` (the assistant turn starts with the response prefix
        and an opened ```python fence); turn off for reasoning models, which must think first
        (the official `--skip_prefill`).
    chat_template: the provider renders the model's chat template locally (vLLM,
        transformers), as the official local backends do; only EvalPlus words that user
        message differently from its API one.
    """
    style = prompt_style(task.benchmark)
    if style.build is not None:
        return style.build(task, split, chat)
    try:
        task_prompt = task.prompts[split]
    except KeyError:
        available = ", ".join(sorted(task.prompts)) or "none"
        raise UnknownNameError(
            f"task {task.task_id} has no {split!r} prompt (available: {available})"
        ) from None
    if not chat:
        if split not in style.direct_splits:
            raise InputError(
                f"a base model cannot be asked the {split!r} split of {task.benchmark} "
                "(direct completion needs code to continue; use a chat model)"
            )
        return Prompt(task_id=task.task_id, split=split, text=style.direct(task_prompt))
    prefix = style.instruction_prefix if instruction_prefix is None else instruction_prefix
    text = style.user_message(prefix, task_prompt, split, chat_template)
    response = style.response_prefix if response_prefix is None else response_prefix
    return Prompt(
        task_id=task.task_id,
        split=split,
        text=text,
        messages=({"role": "user", "content": text},),
        response_prefix=f"{response}\n```{style.fence}\n" if prefill else "",
    )


def stop_sequences(
    chat: bool,
    *,
    benchmark: str = DEFAULT_BENCHMARK,
    response_prefix: str | None = None,
    prefill: bool = True,
) -> tuple[str, ...]:
    """Stop sequences of the official local backends (vLLM, transformers), as `benchmark`'s
    `PromptStyle` gives them.

    BigCodeBench and EvalPlus: base models stop at the next top-level definition, import or
    assert; chat models stop at the common end markers, and at a closing fence where the
    official tool does (EvalPlus always; BigCodeBench when a prefilled response prefix itself
    contains one, as `provider/vllm.py` checks). Of the API backends, the official Anthropic one
    sends `EOS` and the OpenAI one sends none.
    """
    style = prompt_style(benchmark)
    if not chat:
        return style.direct_stops
    response = style.response_prefix if response_prefix is None else response_prefix
    return style.chat_stops(response, prefill)


def render_chat_template(prompt: Prompt, apply_chat_template: ApplyChatTemplate) -> str:
    """The text a local backend feeds the model: the chat template applied to `prompt`, cut
    right after the prefilled response prefix (the official `_MAGIC_SPLITTER_` technique)."""
    user = {"role": "user", "content": prompt.text}
    if prompt.response_prefix:
        assistant = {
            "role": "assistant",
            "content": f"{prompt.response_prefix}{_MAGIC_SPLITTER}\n```\n",
        }
        return apply_chat_template([user, assistant], False).split(_MAGIC_SPLITTER)[0]
    return apply_chat_template([user], True).split(_MAGIC_SPLITTER)[0]


__all__ = [
    "DIRECT_COMPLETION_EOS",
    "EOS",
    "FENCE_CLOSE_EOS",
    "INSTRUCTION_PREFIX",
    "RESPONSE_PREFIX",
    "ApplyChatTemplate",
    "build_prompt",
    "prompt_style",
    "render_chat_template",
    "stop_sequences",
]
