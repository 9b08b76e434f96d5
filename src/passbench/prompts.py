"""Task + split + model kind -> what the model is asked (pure).

The texts reproduce the official protocols byte for byte, because a prompt that differs by one
newline changes scores:

- BigCodeBench: `bigcodebench/provider/utility.py::make_raw_chat_prompt` and
  `bigcodebench/generate.py` (default prefixes), `bigcodebench/provider/{openai,anthropic,vllm,
  hf}.py` (who prefills, which stop sequences).
- HumanEval(+), MBPP(+): EvalPlus, `evalplus/codegen.py` (prompt = `task["prompt"].strip() + "\\n"`,
  default prefixes), `evalplus/provider/openai.py` (API chat message) and
  `evalplus/provider/utility.py::make_raw_chat_prompt` (local chat-template message).

Base models (no chat template) complete the prompt directly. Chat models get the instruction
prefix and the task, and, where the provider can prefill the assistant's turn (local chat
templates: vLLM, transformers), the response prefix followed by an opened ```python fence. The
official API backends (OpenAI, Anthropic, Google, Mistral) send the user message alone; a provider
that wants official numbers does the same and ignores `Prompt.response_prefix`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from passbench.errors import InputError, UnknownNameError
from passbench.records import Prompt, Task

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

#: `EOS` of `bigcodebench/provider/utility.py` (identical in `evalplus/provider/utility.py`).
EOS: tuple[str, ...] = (
    "<|endoftext|>",
    "<|endofmask|>",
    "</s>",
    "\nif __name__",
    "\ndef main(",
    "\nprint(",
)
#: `extra_eos_for_direct_completion("bigcodebench")`; EvalPlus uses the same list for HumanEval.
DIRECT_COMPLETION_EOS: tuple[str, ...] = ("\ndef ", "\nclass ", "\nimport ", "\nfrom ", "\nassert ")
#: `extra_eos_for_direct_completion("mbpp")`: MBPP+ prompts are a docstring with an assert.
MBPP_DIRECT_COMPLETION_EOS: tuple[str, ...] = ('\n"""', "\nassert")
#: Added by the official local backends for chat models whose prefill opens a code fence.
FENCE_CLOSE_EOS = "\n```\n"

# The official tools render a chat template with this marker in the assistant turn, then cut the
# text at it, so the rendered prompt ends exactly where the model should continue.
_MAGIC_SPLITTER = "-[[]]-this-is-really-our-highest-priority-[[]]-"

ApplyChatTemplate = Callable[[Sequence[Mapping[str, str]], bool], str]
"""`(messages, add_generation_prompt) -> text`, e.g. a wrapper around a Hugging Face
tokenizer's `apply_chat_template(messages, tokenize=False, add_generation_prompt=...)`."""


@dataclass(frozen=True)
class _Protocol:
    """How one benchmark family words its prompts."""

    # base model: task prompt -> text to complete
    direct: Callable[[str], str]
    # chat model: (instruction prefix, task prompt, split, chat_template) -> user message
    user_message: Callable[[str, str, str, bool], str]
    # splits a base model may be asked (direct completion needs code to continue)
    direct_splits: frozenset[str]
    # whether the official local backends always stop at a closing fence for chat models
    always_stop_at_fence: bool
    # extra stop sequences of a base model (`extra_eos_for_direct_completion`)
    direct_eos: tuple[str, ...] = DIRECT_COMPLETION_EOS
    # a benchmark module that builds its prompts itself: (task, split, chat) -> Prompt
    build: Callable[[Task, str, bool], Prompt] | None = None
    # stop sequences of a chat model, where they are not the common ones
    chat_eos: tuple[str, ...] | None = None


def _bigcodebench_user(prefix: str, task_prompt: str, split: str, chat_template: bool) -> str:
    # make_raw_chat_prompt: the same user message for API and chat-template backends.
    if split == "complete":
        return f"{prefix}\n```\n{task_prompt.strip()}\n```\n"
    return f"{prefix}\n{task_prompt.strip()}\n"


def _evalplus_user(prefix: str, task_prompt: str, split: str, chat_template: bool) -> str:
    # codegen.py first normalises the prompt to `prompt.strip() + "\n"`; the providers strip again.
    if chat_template:  # provider/utility.py::make_raw_chat_prompt
        return f"{prefix}\n```\n{task_prompt.strip()}\n```\n"
    return f"{prefix}\n```python\n{task_prompt.strip()}\n```"  # provider/openai.py


_PROTOCOLS: dict[str, _Protocol] = {
    "bigcodebench": _Protocol(
        direct=lambda text: text,
        user_message=_bigcodebench_user,
        direct_splits=frozenset({"complete"}),
        always_stop_at_fence=False,
    ),
    "humaneval": _Protocol(
        direct=lambda text: text.strip() + "\n",
        user_message=_evalplus_user,
        direct_splits=frozenset({"complete"}),
        always_stop_at_fence=True,
    ),
}
_PROTOCOLS["humanevalplus"] = _PROTOCOLS["humaneval"]
_PROTOCOLS["humaneval-openai"] = _PROTOCOLS["humaneval"]
_PROTOCOLS["mbpp"] = _PROTOCOLS["mbppplus"] = _Protocol(
    direct=lambda text: text.strip() + "\n",
    user_message=_evalplus_user,
    direct_splits=frozenset({"complete"}),
    always_stop_at_fence=True,
    direct_eos=MBPP_DIRECT_COMPLETION_EOS,
)


def _livecodebench_prompt(task: Task, split: str, chat: bool) -> Prompt:
    from passbench.benchmarks.livecodebench import build_prompt as livecodebench_prompt

    return livecodebench_prompt(task, split, chat=chat)


# LiveCodeBench's prompt and extraction live in its module; its chat runs send no stop
_PROTOCOLS["livecodebench"] = _Protocol(
    direct=lambda text: text,
    user_message=_bigcodebench_user,
    direct_splits=frozenset(),
    always_stop_at_fence=False,
    build=_livecodebench_prompt,
    chat_eos=(),
)


def _protocol(benchmark: str) -> _Protocol:
    try:
        return _PROTOCOLS[benchmark]
    except KeyError:
        known = ", ".join(sorted(_PROTOCOLS))
        raise UnknownNameError(
            f"no prompt protocol for benchmark {benchmark!r} (known: {known})"
        ) from None


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
    """The official prompt for `task` in `split`.

    chat: False for a base model (direct completion of the prompt), True for a chat model.
    instruction_prefix / response_prefix: override the official defaults.
    prefill: set `Prompt.response_prefix` (the assistant turn starts with the response prefix
        and an opened ```python fence); turn off for reasoning models, which must think first
        (the official `--skip_prefill`).
    chat_template: the provider renders the model's chat template locally (vLLM,
        transformers), as the official local backends do; only EvalPlus words that user
        message differently from its API one.
    """
    protocol = _protocol(task.benchmark)
    if protocol.build is not None:
        return protocol.build(task, split, chat)
    try:
        task_prompt = task.prompts[split]
    except KeyError:
        available = ", ".join(sorted(task.prompts)) or "none"
        raise UnknownNameError(
            f"task {task.task_id} has no {split!r} prompt (available: {available})"
        ) from None
    if not chat:
        if split not in protocol.direct_splits:
            raise InputError(
                f"a base model cannot be asked the {split!r} split of {task.benchmark} "
                "(direct completion needs code to continue; use a chat model)"
            )
        return Prompt(task_id=task.task_id, split=split, text=protocol.direct(task_prompt))
    prefix = INSTRUCTION_PREFIX if instruction_prefix is None else instruction_prefix
    text = protocol.user_message(prefix, task_prompt, split, chat_template)
    response = RESPONSE_PREFIX if response_prefix is None else response_prefix
    return Prompt(
        task_id=task.task_id,
        split=split,
        text=text,
        messages=({"role": "user", "content": text},),
        response_prefix=f"{response}\n```python\n" if prefill else "",
    )


def stop_sequences(
    chat: bool,
    *,
    benchmark: str = "bigcodebench",
    response_prefix: str | None = None,
    prefill: bool = True,
) -> tuple[str, ...]:
    """Stop sequences of the official local backends (vLLM, transformers).

    Base models stop at the next top-level definition, import or assert. Chat models stop at
    the common end markers; BigCodeBench also stops at a closing fence when a prefilled
    response prefix itself contains one (as `provider/vllm.py` checks), EvalPlus always does.
    Of the API backends, the official Anthropic one sends `EOS` and the OpenAI one sends none.
    """
    protocol = _protocol(benchmark)
    if not chat:
        return EOS + protocol.direct_eos
    if protocol.chat_eos is not None:
        return protocol.chat_eos
    response = RESPONSE_PREFIX if response_prefix is None else response_prefix
    if protocol.always_stop_at_fence or (prefill and "```" in response):
        return (*EOS, FENCE_CLOSE_EOS)
    return EOS


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
