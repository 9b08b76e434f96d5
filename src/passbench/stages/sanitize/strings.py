"""Track whether a line of Python ends inside a triple-quoted string.

A docstring may hold lines that look like markdown fences or that start at column 0; both the
fence finder and the statement cutter must not split code there. This is a small scanner, not
a tokenizer: it knows comments, single-line strings with escapes and triple quotes, which is
all it takes to follow docstrings. Lines without quotes are skipped at C speed.
"""

from __future__ import annotations

TripleState = str | None  # '"""' or "'''" while inside a triple-quoted string, else None


def after_line(line: str, state: TripleState) -> TripleState:
    """The triple-quote state after `line`, given the state before it."""
    if state is None:
        if '"' not in line and "'" not in line:
            return None
    elif state not in line:
        return state
    index = 0
    length = len(line)
    while index < length:
        char = line[index]
        if state is not None:
            if char == "\\":
                index += 2
            elif line.startswith(state, index):
                state = None
                index += 3
            else:
                index += 1
            continue
        if char == "#":
            break
        if char in "\"'":
            if line.startswith(char * 3, index):
                state = char * 3
                index += 3
                continue
            index += 1
            while index < length and line[index] != char:
                index += 2 if line[index] == "\\" else 1
        index += 1
    return state
