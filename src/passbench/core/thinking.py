"""Separate a model's thinking from its answer.

Reasoning models wrap their scratch work in markers, and that scratch work often holds drafts of
code that must not be mistaken for the answer. Markers seen in the wild:

    <think> ... </think>                       DeepSeek-R1, Qwen3, QwQ
    <thinking> ... </thinking>, <thought>, <reasoning>, <scratchpad>
    <|begin_of_thought|> ... <|end_of_thought|> Sky-T1, OpenThinker, Bespoke
    <seed:think> ... </seed:think>             Seed-OSS
    [THINK] ... [/THINK]                       Magistral
    ◁think▷ ... ◁/think▷                      Kimi
    <|channel|>analysis<|message|> ... <|end|> gpt-oss (harmony format)

A closing marker with no opening one before it means the chat template opened the section in the
prompt (DeepSeek-R1 does this): everything before it is thinking. An opening marker that is never
closed (the model ran out of tokens while thinking) makes the rest of the text thinking.

Only `str.find` is used, so the cost is linear in the text's length.

It lives in core because two stages read it: the providers, which keep a reasoning model's
thinking apart from its answer as it arrives, and the sanitizer, which reads answers written by
other tools with the thinking still inline.
"""

from __future__ import annotations

from dataclasses import dataclass

_PAIRS: tuple[tuple[str, str], ...] = (
    ("<think>", "</think>"),
    ("<thinking>", "</thinking>"),
    ("<thought>", "</thought>"),
    ("<reasoning>", "</reasoning>"),
    ("<scratchpad>", "</scratchpad>"),
    ("<|begin_of_thought|>", "<|end_of_thought|>"),
    ("<seed:think>", "</seed:think>"),
    ("[THINK]", "[/THINK]"),
    ("◁think▷", "◁/think▷"),
    ("<|channel|>analysis<|message|>", "<|end|>"),
)
# Text after this marker is a harmony-format model's final answer.
_HARMONY_FINAL = "<|channel|>final<|message|>"
# Markers around a solution that carry no meaning of their own.
_SOLUTION_MARKERS = (
    "<|begin_of_solution|>",
    "<|end_of_solution|>",
    "<|start|>assistant",
    "<|return|>",
)


@dataclass(frozen=True)
class Split:
    """An answer with its thinking taken out."""

    answer: str  # the text outside every thinking section
    thinking: tuple[str, ...]  # the thinking sections, in order
    unclosed: bool = False  # a section was opened and never closed: tokens ran out in it


def split_thinking(text: str) -> Split:
    """Take every thinking section out of `text`."""
    thinking: list[str] = []
    unclosed: list[bool] = []
    final = text.rfind(_HARMONY_FINAL)
    if final >= 0:
        thinking.append(text[:final])
        text = text[final + len(_HARMONY_FINAL) :]
    for opener, closer in _PAIRS:
        if opener in text or closer in text:
            text = _remove_sections(text, opener, closer, thinking, unclosed)
    for marker in _SOLUTION_MARKERS:
        if marker in text:
            text = text.replace(marker, "")
    return Split(answer=text, thinking=tuple(thinking), unclosed=any(unclosed))


def _remove_sections(
    text: str, opener: str, closer: str, thinking: list[str], unclosed: list[bool]
) -> str:
    first_close = text.find(closer)
    first_open = text.find(opener)
    if first_close >= 0 and (first_open < 0 or first_close < first_open):
        # The section was opened by the prompt: everything before the first closer is thinking.
        thinking.append(text[:first_close])
        text = text[first_close + len(closer) :]
    kept: list[str] = []
    position = 0
    while True:
        start = text.find(opener, position)
        if start < 0:
            kept.append(text[position:])
            break
        kept.append(text[position:start])
        body_start = start + len(opener)
        end = text.find(closer, body_start)
        if end < 0:  # never closed: the rest is thinking
            thinking.append(text[body_start:])
            unclosed.append(True)
            break
        thinking.append(text[body_start:end])
        position = end + len(closer)
    return "".join(kept)


#: Finish reasons that mean the token limit cut the answer, as each API spells it: "length"
#: (OpenAI and every compatible server, vLLM, SGLang, Mistral, Ollama's done_reason),
#: "max_tokens" (Anthropic), "MAX_TOKENS" (Gemini), "model_length" (Mistral: the context).
TOKEN_LIMIT_REASONS = frozenset({"length", "max_tokens", "model_length"})


def truncation(finish_reason: str | None, *, thinking_unclosed: bool = False) -> str:
    """Why an answer is truncated, or "" when it is not: the token limit the finish reason
    names, or a thinking section that was never closed (the answer never came)."""
    if finish_reason is not None and finish_reason.lower() in TOKEN_LIMIT_REASONS:
        return f"token limit (finish reason {finish_reason!r})"
    if thinking_unclosed:
        return "thinking section never closed"
    return ""
