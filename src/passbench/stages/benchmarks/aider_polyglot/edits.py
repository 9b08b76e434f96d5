"""Aider's two edit formats, applied to an exercise's files as Aider applies a model's answer.

Facts from Aider-AI/aider (aider/coders/wholefile_coder.py, editblock_coder.py, base_coder.py
`apply_updates`); the code is passbench's own:

- whole ("whole"): each *file listing* is a file name alone on the line before an opening
  fence, the file's entire new text, and a closing fence. The name is cleaned of `*`, a
  trailing `:`, backquotes and leading `#`; a name that is not a chat file but whose base name
  is, is taken as that file; a listing without a name goes to the file the answer mentioned
  last in backquotes, or to the only chat file; with several chat files and neither, the
  answer is malformed ("No filename provided before ``` in file listing"). When several
  listings name one file, a named listing beats a mentioned one, which beats the only file.
- diff ("diff"): *SEARCH/REPLACE blocks* (`<<<<<<< SEARCH`, `=======`, `>>>>>>> REPLACE`, 5 to
  9 marks), each under a file name found in the three lines above it (fences skipped, matched
  exactly, by base name, then by `difflib` closeness 0.8); a block without one takes the
  previous block's file, and the first block without one is malformed. A SEARCH part is found
  exactly, then ignoring a uniform leading-whitespace offset, then without a spurious leading
  blank line, then with `...` elisions matched piece by piece; only the first match is
  replaced; an empty SEARCH appends (or makes a new file). A block that matches nowhere is
  tried on the other chat files; one that still matches nowhere makes the answer malformed
  (Aider: "SearchReplaceNoExactMatch"), and the blocks that matched stay applied.
  Shell-command fences (```bash, ...) are not edits.

Aider counts an answer as malformed when applying it raises (`num_malformed_responses`),
and then asks the model again with the error text ("reflection", up to 3 times in one try):
`malformed` is that text, word for word (the parse errors, and for SEARCH blocks that match
nowhere Aider's whole message, "Did you mean" lines included); the benchmark's
`sanitize_answers` applies a conversation's answers in turn, as Aider's files keep each edit.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import PurePosixPath

#: Aider's fences, in the order it tries them (base_coder.py `all_fences`)
FENCES: tuple[tuple[str, str], ...] = (
    ("```", "```"),
    ("````", "````"),
    *((f"<{name}>", f"</{name}>") for name in ("source", "code", "pre", "codeblock", "sourcecode")),
)
_SHELL_STARTS = tuple(
    "```" + name
    for name in (
        *("bash", "sh", "shell", "cmd", "batch", "powershell"),
        *("ps1", "zsh", "fish", "ksh", "csh", "tcsh"),
    )
)
_HEAD = re.compile(r"^<{5,9} SEARCH>?\s*$")
_DIVIDER = re.compile(r"^={5,9}\s*$")
_UPDATED = re.compile(r"^>{5,9} REPLACE\s*$")
_TRIPLE = "```"


class MalformedEdit(ValueError):
    """The answer does not follow the edit format (Aider's ValueError in `apply_updates`)."""


@dataclass(frozen=True)
class Applied:
    """An answer applied: every file's text after it (chat files and new ones, by the name the
    model saw), the files it changed, and Aider's error text when it was malformed."""

    files: Mapping[str, str]
    edited: tuple[str, ...] = ()
    malformed: str = ""
    blocks: int = 0  # edits found (listings or SEARCH/REPLACE blocks)
    notes: tuple[str, ...] = field(default=())


def choose_fence(contents: Mapping[str, str]) -> tuple[str, str]:
    """The first of Aider's fences that no line of the files starts with (base_coder.py
    `choose_fence`); the triple backquote when every one is taken."""
    lines = "\n".join(text + "\n" for text in contents.values()).splitlines()
    for opening, closing in FENCES:
        if not any(line.startswith(opening) or line.startswith(closing) for line in lines):
            return opening, closing
    return FENCES[0]


# ---- whole files ------------------------------------------------------------------------------


def _listing_name(line: str, chat_files: list[str]) -> str:
    name = line.strip().strip("*").rstrip(":").strip("`").lstrip("#").strip()
    if len(name) > 250:
        return ""
    if name and name not in chat_files and PurePosixPath(name).name in chat_files:
        return PurePosixPath(name).name
    return name


def parse_whole(
    answer: str, chat_files: list[str], fence: tuple[str, str]
) -> list[tuple[str, str]]:
    """(file name, new text) per file listing, in Aider's priority; MalformedEdit when a
    listing cannot be given a file."""
    lines = answer.splitlines(keepends=True)
    edits: list[tuple[str, str, list[str]]] = []
    saw: str | None = None
    name: str | None = None
    source = ""
    body: list[str] = []
    for index, line in enumerate(lines):
        if line.startswith(fence[0]) or line.startswith(fence[1]):
            if name is not None:  # a listing ends
                edits.append((name, source, body))
                saw, name, source, body = None, None, "", []
                continue
            name = ""
            if index > 0:
                source, name = "block", _listing_name(lines[index - 1], chat_files)
            if not name:
                if saw:
                    name, source = saw, "saw"
                elif len(chat_files) == 1:
                    name, source = chat_files[0], "chat"
                else:
                    raise MalformedEdit(f"No filename provided before {fence[0]} in file listing")
        elif name is not None:
            body.append(line)
        else:
            for word in line.strip().split():
                word = word.rstrip(".:,;!")
                for chat_file in chat_files:
                    if word == f"`{chat_file}`":
                        saw = chat_file
    if name:  # an unclosed last listing still counts
        edits.append((name, source, body))
    seen: set[str] = set()
    refined = []
    for wanted in ("block", "saw", "chat"):
        for fname, fsource, flines in edits:
            if fsource == wanted and fname not in seen:
                seen.add(fname)
                refined.append((fname, "".join(flines)))
    return refined


def apply_whole(answer: str, files: Mapping[str, str]) -> Applied:
    fence = choose_fence(files)
    chat_files = sorted(files)
    result = dict(files)
    try:
        edits = parse_whole(answer, chat_files, fence)
    except MalformedEdit as error:
        return Applied(result, malformed=str(error))
    for name, text in edits:
        result[name] = text
    return Applied(result, tuple(name for name, _ in edits), blocks=len(edits))


# ---- SEARCH/REPLACE blocks --------------------------------------------------------------------


def _strip_filename(line: str, fence: tuple[str, str]) -> str | None:
    line = line.strip()
    if line == "...":
        return None
    for opening in (fence[0], _TRIPLE):
        if line.startswith(opening):
            candidate = line[len(opening) :]
            return candidate if candidate and ("." in candidate or "/" in candidate) else None
    return line.rstrip(":").lstrip("#").strip().strip("`").strip("*") or None


def _find_filename(before: list[str], fence: tuple[str, str], valid: list[str]) -> str | None:
    names = []
    for line in reversed(before[-3:]):
        name = _strip_filename(line, fence)
        if name:
            names.append(name)
        if not line.startswith(fence[0]) and not line.startswith(_TRIPLE):
            break
    if not names:
        return None
    for name in names:
        if name in valid:
            return name
    for name in names:
        for candidate in valid:
            if name == PurePosixPath(candidate).name:
                return candidate
    for name in names:
        close = difflib.get_close_matches(name, valid, n=1, cutoff=0.8)
        if len(close) == 1:
            return close[0]
    for name in names:
        if "." in name:
            return name
    return names[0]


def parse_blocks(
    answer: str, fence: tuple[str, str], valid: list[str]
) -> list[tuple[str, str, str]]:
    """(file, SEARCH text, REPLACE text) per block; MalformedEdit at the first broken one."""
    lines = answer.splitlines(keepends=True)
    blocks = []
    current: str | None = None
    i = 0
    while i < len(lines):
        line = lines[i]
        next_is_block = any(
            i + k < len(lines) and _HEAD.match(lines[i + k].strip()) for k in (1, 2)
        )
        if line.strip().startswith(_SHELL_STARTS) and not next_is_block:
            i += 1
            while i < len(lines) and not lines[i].strip().startswith(_TRIPLE):
                i += 1
            i += 1
            continue
        if _HEAD.match(line.strip()):
            new_file = i + 1 < len(lines) and _DIVIDER.match(lines[i + 1].strip())
            name = _find_filename(lines[max(0, i - 3) : i], fence, [] if new_file else valid)
            if not name:
                if current is None:
                    raise MalformedEdit(
                        "".join(lines[: i + 1]) + "\n^^^ Bad/missing filename. The filename "
                        f"must be alone on the line before the opening fence {fence[0]}"
                    )
                name = current
            current = name
            search: list[str] = []
            i += 1
            while i < len(lines) and not _DIVIDER.match(lines[i].strip()):
                search.append(lines[i])
                i += 1
            if i >= len(lines):
                raise MalformedEdit("".join(lines) + "\n^^^ Expected `=======`")
            replace: list[str] = []
            i += 1
            while i < len(lines) and not (
                _UPDATED.match(lines[i].strip()) or _DIVIDER.match(lines[i].strip())
            ):
                replace.append(lines[i])
                i += 1
            if i >= len(lines):
                raise MalformedEdit(
                    "".join(lines) + "\n^^^ Expected `>>>>>>> REPLACE` or `=======`"
                )
            blocks.append((name, "".join(search), "".join(replace)))
        i += 1
    return blocks


def _with_newline(text: str) -> tuple[str, list[str]]:
    if text and not text.endswith("\n"):
        text += "\n"
    return text, text.splitlines(keepends=True)


def _perfect(whole: list[str], part: list[str], replace: list[str]) -> str | None:
    for i in range(len(whole) - len(part) + 1):
        if whole[i : i + len(part)] == part:
            return "".join(whole[:i] + replace + whole[i + len(part) :])
    return None


def _offset(whole: list[str], part: list[str]) -> str | None:
    """The one leading-whitespace string that makes `part` equal `whole`, or None."""
    if not all(w.lstrip() == p.lstrip() for w, p in zip(whole, part, strict=True)):
        return None
    added = {w[: len(w) - len(p)] for w, p in zip(whole, part, strict=True) if w.strip()}
    return added.pop() if len(added) == 1 else None


def _leading_whitespace(whole: list[str], part: list[str], replace: list[str]) -> str | None:
    leading: list[int] = [len(x) - len(x.lstrip()) for x in (*part, *replace) if x.strip()]
    cut = min(leading, default=0)
    if cut:
        part = [p[cut:] if p.strip() else p for p in part]
        replace = [p[cut:] if p.strip() else p for p in replace]
    for i in range(len(whole) - len(part) + 1):
        added = _offset(whole[i : i + len(part)], part)
        if added is None:
            continue
        replace = [added + r if r.strip() else r for r in replace]
        return "".join(whole[:i] + replace + whole[i + len(part) :])
    return None


def _exact_or_indented(whole: list[str], part: list[str], replace: list[str]) -> str | None:
    return _perfect(whole, part, replace) or _leading_whitespace(whole, part, replace)


def _dotdotdots(whole: str, part: str, replace: str) -> str | None:
    dots = re.compile(r"(^\s*\.\.\.\n)", re.MULTILINE | re.DOTALL)
    parts, replaces = re.split(dots, part), re.split(dots, replace)
    if len(parts) != len(replaces):
        raise ValueError("Unpaired ... in SEARCH/REPLACE block")
    if len(parts) == 1:
        return None
    if any(parts[i] != replaces[i] for i in range(1, len(parts), 2)):
        raise ValueError("Unmatched ... in SEARCH/REPLACE block")
    for piece, new in zip(parts[::2], replaces[::2], strict=True):
        if not piece and not new:
            continue
        if not piece:
            whole = (whole if whole.endswith("\n") else whole + "\n") + new
            continue
        if whole.count(piece) != 1:
            raise ValueError("ambiguous or missing ... piece")
        whole = whole.replace(piece, new, 1)
    return whole


def replace_chunk(whole_text: str, part_text: str, replace_text: str) -> str | None:
    """`whole_text` with the first match of `part_text` replaced (Aider's
    `replace_most_similar_chunk`, whose fuzzy edit-distance step Aider leaves switched off)."""
    whole_text, whole = _with_newline(whole_text)
    part_text, part = _with_newline(part_text)
    replace_text, replace = _with_newline(replace_text)
    done = _exact_or_indented(whole, part, replace)
    if done:
        return done
    if len(part) > 2 and not part[0].strip():
        done = _exact_or_indented(whole, part[1:], replace)
        if done:
            return done
    try:
        return _dotdotdots(whole_text, part_text, replace_text) or None
    except ValueError:
        return None


def _unwrap(text: str, fname: str, fence: tuple[str, str]) -> str:
    """A SEARCH or REPLACE part less a wrapping of file name and fence (`strip_quoted_wrapping`)."""
    if not text:
        return text
    lines = text.splitlines()
    if fname and lines[0].strip().endswith(PurePosixPath(fname).name):
        lines = lines[1:]
    if lines and lines[0].startswith(fence[0]) and lines[-1].startswith(fence[1]):
        lines = lines[1:-1]
    out = "\n".join(lines)
    return out + "\n" if out and not out.endswith("\n") else out


def _replace_in(
    files: Mapping[str, str], name: str, search: str, replace: str, fence: tuple[str, str]
) -> str | None:
    search, replace = _unwrap(search, name, fence), _unwrap(replace, name, fence)
    content = files.get(name)
    if content is None:
        if search.strip():
            return None
        content = ""  # a new file
    if not search.strip():
        return content + replace
    return replace_chunk(content, search, replace)


def apply_blocks(answer: str, files: Mapping[str, str]) -> Applied:
    fence = choose_fence(files)
    chat_files = sorted(files)
    result = dict(files)
    try:
        blocks = parse_blocks(answer, fence, chat_files)
    except MalformedEdit as error:
        return Applied(result, malformed=str(error))
    # the dry run on the files as they were picks each block's file (another chat file when
    # the named one has no match), then the blocks apply in order
    resolved = []
    for name, search, replace in blocks:
        target = name
        if _replace_in(files, name, search, replace, fence) is None and search.strip():
            for other in chat_files:
                if _replace_in(files, other, search, replace, fence) is not None:
                    target = other
                    break
        resolved.append((target, search, replace))
    edited: list[str] = []
    failed: list[tuple[str, str, str]] = []
    for name, search, replace in resolved:
        new = _replace_in(result, name, search, replace, fence)
        if not new and search.strip():
            for other in chat_files:  # Aider retries the other chat files here too
                new = _replace_in(result, other, search, replace, fence)
                if new:
                    name = other
                    break
        if new:
            result[name] = new
            edited.append(name)
        else:
            failed.append((name, search, replace))
    malformed = no_match_message(failed, len(blocks) - len(failed), result, fence) if failed else ""
    return Applied(result, tuple(dict.fromkeys(edited)), malformed, len(blocks))


def similar_lines(search: str, content: str, threshold: float = 0.6) -> str:
    """Aider's `find_similar_lines`: the lines of `content` most like `search` (as many, by
    difflib's ratio, at least `threshold`), with five lines either side unless the first and
    last lines match exactly; "" when nothing is that close."""
    wanted, lines = search.splitlines(), content.splitlines()
    best_ratio, best_at = 0.0, 0
    best: list[str] = []
    for at in range(len(lines) - len(wanted) + 1):
        chunk = lines[at : at + len(wanted)]
        ratio = difflib.SequenceMatcher(None, wanted, chunk).ratio()
        if ratio > best_ratio:
            best_ratio, best, best_at = ratio, chunk, at
    if best_ratio < threshold:
        return ""
    if best[0] == wanted[0] and best[-1] == wanted[-1]:
        return "\n".join(best)
    return "\n".join(lines[max(0, best_at - 5) : min(len(lines), best_at + len(wanted) + 5)])


def no_match_message(
    failed: list[tuple[str, str, str]],
    passed: int,
    files: Mapping[str, str],
    fence: tuple[str, str],
) -> str:
    """Aider's error text for SEARCH blocks that matched nowhere (editblock_coder.py
    `apply_edits`), word for word: what `diff` sends back to the model as its reflection."""
    plural = "block" if len(failed) == 1 else "blocks"
    text = f"# {len(failed)} SEARCH/REPLACE {plural} failed to match!\n"
    for name, search, replace in failed:
        content = files.get(name, "")
        text += (
            f"\n## SearchReplaceNoExactMatch: This SEARCH block failed to exactly match lines "
            f"in {name}\n<<<<<<< SEARCH\n{search}=======\n{replace}>>>>>>> REPLACE\n\n"
        )
        similar = similar_lines(search, content)
        if similar:
            text += (
                f"Did you mean to match some of these actual lines from {name}?\n\n"
                f"{fence[0]}\n{similar}\n{fence[1]}\n\n"
            )
        if replace and replace in content:
            text += (
                "Are you sure you need this SEARCH/REPLACE block?\n"
                f"The REPLACE lines are already in {name}!\n\n"
            )
    text += (
        "The SEARCH section must exactly match an existing block of lines including all white"
        " space, comments, indentation, docstrings, etc\n"
    )
    if passed:
        others = "block" if passed == 1 else "blocks"
        text += (
            f"\n# The other {passed} SEARCH/REPLACE {others} were applied successfully.\n"
            "Don't re-send them.\n"
            f"Just reply with fixed versions of the {plural} above that failed to match.\n"
        )
    return text


#: edit format -> how its answers are applied
APPLIERS = {"whole": apply_whole, "diff": apply_blocks}
