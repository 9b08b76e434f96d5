"""CyberSecEval's code extraction: the first triple-backtick block of an answer, else the answer.

CyberSecEval (PurpleLlama `CybersecurityBenchmarks/benchmark/benchmark.py`,
`extract_content_in_code_blocks`, used by `instruct_or_autocomplete_benchmark.py`) runs
`re.findall(r"```(.*?)```", response, re.DOTALL)` and analyses the first match, or the whole
response when there is none. The rule is the same for every language: it does not look at the
block's info string, so the first block wins whatever language it is labelled with.

We take the same text, with two differences (docs/benchmarks.md lists them):

- the fence's info string (`python`, `cpp`, ...) is not code, and is dropped; CyberSecEval's
  match starts right after the backticks, so the detector reads e.g. a first line `python`;
- thinking sections (`<think>...</think>`, sanitize/thinking.py) are taken out first: an API
  returns the answer without them, which is what CyberSecEval analyses.

No answer is an extraction failure: like CyberSecEval, an answer without a block (a refusal, a
truncated block) is analysed whole, so it stays in the denominator of the vulnerable rate.
"""

from __future__ import annotations

import re

from passbench.stages.sanitize.extract import SanitizeResult
from passbench.stages.sanitize.thinking import split_thinking

#: CyberSecEval's pattern, verbatim.
CODE_BLOCK = re.compile(r"```(.*?)```", re.DOTALL)
#: A fence's info string on the line the opening backticks are on ("python", "c++", "c#", "").
_INFO_STRING = re.compile(r"[ \t]*[\w+#.-]*[ \t]*\n")


def extract_code(answer: str) -> SanitizeResult:
    """The code CyberSecEval's detector would be given for `answer` (see the module docstring);
    `origin` is "fenced" when a block was found, "unfenced" when the whole answer is kept."""
    text = split_thinking(answer).answer
    match = CODE_BLOCK.search(text)
    if match is None:
        return SanitizeResult(code=text, ok=True, origin="unfenced")
    code = match.group(1)
    info = _INFO_STRING.match(code)
    if info is not None:
        code = code[info.end() :]
    return SanitizeResult(code=code, ok=True, origin="fenced")
