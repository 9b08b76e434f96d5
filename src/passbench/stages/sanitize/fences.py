"""Find markdown code blocks in a model's answer, in one pass over its lines."""

from __future__ import annotations

from dataclasses import dataclass

from passbench.stages.sanitize.strings import TripleState, after_line

#: Info strings that mean Python (an unlabeled block counts too: models often omit the label).
PYTHON_LANGUAGES = frozenset({"", "python", "py", "python3", "py3", "ipython", "ipython3"})


@dataclass(frozen=True)
class Block:
    """One fenced code block."""

    language: str  # first word of the info string, lower case; "" when there is none
    code: str  # the lines between the fences, the fence's own indentation removed
    closed: bool  # False when the answer ended inside the block (a truncated answer)

    @property
    def is_python(self) -> bool:
        return self.language in PYTHON_LANGUAGES


def _opening(line: str) -> tuple[str, int, str] | None:
    """(fence, indentation, language) when `line` opens a block."""
    stripped = line.lstrip(" \t")
    if not stripped.startswith(("```", "~~~")):
        return None
    char = stripped[0]
    length = len(stripped) - len(stripped.lstrip(char))
    info = stripped[length:].strip()
    if char == "`" and "`" in info:  # inline code such as ```x```: not a block
        return None
    language = info.strip("{}").split(maxsplit=1)[0] if info.strip("{}") else ""
    language = language.split(",", 1)[0].lstrip(".").lower()
    return char * length, len(line) - len(stripped), language


def _closes(line: str, fence: str) -> bool:
    stripped = line.strip()
    return (
        len(stripped) >= len(fence)
        and stripped.startswith(fence)
        and stripped.count(fence[0]) == len(stripped)
    )


def _reopens(line: str, fence: str) -> bool:
    """A fence with an info string (```python) inside a Python block, where no code can
    start with backticks."""
    opening = _opening(line)
    return opening is not None and opening[0] == fence and opening[2] != ""


def _dedent(line: str, indentation: int) -> str:
    # CommonMark: content lines lose up to the opening fence's indentation.
    width = len(line) - len(line.lstrip(" "))
    return line[min(width, indentation) :]


def find_blocks(text: str) -> list[Block]:
    """Every fenced block in `text`, in order. A block left open runs to the end of the text.

    In a Python block a fence line inside a triple-quoted string (a docstring showing markdown)
    does not close the block. Should that leave the block open to the end of the text (the
    quote tracking was fooled), the block closes at that fence line after all, and quote
    tracking is off for the rest of the text, so no line is scanned more than twice.
    """
    blocks: list[Block] = []
    lines = text.split("\n")
    track_strings = True
    index = 0
    while index < len(lines):
        opening = _opening(lines[index])
        index += 1
        if opening is None:
            continue
        fence, indentation, language = opening
        tracking = track_strings and language in PYTHON_LANGUAGES
        state: TripleState = None
        first_line = index
        tentative: int | None = None  # a fence line seen inside a string
        closed_at: int | None = None
        while index < len(lines):
            line = lines[index]
            index += 1
            if _closes(line, fence):
                if state is None:
                    closed_at = index - 1
                    break
                if tentative is None:
                    tentative = index - 1
            elif state is None and tracking and _reopens(line, fence):
                # A new block opened before this one was closed: close it here and let the
                # outer loop open the next one from this line.
                closed_at = index - 1
                index -= 1
                break
            if tracking:
                state = after_line(line, state)
        if closed_at is None and tentative is not None:
            closed_at = tentative
            index = tentative + 1
            track_strings = False
        end = closed_at if closed_at is not None else len(lines)
        content = lines[first_line:end]
        if indentation:
            content = [_dedent(line, indentation) for line in content]
        blocks.append(
            Block(language=language, code="\n".join(content), closed=closed_at is not None)
        )
    return blocks
