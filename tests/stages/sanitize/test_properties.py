"""Whatever the answer, sanitize returns (never raises), and an ok result parses and defines
the entry point."""

from __future__ import annotations

import ast

from hypothesis import given, settings
from hypothesis import strategies as st

from passbench.stages.sanitize import sanitize

PIECES = [
    "```python\n",
    "```\n",
    "~~~\n",
    "<think>",
    "</think>",
    "def task_func(x):\n",
    "    return x\n",
    "    ",
    '"""',
    "'''",
    "import os\n",
    "from a import task_func\n",
    "@decorator\n",
    "else:\n",
    "if __name__ == '__main__':\n",
    "CONST = [\n",
    "]\n",
    "Here's the code:\n",
    "\\\n",
    "\t",
    "\r\n",
    "é✓\n",
    "\x00",
    "class task_func:\n",
    "    pass\n",
    "...\n",
]

pieces = st.one_of(st.sampled_from(PIECES), st.text(max_size=12))
answers = st.lists(pieces, max_size=40).map("".join)


@settings(max_examples=400, deadline=None)
@given(answers)
def test_sanitize_never_raises_and_ok_means_usable(answer: str) -> None:
    result = sanitize(answer, "task_func", prompt="import os\ndef task_func(x):\n")
    assert isinstance(result.code, str)
    if result.ok:
        tree = ast.parse(result.code)
        assert any(
            isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            and node.name == "task_func"
            for node in tree.body
        )
    else:
        assert result.reason
