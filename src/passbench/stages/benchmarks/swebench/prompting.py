"""SWE-bench's official text prompts, built from a git directory, and the official patch extraction.

What SWE-bench's inference code does (`swebench/inference/make_datasets/` and `run_api.py`), and
what each function here reproduces:

- `create_text_dataset --file_source oracle` puts in the prompt the files the gold patch edits
  (`get_oracle_filenames`: `oracle_files`) and the readmes at the repository root
  (`ContextManager.get_readme_files`: `readme_files`), read from a clone checked out at the base
  commit with Python's `open()`. `read_at_commit` reads the same text straight from a git
  directory, without a working copy; `read_readmes` and `read_oracle_files` gather both.
- `prompt_style_3` (the default, used for the published `*_oracle` datasets) and `prompt_style_2`
  lay the issue, the numbered files and an example patch out as `text_prompt` does.
- The dataset's `text` column is the prompt stripped plus two newlines (`dataset_text`);
  `run_api.py` sends its first line as the system message and the rest as the user message
  (`chat_messages`).
- The answer's patch is `extract_diff` of the model's whole output (`extract_patch`): that string,
  untouched, is the prediction's `model_patch`.

Where the official tool fails an instance (the instance is then written with `text_inputs` null
and left out of the dataset), these functions raise: an oracle file missing at the base commit or
not UTF-8 text, or a gold patch that does not parse.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import overload

from passbench.core.errors import DatasetError, InputError

__all__ = [
    "DEV_NULL",
    "PATCH_EXAMPLE",
    "PROMPT_STYLES",
    "chat_messages",
    "dataset_text",
    "extract_patch",
    "list_at_commit",
    "oracle_files",
    "read_at_commit",
    "read_oracle_files",
    "read_readmes",
    "readme_files",
    "text_prompt",
]

#: `source_file` of a file the patch creates: the official tool "reads" it with
#: `open("/dev/null")`, so the prompt shows it as an empty file of that name.
DEV_NULL = "/dev/null"

#: `PATCH_EXAMPLE` of `create_instance.py`: the example patch every prompt style shows, verbatim
#: (its blank context lines hold one space).
PATCH_EXAMPLE = """--- a/file.py
+++ b/file.py
@@ -1,27 +1,35 @@
 def euclidean(a, b):
-    while b:
-        a, b = b, a % b
-    return a
+    if b == 0:
+        return a
+    return euclidean(b, a % b)
 
 
 def bresenham(x0, y0, x1, y1):
     points = []
     dx = abs(x1 - x0)
     dy = abs(y1 - y0)
-    sx = 1 if x0 < x1 else -1
-    sy = 1 if y0 < y1 else -1
-    err = dx - dy
+    x, y = x0, y0
+    sx = -1 if x0 > x1 else 1
+    sy = -1 if y0 > y1 else 1
 
-    while True:
-        points.append((x0, y0))
-        if x0 == x1 and y0 == y1:
-            break
-        e2 = 2 * err
-        if e2 > -dy:
+    if dx > dy:
+        err = dx / 2.0
+        while x != x1:
+            points.append((x, y))
             err -= dy
-            x0 += sx
-        if e2 < dx:
-            err += dx
-            y0 += sy
+            if err < 0:
+                y += sy
+                err += dx
+            x += sx
+    else:
+        err = dy / 2.0
+        while y != y1:
+            points.append((x, y))
+            err -= dx
+            if err < 0:
+                x += sx
+                err += dy
+            y += sy
 
+    points.append((x, y))
     return points"""  # noqa: W293 (the blank context lines are one space, as in the original)

_PREMISE = (
    "You will be provided with a partial code base and an issue statement explaining a problem "
    "to resolve."
)
_STYLE_2_INSTRUCTIONS = (
    "I need you to solve this issue by generating a single patch file that I can apply directly "
    "to this repository using git apply. Please respond with a single patch file in the "
    "following format."
)
_STYLE_3_EXPLANATION = (
    "Here is an example of a patch file. It consists of changes to the code base. It specifies "
    "the file names, the line numbers of each change, and the removed and added lines. A single "
    "patch file can contain changes to multiple files."
)
_STYLE_3_INSTRUCTIONS = (
    "I need you to solve the provided issue by generating a single patch file that I can apply "
    "directly to this repository using git apply. Please respond with a single patch file in "
    "the format shown above."
)


def _style_2(issue: str, readmes: str, code: str) -> list[str]:
    return [
        _PREMISE,
        "<issue>",
        issue,
        "</issue>",
        "<code>",
        readmes,
        code,
        "</code>",
        _STYLE_2_INSTRUCTIONS,
        "<patch>",
        PATCH_EXAMPLE,
        "</patch>",
    ]


def _style_3(issue: str, readmes: str, code: str) -> list[str]:
    return [
        _PREMISE,
        "<issue>",
        issue,
        "</issue>",
        "",
        "<code>",
        readmes,
        code,
        "</code>",
        "",
        _STYLE_3_EXPLANATION,
        "<patch>",
        PATCH_EXAMPLE,
        "</patch>",
        "",
        _STYLE_3_INSTRUCTIONS,
        "Respond below:",
    ]


_LAYOUTS: dict[str, Callable[[str, str, str], list[str]]] = {
    "style-2": _style_2,
    "style-3": _style_3,
}
#: The `--prompt_style` values of `create_text_dataset` that `text_prompt` builds.
PROMPT_STYLES: tuple[str, ...] = tuple(_LAYOUTS)


def text_prompt(
    instance_problem_statement: str,
    readmes: Mapping[str, str],
    files: Mapping[str, str],
    style: str = "style-3",
) -> str:
    """The prompt `create_text_dataset` stores as `text_inputs` for one instance: the issue, then
    the readmes and the files (path -> text) as numbered blocks, the example patch and the
    instructions of `style` ("style-3", the default of the published datasets, or "style-2")."""
    layout = _LAYOUTS.get(style)
    if layout is None:
        known = ", ".join(PROMPT_STYLES)
        raise InputError(
            f"unknown SWE-bench prompt style {style!r} (known: {known})", field="style"
        )
    parts = layout(instance_problem_statement, _code_text(readmes), _code_text(files))
    return "\n".join(parts)


def _code_text(files: Mapping[str, str]) -> str:
    # `make_code_text`: files in path order, every line numbered from 1 ("1 text"; a trailing
    # newline gives a last line that is just its number and a space), and the leading and
    # trailing newlines of the whole block stripped.
    blocks = "".join(
        f"[start of {path}]\n{_numbered(files[path])}\n[end of {path}]\n" for path in sorted(files)
    )
    return blocks.strip("\n")


def _numbered(content: str) -> str:
    return "\n".join(f"{number} {line}" for number, line in enumerate(content.split("\n"), 1))


def dataset_text(prompt: str) -> str:
    """The `text` column of the official text datasets (`extract_fields`): what the inference
    scripts send, before each appends its own newlines."""
    return prompt.strip() + "\n\n"


def chat_messages(text: str) -> tuple[str, str]:
    """(system, user) as `run_api.py` sends `text` to a chat model: the first line is the system
    message, the rest the user message. `run_api.py` first appends "\\n\\n" to the dataset text
    for OpenAI models and "\\n" for Claude 3 models."""
    system, _, user = text.partition("\n")
    return system, user


# --- the answer's patch ------------------------------------------------------------------------

# `extract_diff`: any <tag>...</tag> pair (tag names of word characters and hyphens), then any
# ``` fence whose optional language is followed at once by a newline. Tags are scanned before
# fences, each left to right without overlap.
_TAGGED = re.compile(r"<([\w-]+)>(.*?)</\1>", re.DOTALL)
_FENCED = re.compile(r"```(\w+)?\n(.*?)```", re.DOTALL)
_PATCH_LABELS = frozenset({"diff", "patch"})


@overload
def extract_patch(answer: str) -> str: ...
@overload
def extract_patch(answer: None) -> None: ...
def extract_patch(answer: str | None) -> str | None:
    """The `model_patch` SWE-bench's inference scripts record for `answer`: the body of the
    first <patch>/<diff> element or, failing that, of the first ```diff/```patch fence; else the
    body of the first other element or fence; else the answer up to its first "</s>". Bodies are
    returned as they are (no stripping); a missing answer stays missing."""
    if answer is None:
        return None
    blocks = [*_TAGGED.findall(answer), *_FENCED.findall(answer)]
    for label, body in blocks:
        if label in _PATCH_LABELS:
            return str(body)
    if blocks:
        return str(blocks[0][1])
    return answer.split("</s>", 1)[0]


# --- which files -------------------------------------------------------------------------------


def readme_files(list_files: Callable[[], Iterable[str]]) -> tuple[str, ...]:
    """The readmes the official prompt shows, from the repository's files (paths relative to its
    root, as `list_at_commit` gives them): the files at the root whose name starts with "readme"
    in any case (README.rst, readme.txt, README-dev.md, ...), in path order."""
    return tuple(
        sorted({p for p in list_files() if "/" not in p and p.lower().startswith("readme")})
    )


def oracle_files(patch: str) -> tuple[str, ...]:
    """The files `get_oracle_filenames` puts in the prompt for a gold `patch`, in the order the
    prompt shows them: the source side of every file the patch touches (modified, deleted or
    renamed: the old path), without its "a/" prefix. A file the patch creates contributes
    "/dev/null", once, as in the official tool (which then shows an empty "/dev/null" file).
    Raises `InputError` where unidiff, the official parser, rejects the patch."""
    return tuple(sorted({_without_prefix(source) for source in _DiffSources(patch).sources()}))


def _without_prefix(source: str) -> str:
    # `source_file.split("a/", 1)[-1]`: everything after the first "a/", wherever it is.
    return source.split("a/", 1)[-1]


# The line patterns of unidiff 1.0 (the official parser), which decide every entry's source file.
# Its 0.7 releases agree on well-formed git diffs and differ only on some malformed ones.
_GIT_HEADERS = (
    re.compile(r'^diff --git (?P<source>"?a/[^\t\n]+"?) (?P<target>"?b/[^\t\n]+"?)'),
    re.compile(r"^diff --git (?P<source>.*://[^\t\n]+) (?P<target>.*://[^\t\n]+)"),
    re.compile(r"^diff --git (?P<source>[^\t\n]+) (?P<target>[^\t\n]+)"),
)
_NEW_FILE = re.compile(r"^new file mode \d+$")
_DELETED_FILE = re.compile(r"^deleted file mode \d+$")
_MODE_OR_INDEX = re.compile(r"^(?:old mode \d+|new mode \d+|index [0-9a-f]+\.\.[0-9a-f]+ \d+)$")
_SOURCE = re.compile(r'^--- (?P<name>"?[^\t\n]*"?)')
_TARGET = re.compile(r'^\+\+\+ (?P<name>"?[^\t\n]*"?)')
_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_HUNK_LINE = re.compile(r"^[- +\\]|^[\r\n]")
_NO_NEWLINE = re.compile(r"^\\ No newline at end of file")
_BINARY = re.compile(
    r"^Binary files? (?P<source>[^\t]+?)(?:\t[\s0-9:+-]+)?"
    r"(?: and (?P<target>[^\t]+?)(?:\t[\s0-9:+-]+)?)? (?:differ|has changed)"
)


@dataclass
class _Entry:
    source: str
    target: str
    hunks: int = 0


class _DiffSources:
    """unidiff's `PatchSet` parse, reduced to what decides each entry's `source_file`: a
    "diff --git" line opens an entry (its source from that line, "/dev/null" after "new file
    mode"; the "---" line that follows does not change it), a "---"/"+++" pair outside a git
    header opens one too, and hunk bodies are consumed by their line counts so that a body line
    is never read as a header."""

    def __init__(self, patch: str) -> None:
        # Lines end at "\n" only, as unidiff reads them from a StringIO: a lone "\r" (or any
        # other character `str.splitlines` breaks at) stays inside its line.
        pieces = patch.split("\n")
        lines = [piece + "\n" for piece in pieces[:-1]] + ([pieces[-1]] if pieces[-1] else [])
        self._lines = iter(enumerate(lines, 1))
        self._entries: list[_Entry] = []
        self._current: _Entry | None = None
        self._in_header = False  # unidiff's `patch_info is not None`
        self._pending_source: str | None = None

    def sources(self) -> list[str]:
        for number, line in self._lines:
            self._line(number, line)
        return [entry.source for entry in self._entries]

    def _fail(self, number: int, what: str) -> InputError:
        return InputError(f"line {number} of the patch: {what}", field="patch")

    def _open(self, source: str, target: str) -> _Entry:
        entry = _Entry(source, target)
        self._entries.append(entry)
        return entry

    def _line(self, number: int, line: str) -> None:
        current = self._current
        header = next((m for m in (p.match(line) for p in _GIT_HEADERS) if m), None)
        if header is not None:
            self._pending_source = header["source"]
            self._current = self._open(header["source"], header["target"])
            self._in_header = True
        elif _NEW_FILE.match(line) or _DELETED_FILE.match(line):
            if current is None or not self._in_header:
                raise self._fail(number, "a file mode line outside a git header")
            if line.startswith("new"):
                current.source = DEV_NULL
            else:
                current.target = DEV_NULL
        elif current is not None and self._in_header and _MODE_OR_INDEX.match(line):
            pass
        elif source := _SOURCE.match(line):
            self._pending_source = source["name"]
            if current is not None and not self._in_header:
                self._current = None
        elif target := _TARGET.match(line):
            self._target(number, target["name"])
        elif hunk := _HUNK.match(line):
            self._in_header = False
            if current is None:
                raise self._fail(number, "a hunk outside a file")
            self._hunk(number, hunk)
            current.hunks += 1
        elif _NO_NEWLINE.match(line):
            if current is None or not current.hunks:
                raise self._fail(number, "a no-newline marker outside a hunk")
        elif line == "\n" and current is not None and current.hunks:
            pass
        else:
            self._info(number, line)

    def _target(self, number: int, name: str) -> None:
        current = self._current
        if current is not None:
            if current.target != name:
                raise self._fail(number, f"target {name} without its source")
            return
        if self._pending_source is None:
            raise self._fail(number, f"target {name} without a source")
        self._current = self._open(self._pending_source, name)
        self._in_header = False
        self._pending_source = None

    def _hunk(self, number: int, header: re.Match[str]) -> None:
        old_left = int(header[2]) if header[2] is not None else 1
        new_left = int(header[4]) if header[4] is not None else 1
        for line_number, line in self._lines:
            if not _HUNK_LINE.match(line):
                raise self._fail(line_number, "a hunk line expected")
            kind = line[0]
            if kind in "-\r\n ":
                old_left -= 1
            if kind in "+\r\n ":
                new_left -= 1
            if old_left < 0 or new_left < 0:
                raise self._fail(line_number, "a hunk longer than its header says")
            if old_left == 0 and new_left == 0:
                return
        raise self._fail(number, "a hunk shorter than its header says")

    def _info(self, number: int, line: str) -> None:
        if not self._in_header:
            self._current = None
            self._in_header = True
        if binary := _BINARY.match(line):
            source = binary["source"]
            self._pending_source = source
            if self._current is None:
                self._open(source, binary["target"] or source)
            self._in_header = False
            self._current = None
        elif line == "GIT binary patch\n":
            if self._current is None:
                raise self._fail(number, "a binary patch outside a file")
            self._in_header = False
            self._current = None


# --- reading the base commit -------------------------------------------------------------------


def list_at_commit(git_dir: Path, commit: str) -> list[str]:
    """Every file of the tree at `commit`, as paths relative to the repository root in git's
    order: regular files and symbolic links, not submodules. `git_dir` is a bare repository, a
    git directory, or a working copy holding one in ".git"."""
    listed = _git(git_dir, ["ls-tree", "-r", "-z", "--full-tree", _revision(commit)])
    if listed.returncode != 0:
        raise _unreadable(git_dir, commit, listed)
    paths = []
    for record in listed.stdout.split(b"\0"):
        meta, _, path = record.partition(b"\t")
        if meta.split(b" ")[1:2] == [b"blob"]:
            paths.append(os.fsdecode(path))
    return paths


def read_at_commit(git_dir: Path, commit: str, path: str) -> str | None:
    """The text of `path` at `commit` as the official tool reads it from a checkout with
    `open(path)`: symbolic links inside the repository followed, UTF-8, "\\r\\n" and "\\r" read
    as "\\n". None when no file is there (no such path, a directory, a dangling link or one
    that leaves the repository). Raises `DatasetError` when the file is not UTF-8 text, where
    the official tool fails the instance."""
    if "\n" in path:
        raise InputError(f"a path with a newline cannot be read from git: {path!r}", field="path")
    revision = _revision(commit)
    asked = f"{revision}:{path}\n".encode()
    done = _git(git_dir, ["cat-file", "--batch", "--follow-symlinks"], stdin=asked)
    if done.returncode != 0:
        raise _unreadable(git_dir, commit, done)
    header, _, rest = done.stdout.partition(b"\n")
    found = _FOUND.match(header)
    if found is not None:
        if found["type"] != b"blob":
            return None  # a directory or a submodule
        return _as_text(rest[: int(found["size"])], commit, path)
    if header.endswith(b" missing"):
        _check_commit(git_dir, revision)
    elif header.endswith(b" ambiguous"):
        raise DatasetError(f"{commit} is ambiguous in {git_dir}")
    # Otherwise a link that is dangling, loops, goes through a file or leaves the repository.
    return None


# `git cat-file --batch` on an object it found: "<object id> <type> <size>".
_FOUND = re.compile(rb"^[0-9a-f]{40,64} (?P<type>[a-z]+) (?P<size>[0-9]+)$")


def _as_text(data: bytes, commit: str, path: str) -> str:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise DatasetError(
            f"{path} at {commit} is not UTF-8 text ({error.reason} at byte {error.start}): the "
            "official create_text_dataset fails this instance and builds no prompt for it"
        ) from None
    return text.replace("\r\n", "\n").replace("\r", "\n")


def read_readmes(git_dir: Path, commit: str) -> dict[str, str]:
    """The readmes of the official prompt, path -> text, read at `commit`. A root entry named
    like a readme that is not a file (a link to a directory, a dangling link) is left out, as
    `os.path.isfile` leaves it out."""
    texts = {}
    for path in readme_files(lambda: list_at_commit(git_dir, commit)):
        text = read_at_commit(git_dir, commit, path)
        if text is not None:
            texts[path] = text
    return texts


def read_oracle_files(git_dir: Path, commit: str, patch: str) -> dict[str, str]:
    """The files of the official oracle prompt for the gold `patch`, path -> text at `commit`;
    "/dev/null" (a file the patch creates) is empty, as `open("/dev/null")` reads it. Raises
    `DatasetError` when a file is missing at `commit` or is not UTF-8 text: the official tool
    then fails the instance."""
    texts = {}
    for path in oracle_files(patch):
        text = "" if path == DEV_NULL else read_at_commit(git_dir, commit, path)
        if text is None:
            raise DatasetError(
                f"{path}, which the gold patch edits, is not a file at {commit} in {git_dir}: "
                "the official create_text_dataset fails this instance and builds no prompt for it"
            )
        texts[path] = text
    return texts


def _revision(commit: str) -> str:
    if not commit or commit.startswith("-") or any(c.isspace() for c in commit):
        raise InputError(f"not a commit: {commit!r}", field="base_commit")
    return f"{commit}^{{commit}}"


def _check_commit(git_dir: Path, revision: str) -> None:
    found = _git(git_dir, ["cat-file", "-e", revision])
    if found.returncode != 0:
        raise _unreadable(git_dir, revision.removesuffix("^{commit}"), found)


def _unreadable(
    git_dir: Path, commit: str, done: subprocess.CompletedProcess[bytes]
) -> DatasetError:
    said = done.stderr.decode("utf-8", "replace").strip().splitlines()
    why = said[-1] if said else f"git exited with {done.returncode}"
    return DatasetError(f"cannot read commit {commit} in {git_dir}: {why}")


def _git(
    git_dir: Path, args: list[str], stdin: bytes | None = None
) -> subprocess.CompletedProcess[bytes]:
    # No user or system configuration and none of the caller's GIT_* variables, so the bytes
    # read are the commit's, whatever the machine's git setup says.
    env = {"PATH": os.environ.get("PATH", os.defpath), "LC_ALL": "C"}
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull)
    if "HOME" in os.environ:
        env["HOME"] = os.environ["HOME"]
    directory = git_dir / ".git" if (git_dir / ".git").is_dir() else git_dir
    return subprocess.run(
        ["git", "--git-dir", str(directory), *args],
        input=stdin,
        stdin=None if stdin is not None else subprocess.DEVNULL,
        capture_output=True,
        env=env,
        check=False,
    )
