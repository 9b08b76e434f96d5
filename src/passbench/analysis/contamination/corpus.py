"""A corpus for the overlap check, read once as a stream of text chunks, hashed as it is read.

A corpus is one or more paths: a JSONL file (`.jsonl`, `.ndjson`: one JSON object a line whose
`content` or `text` field, or the field named, is a document, as StarCoderData and The Stack
ship them), any other file (plain text: the whole file is one document), or a folder whose
files are read recursively by the same rule (hidden files and folders and files with a NUL
byte in their first block, i.e. binaries, are skipped). A `.gz` file is read decompressed
(`c.jsonl.gz` is JSONL).

Memory stays bounded whatever the corpus size: a text file is read in blocks of CHUNK_BYTES
cut at a newline (or, for a line longer than that, at a whitespace byte), a JSONL file one
record at a time. What is held at once is one block or one record.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from fnmatch import fnmatch
from pathlib import Path
from typing import Protocol

from passbench.core.errors import InputError

#: Bytes of a text file read at a time.
CHUNK_BYTES = 1 << 20
JSONL_SUFFIXES = (".jsonl", ".ndjson")
#: The fields a JSONL record's document is taken from, in this order, unless one is named.
DEFAULT_FIELDS = ("content", "text")
_WHITESPACE = (b" ", b"\t", b"\r", b"\x0b", b"\x0c")


class Hasher(Protocol):
    def update(self, data: bytes, /) -> None: ...


@dataclass(frozen=True)
class Chunk:
    """A piece of one document: `text` starts at line `first_line` of the file (text) or of
    the record's document (JSONL, whose record is on line `record` of the file)."""

    path: str
    record: int | None
    first_line: int
    text: str
    continues: bool  # the same document as the previous chunk (a long text file)
    size: int  # bytes of the corpus this chunk consumed


@dataclass(frozen=True)
class CorpusFile:
    path: Path
    name: str  # as shown and hashed: the path given, or the folder given / relative path
    jsonl: bool
    gzip: bool = False  # `.gz`: read through gzip (`c.jsonl.gz` is JSONL)


def corpus_files(paths: Sequence[Path], include: Sequence[str] = ()) -> list[CorpusFile]:
    """Every file of the corpus: the paths in the order given, a folder's files sorted by
    their relative path; InputError naming a missing path.
    `include`: shell patterns (`*.py`) a file in a folder must match one of (none: all)."""
    files: list[CorpusFile] = []
    for given in paths:
        if given.is_dir():
            found: list[CorpusFile] = []
            for folder, dirs, names in os.walk(given):
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                for name in sorted(names):
                    if name.startswith(".") or (
                        include and not any(fnmatch(name, pattern) for pattern in include)
                    ):
                        continue
                    path = Path(folder) / name
                    if path.is_file():
                        found.append(_file(path, str(given / path.relative_to(given))))
            files.extend(sorted(found, key=lambda file: file.path.relative_to(given).parts))
        elif given.is_file():
            files.append(_file(given, str(given)))
        else:
            raise InputError("no such file or folder", path=given, field="--corpus")
    return files


def _file(path: Path, name: str) -> CorpusFile:
    lower = path.name.lower()
    compressed = lower.endswith(".gz")
    return CorpusFile(path, name, lower.removesuffix(".gz").endswith(JSONL_SUFFIXES), compressed)


class _Reader(AbstractContextManager["_Reader"]):
    """A corpus file's (decompressed) bytes, and how many bytes of the file itself have been
    consumed since the last call to `consumed` (progress counts the file's own bytes)."""

    def __init__(self, file: CorpusFile) -> None:
        self._stack = contextlib.ExitStack()
        self._raw = self._stack.enter_context(file.path.open("rb"))
        self.handle: io.BufferedIOBase = self._raw
        if file.gzip:
            self.handle = self._stack.enter_context(gzip.GzipFile(fileobj=self._raw, mode="rb"))
        self._reported = 0

    def consumed(self) -> int:
        position = self._raw.tell()
        done, self._reported = position - self._reported, position
        return done

    def __exit__(self, *exc: object) -> None:
        self._stack.close()


def _cannot_read(file: CorpusFile, error: Exception) -> InputError:
    why = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
    return InputError(f"cannot read: {why}", path=file.name)


def read_chunks(
    files: Sequence[CorpusFile],
    hasher: Hasher,
    field: str | None = None,
    on_skip: Callable[[str, str], None] = lambda name, why: None,
) -> Iterator[Chunk]:
    """The corpus's chunks in order. Every byte read goes into `hasher`, after the file's name
    and a NUL, so the hash covers names and contents. A bad JSONL line is an InputError naming
    the file and line; a skipped (binary) file goes to `on_skip(name, reason)`."""
    for file in files:
        hasher.update(file.name.encode("utf-8", "surrogateescape") + b"\0")
        if file.jsonl:
            yield from _jsonl_chunks(file, hasher, field)
        else:
            yield from _text_chunks(file, hasher, on_skip)


def _text_chunks(
    file: CorpusFile, hasher: Hasher, on_skip: Callable[[str, str], None]
) -> Iterator[Chunk]:
    line = 1
    continues = False
    pending = b""
    try:
        with _Reader(file) as reader:
            while True:
                block = reader.handle.read(CHUNK_BYTES)
                if not continues and not pending and b"\0" in block[:8192]:
                    on_skip(file.name, "binary (a NUL byte in its first 8 KiB)")
                    return
                hasher.update(block)
                data = pending + block
                if not block:
                    cut = len(data)
                else:
                    cut = _cut(data)
                    if cut == 0:  # no whitespace yet: one huge token, read on
                        pending = data
                        continue
                if cut == 0:
                    return
                piece, pending = data[:cut], data[cut:]
                text = piece.decode("utf-8", errors="replace")
                yield Chunk(file.name, None, line, text, continues, reader.consumed())
                line += piece.count(b"\n")
                continues = True
                if not block:
                    return
    except (OSError, EOFError) as error:  # EOFError: a truncated .gz
        raise _cannot_read(file, error) from None


def _cut(data: bytes) -> int:
    """Where to end a chunk: after the last newline, else after the last whitespace byte
    (never inside a token or a UTF-8 sequence); 0 when there is none."""
    cut = data.rfind(b"\n") + 1
    if cut:
        return cut
    return max(data.rfind(space) for space in _WHITESPACE) + 1


def _jsonl_chunks(file: CorpusFile, hasher: Hasher, field: str | None) -> Iterator[Chunk]:
    fields = (field,) if field else DEFAULT_FIELDS
    try:
        with _Reader(file) as reader:
            for number, raw in enumerate(reader.handle, 1):
                hasher.update(raw)
                if not raw.strip():
                    continue
                try:
                    record = json.loads(raw)
                except ValueError as error:
                    raise InputError(
                        f"not a JSON object: {error}", path=file.name, line=number
                    ) from None
                if not isinstance(record, dict):
                    raise InputError("not a JSON object", path=file.name, line=number)
                name = next((f for f in fields if f in record), None)
                if name is None:
                    raise InputError(
                        "missing (--field names the field that holds the document)",
                        path=file.name,
                        line=number,
                        field="/".join(fields),
                    )
                text = record[name]
                if not isinstance(text, str):
                    raise InputError(
                        f"expected text, got {type(text).__name__}",
                        path=file.name,
                        line=number,
                        field=name,
                    )
                yield Chunk(file.name, number, 1, text, False, reader.consumed())
    except (OSError, EOFError) as error:
        raise _cannot_read(file, error) from None
