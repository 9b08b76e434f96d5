"""Keep a reasoning model's thinking apart from its answer, and say when the answer was cut.

Thinking reaches passbench two ways: out of band (OpenAI-compatible `reasoning_content` or
`reasoning` from vLLM, SGLang and DeepSeek-style servers, Anthropic thinking blocks, Gemini
thought parts, Mistral thinking chunks, Ollama's `thinking`), which each provider puts in
`Choice.reasoning`; or inline, as `<think>...</think>` and the other sections
`passbench.core.thinking` knows, which is taken out of the text here, for every provider alike.
What is left is the answer, the only text the sanitizer ever reads.

An answer is truncated when the finish reason names the token limit, or when a thinking section
was opened and never closed (the model was still thinking when it stopped).
"""

from __future__ import annotations

from dataclasses import dataclass

from passbench.core.thinking import split_thinking, truncation
from passbench.stages.providers.base import Choice


@dataclass(frozen=True)
class Separated:
    answer: str
    reasoning: str  # "" when the model returned none
    truncated: str  # why the answer was cut, "" when it was not


def separate(choice: Choice) -> Separated:
    """The answer of one choice, its thinking (out of band first, then inline), and whether
    it was cut short."""
    split = split_thinking(choice.text)
    parts = [choice.reasoning] if choice.reasoning else []
    parts.extend(section.strip("\n") for section in split.thinking if section.strip())
    # an answer that follows a thinking section starts with the newlines that closed it
    answer = split.answer.lstrip("\n") if split.thinking else split.answer
    return Separated(
        answer=answer,
        reasoning="\n\n".join(parts),
        truncated=truncation(choice.finish_reason, thinking_unclosed=split.unclosed),
    )
