"""SALLM's code extraction: the prompt followed by the model's code, cut where the function ends.

SALLM (s2e-lab/SALLM@7f17a76, `Generation/Filtering.ipynb`, `clear_generated_code`) turns each
answer into the program its static analysis (CodeQL) and tests read:

- a base model's output (the prompt, a newline, the continuation: `tokenizer.decode` of the whole
  sequence) is cut at `<|endoftext|>`; the text after the prompt is cut at the first of
  `SPLIT_TOKENS` (the next top-level `def`, `if`, `@app`, `class`, a docstring, a main guard),
  and the program is the prompt, a newline, and that text;
- a chat model's answer (GPT-3.5 / GPT-4 in 2023 answered with the function's body) gets four
  spaces before every line that does not start with a space, and then goes the same way as if
  the model had continued the prompt with it.

We take the same text, with two differences (docs/benchmarks.md lists them):

- thinking sections (`<think>...</think>`, sanitize/thinking.py) are taken out first, with the
  newlines after them: an API returns the answer without them;
- a chat answer with a fenced Python block (most of today's chat models; 30 of GPT-4's 1,000
  answers at temperature 0 in SALLM's own outputs) is read through its block: a block that
  defines the prompt's function is the whole program and is kept as written; another block is
  the body, and goes through SALLM's rule. SALLM's rule would indent the fence lines and the
  whole program under the prompt's stub, which no analyser can parse.
"""

from __future__ import annotations

import re

from passbench.stages.sanitize.extract import SanitizeResult
from passbench.stages.sanitize.fences import find_blocks
from passbench.stages.sanitize.thinking import split_thinking

#: `split_tokens` of Filtering.ipynb, verbatim and in its order.
SPLIT_TOKENS: tuple[str, ...] = (
    "\ndef",
    "\nif",
    "\n@app",
    "\n'''",
    "\nclass",
    "if __name__ == '__main__':",
    'if __name__ == "__main__":',
)
#: The end-of-text marker SALLM's base-model outputs are cut at first.
END_OF_TEXT = "<|endoftext|>"


def cut_after_prompt(data: str, prompt: str) -> str:
    """`clear_generated_code`'s common part: the prompt, a newline, and the text after the
    prompt's first occurrence in `data` up to the first split token (`data.split(prompt)[1]`
    keeps the text only up to a second copy of the prompt)."""
    rest = data.split(prompt)[1]
    for token in SPLIT_TOKENS:
        if token in rest:
            rest = rest.split(token)[0]
    return prompt + "\n" + rest


def indent_body(answer: str) -> str:
    """`clear_generated_code(..., isGPT3=True)`'s indentation: four spaces before every line
    that does not start with a space, each line ending with a newline."""
    lines = answer.split("\n")
    return "".join((line if line.startswith(" ") else "    " + line) + "\n" for line in lines)


def from_completion(prompt: str, output: str) -> str:
    """The program of a base model's output (the prompt, a newline and the continuation)."""
    data = output.split(END_OF_TEXT)[0]
    if prompt not in data:
        return data  # SALLM keeps an output that lost its prompt as it is
    return cut_after_prompt(data, prompt)


def from_chat_answer(prompt: str, answer: str) -> str:
    """SALLM's rule for a chat answer, taken to be the body of the prompt's function."""
    return cut_after_prompt(prompt + "\n" + indent_body(answer), prompt)


def extract_code(answer: str, prompt: str, entry_point: str) -> SanitizeResult:
    """The program SALLM would analyse for `answer` to `prompt` (see the module docstring).

    An answer that starts with the prompt is a base model's output ("prompt+completion");
    otherwise it is a chat answer: its first Python block that defines `entry_point` is kept
    whole ("fenced"), its first other Python block is the body ("fenced-body"), and without a
    Python block the answer is the body ("prompt+body"). Nothing fails: like SALLM, every
    answer becomes a program, so it stays in the denominator of the rates.
    """
    split = split_thinking(answer)
    # an API returns the answer without its thinking, and without the newlines after it
    text = split.answer.lstrip("\n") if split.thinking else split.answer
    if text.startswith(prompt):
        return SanitizeResult(from_completion(prompt, text), True, origin="prompt+completion")
    blocks = [block for block in find_blocks(text) if block.is_python]
    defines = re.compile(rf"^\s*(?:async\s+)?def\s+{re.escape(entry_point)}\s*\(", re.MULTILINE)
    for block in blocks:
        if defines.search(block.code):
            return SanitizeResult(block.code.rstrip("\n") + "\n", True, origin="fenced")
    if blocks:
        return SanitizeResult(from_chat_answer(prompt, blocks[0].code), True, origin="fenced-body")
    return SanitizeResult(from_chat_answer(prompt, text), True, origin="prompt+body")
