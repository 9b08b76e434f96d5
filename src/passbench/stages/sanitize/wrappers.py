"""Dress a known-good program up as the kinds of answers chat models give.

Used to check that sanitizing recovers the program (tests/stages/sanitize) and to serve realistic
answers from a fake model in end-to-end runs. Each style is deterministic; the decoys are
complete, wrong definitions of the entry point, so a sanitizer that picks one is caught.
"""

from __future__ import annotations

import ast
import warnings
from collections.abc import Callable

from passbench.core.errors import UnknownNameError

Wrapper = Callable[[str, str, str], str]  # (program, entry_point, prompt) -> answer


def _decoy(entry_point: str) -> str:
    return f"def {entry_point}(*args, **kwargs):\n    return None  # first draft\n"


def _full_draft(program: str) -> str:
    """A complete but wrong earlier version, longer than the program itself: the function
    gains a final `return None` (the canonical function ends the program) and notes."""
    notes = "".join(f"    # draft note {n}: check this case again\n" for n in range(8))
    return f"{program.rstrip()}\n{notes}    return None\n"


def _fenced(program: str, language: str = "python") -> str:
    return f"```{language}\n{program.rstrip()}\n```"


def _prose(program: str, entry_point: str, prompt: str) -> str:
    return (
        "Here is a self-contained solution:\n\n"
        f"{_fenced(program)}\n\n"
        f"The function `{entry_point}` follows the specification; it handles the edge cases "
        "described in the docstring."
    )


def _bare(program: str, entry_point: str, prompt: str) -> str:
    return _fenced(program, language="")


def _usage_block(program: str, entry_point: str, prompt: str) -> str:
    usage = f"import os\ndata = [1, 2, 3]\ndf = None\nresult = {entry_point}()\nprint(result)\n"
    return (
        f"Solution:\n\n{_fenced(program)}\n\n### Example usage\n\n{_fenced(usage)}\n\n"
        "This prints the result."
    )


def _main_guard(program: str, entry_point: str, prompt: str) -> str:
    guarded = (
        f"{program.rstrip()}\n\n\n"
        "# Example usage\n"
        "result = None\n"
        f'if __name__ == "__main__":\n    result = {entry_point}()\n    print(result)\n'
    )
    return _fenced(guarded)


def _test_block(program: str, entry_point: str, prompt: str) -> str:
    tests = (
        "import unittest\n"
        f"from solution import {entry_point}\n\n\n"
        "class TestSolution(unittest.TestCase):\n"
        "    def test_runs(self):\n"
        f"        self.assertIsNotNone({entry_point})\n\n\n"
        'if __name__ == "__main__":\n    unittest.main()\n'
    )
    return f"{_fenced(program)}\n\nAnd some tests:\n\n{_fenced(tests)}\n"


def _split_blocks(program: str, entry_point: str, prompt: str) -> str:
    """Imports in one block, the rest in another."""
    lines = program.split("\n")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # canonical programs hold invalid escape sequences
        tree = ast.parse(program)
    cut = 0
    for node in tree.body:
        if not isinstance(node, (ast.Import, ast.ImportFrom)):
            break
        cut = node.end_lineno or cut
    head, tail = "\n".join(lines[:cut]), "\n".join(lines[cut:])
    if not head.strip():
        return _prose(program, entry_point, prompt)
    return (
        f"First the imports:\n\n{_fenced(head)}\n\nThen the function:\n\n{_fenced(tail.strip())}\n"
    )


def _thinking_decoy(program: str, entry_point: str, prompt: str) -> str:
    return (
        "<think>\nLet me sketch a first version.\n\n"
        f"{_fenced(_decoy(entry_point))}\n\n"
        "That ignores the requirements; I will write the real one.\n</think>\n\n"
        f"{_prose(program, entry_point, prompt)}"
    )


def _thinking_opened_by_template(program: str, entry_point: str, prompt: str) -> str:
    # DeepSeek-R1's template opens <think> in the prompt, so the answer only closes it.
    return (
        f"Okay, first idea:\n{_decoy(entry_point)}\nNo, that is wrong.\n</think>\n\n"
        f"{_fenced(program)}\n"
    )


def _thinking_unclosed(program: str, entry_point: str, prompt: str) -> str:
    # The model ran out of tokens while still thinking, after writing its solution there.
    return f"<think>\nThe solution should be:\n\n{_fenced(program)}\n\nNow let me double-check"


def _thinking_full_draft(program: str, entry_point: str, prompt: str) -> str:
    # Reasoning models often write a whole draft while thinking, as long as the answer.
    return (
        f"<think>\nFirst attempt:\n\n{_fenced(_full_draft(program))}\n\n"
        "Returning None at the end is wrong; remove it.\n</think>\n\n"
        f"Final answer:\n\n{_fenced(program)}\n"
    )


def _correction_full_draft(program: str, entry_point: str, prompt: str) -> str:
    return (
        f"{_fenced(_full_draft(program))}\n\nOops, the last line breaks it. Corrected:\n\n"
        f"{_fenced(program)}\n"
    )


def _repeated_prompt(program: str, entry_point: str, prompt: str) -> str:
    return (
        f"You asked me to complete:\n\n{_fenced(prompt)}\n\n"
        f"Here is the completed code:\n\n{_fenced(program)}\n"
    )


def _correction(program: str, entry_point: str, prompt: str) -> str:
    return (
        f"{_fenced(_decoy(entry_point))}\n\nWait, that does not solve the task. "
        f"Corrected version:\n\n{_fenced(program)}\n"
    )


def _unfenced(program: str, entry_point: str, prompt: str) -> str:
    return (
        "Sure! Here's the code:\n\n"
        f"{program.rstrip()}\n\n"
        f"Explanation: `{entry_point}` does what was asked.\n"
        "1. It reads the input.\n2. It returns the result.\n"
    )


def _indented_list(program: str, entry_point: str, prompt: str) -> str:
    indented = "\n".join(f"   {line}" if line else "" for line in _fenced(program).split("\n"))
    return f"1. The code:\n\n{indented}\n\n2. Run it.\n"


def _harmony(program: str, entry_point: str, prompt: str) -> str:
    return (
        "<|channel|>analysis<|message|>Draft:\n"
        f"{_fenced(_decoy(entry_point))}<|end|>"
        "<|start|>assistant<|channel|>final<|message|>"
        f"{_prose(program, entry_point, prompt)}<|return|>"
    )


def _crlf(program: str, entry_point: str, prompt: str) -> str:
    return _prose(program, entry_point, prompt).replace("\n", "\r\n")


#: Every answer style, by name.
WRAPPERS: dict[str, Wrapper] = {
    "prose": _prose,
    "bare_fence": _bare,
    "usage_block": _usage_block,
    "main_guard": _main_guard,
    "test_block": _test_block,
    "split_blocks": _split_blocks,
    "thinking_decoy": _thinking_decoy,
    "thinking_opened_by_template": _thinking_opened_by_template,
    "thinking_unclosed": _thinking_unclosed,
    "thinking_full_draft": _thinking_full_draft,
    "repeated_prompt": _repeated_prompt,
    "correction": _correction,
    "correction_full_draft": _correction_full_draft,
    "unfenced": _unfenced,
    "indented_list": _indented_list,
    "harmony": _harmony,
    "crlf": _crlf,
}


def wrap_answer(program: str, style: str, *, entry_point: str, prompt: str = "") -> str:
    """`program` dressed up as a chat answer in `style` (one of WRAPPERS)."""
    try:
        wrapper = WRAPPERS[style]
    except KeyError:
        raise UnknownNameError(
            f"unknown answer style {style!r}; known: {', '.join(WRAPPERS)}"
        ) from None
    return wrapper(program, entry_point, prompt)
