"""Cut a region of text into top-level Python statements, even when it does not parse as a whole.

A region (a fenced block, or a whole unfenced answer) is parsed at once when it can be. When it
cannot (prose between the statements, a truncated last function, a starter-code fragment without
a body), it is cut into chunks at the lines that begin a top-level statement: a line at column 0
that is not a comment and does not continue the statement before it (`else`, `except`, a closing
bracket) and does not follow a decorator. Each chunk is parsed alone; a chunk that fails in a way
that more text could mend (an open bracket or triple-quoted string, a missing block) is retried
joined with up to `MERGE_LIMIT` following chunks; one that fails otherwise is dropped, unless its
indented lines parse on their own (code indented under a line of prose). Every chunk is therefore
parsed a bounded number of times, which keeps the cost linear in the region's length.
"""

from __future__ import annotations

import ast
import textwrap
import warnings
from dataclasses import dataclass

from passbench.stages.sanitize.strings import TripleState, after_line

#: How many following chunks a chunk that ends inside an open construct may be joined with.
MERGE_LIMIT = 12

_CONTINUATION_WORDS = frozenset({"else", "elif", "except", "finally"})
# Error messages that more text after the chunk could cure.
_INCOMPLETE_MESSAGES = (
    "never closed",
    "unterminated triple-quoted",
    "expected an indented block",
    "unexpected eof",
    "eof while",
    "incomplete input",
)


@dataclass(frozen=True)
class Unit:
    """One top-level statement of an answer."""

    node: ast.stmt
    source: str  # its source text, starting at column 0
    region: int  # which region (code block) of the answer it came from
    position: int  # order in the whole answer


def parse(text: str) -> ast.Module | SyntaxError:
    """`ast.parse`, with every way it can refuse turned into a SyntaxError value."""
    try:
        with warnings.catch_warnings():
            # Answers are full of "invalid escape sequence" and the like: noise, not news.
            warnings.simplefilter("ignore")
            return ast.parse(text)
    except SyntaxError as error:
        return error
    except (ValueError, RecursionError, MemoryError) as error:  # null bytes, deep nesting
        return SyntaxError(str(error) or type(error).__name__)


def split_units(text: str, region: int, first_position: int) -> list[Unit]:
    """The top-level statements of `text` that parse, in order."""
    tree = parse(text)
    if isinstance(tree, ast.Module):
        return _units(tree, text.split("\n"), region, first_position)
    units: list[Unit] = []
    _parse_chunks(text.split("\n"), region, first_position, units, follow_strings=True)
    return units


def _parse_chunks(
    lines: list[str], region: int, first_position: int, units: list[Unit], *, follow_strings: bool
) -> None:
    """Append the statements of `lines` that parse, chunk by chunk, to `units`.

    With `follow_strings`, a column-0 line inside a triple-quoted string does not start a
    chunk; a chunk so glued that still fails is cut again without that rule (the quote
    tracking may have been fooled by prose).
    """
    chunks = _chunks(lines, follow_strings=follow_strings)
    index = 0
    while index < len(chunks):
        start, end = chunks[index]
        chunk_text = "\n".join(lines[start:end])
        result = parse(chunk_text)
        consumed = 1
        if isinstance(result, SyntaxError) and _may_continue(result, chunk_text):
            for extra in range(1, min(MERGE_LIMIT, len(chunks) - index - 1) + 1):
                merged_text = "\n".join(lines[start : chunks[index + extra][1]])
                merged = parse(merged_text)
                if isinstance(merged, ast.Module):
                    result, chunk_text, consumed = merged, merged_text, extra + 1
                    break
                if not _may_continue(merged, merged_text):
                    break
        if isinstance(result, SyntaxError):
            result, chunk_text = _indented_rescue(lines[start:end])
        if isinstance(result, ast.Module):
            positions = first_position + len(units)
            units.extend(_units(result, chunk_text.split("\n"), region, positions))
        elif follow_strings and end - start > 1:
            _parse_chunks(lines[start:end], region, first_position, units, follow_strings=False)
        index += consumed


def _chunks(lines: list[str], *, follow_strings: bool) -> list[tuple[int, int]]:
    """[start, end) line ranges, each beginning where a top-level statement may begin."""
    starts: list[int] = [0]
    after_decorator = False
    state: TripleState = None
    for number, line in enumerate(lines):
        inside_string = state is not None
        if follow_strings:
            state = after_line(line, state)
        if inside_string or not line or line[0] in " \t#" or not line.strip():
            continue
        begins = number > 0 and not after_decorator and not _continues(line)
        if begins and number != starts[-1]:
            starts.append(number)
        after_decorator = line.startswith("@")
    ends = [*starts[1:], len(lines)]
    return list(zip(starts, ends, strict=True))


def _continues(line: str) -> bool:
    if line[0] in ")]}":
        return True
    word = line.split(maxsplit=1)[0].rstrip(":")
    return word in _CONTINUATION_WORDS


def _may_continue(error: SyntaxError, text: str) -> bool:
    message = (error.msg or "").lower()
    return text.rstrip().endswith("\\") or any(part in message for part in _INCOMPLETE_MESSAGES)


def _indented_rescue(lines: list[str]) -> tuple[ast.Module | SyntaxError, str]:
    """Parse code that sits indented under a line of prose, or indented as a whole."""
    candidates = []
    if lines and lines[0][:1] in (" ", "\t"):
        candidates.append(lines)
    if len(lines) > 1:
        candidates.append(lines[1:])
    error: ast.Module | SyntaxError = SyntaxError("no code")
    for candidate in candidates:
        joined = "\n".join(candidate)
        text = textwrap.dedent(joined)
        if text == joined:
            # Nothing was indented: the chunking already separated what could stand alone.
            continue
        result = parse(text)
        if isinstance(result, ast.Module):
            return result, text
        error = result
    return error, ""


def _units(tree: ast.Module, lines: list[str], region: int, first_position: int) -> list[Unit]:
    return [
        Unit(node=node, source=_source(node, lines), region=region, position=first_position + i)
        for i, node in enumerate(tree.body)
    ]


def _source(node: ast.stmt, lines: list[str]) -> str:
    """The statement's text; decorators included; column offsets are UTF-8 byte offsets."""
    first = node.lineno
    start_col = node.col_offset
    decorators = getattr(node, "decorator_list", None)
    if decorators:
        first = min(first, *(decorator.lineno for decorator in decorators))
        start_col = 0
    last = node.end_lineno if node.end_lineno is not None else node.lineno
    end_col = node.end_col_offset
    if first == last:
        line = lines[first - 1]
        return _cut(line, start_col, end_col)
    head = _cut(lines[first - 1], start_col, None)
    tail = _cut(lines[last - 1], 0, end_col)
    return "\n".join([head, *lines[first : last - 1], tail])


def _cut(line: str, start: int, end: int | None) -> str:
    if line.isascii():
        return line[start:end]
    return line.encode("utf-8")[start:end].decode("utf-8", errors="replace")
