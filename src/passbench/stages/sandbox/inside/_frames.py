"""Length-prefixed JSON frames: how the host, the worker and a sample's child talk over pipes.

A frame is a 4-byte big-endian length, then that many bytes of one JSON object. Both sides use
this one module: the runner in the sandbox loads it from its own folder (it runs without
passbench installed: standard library only, Python 3.8+), the host imports it from the package.

The functions bound here are taken when the module loads, before any sample runs, so a sample
that replaces `os.write` or `json.loads` in its own process does not change how its child
reports.
"""

from __future__ import annotations

import json
import os
import struct
from typing import Any

#: The length prefix.
HEADER = struct.Struct(">I")
#: Largest frame the worker or the host accepts (a verdict with its details fits).
MAX_FRAME = 64 * 1024 * 1024

_write = os.write
_read = os.read
_loads = json.loads
_dumps = json.dumps


def pack(payload: bytes) -> bytes:
    """One frame around an encoded JSON object."""
    return HEADER.pack(len(payload)) + payload


def encode(message: dict[str, Any]) -> bytes:
    """One frame holding `message` (ASCII JSON, so any text survives the pipe)."""
    return pack(_dumps(message, ensure_ascii=True).encode("ascii"))


def write_all(fd: int, data: bytes) -> None:
    """Write all of `data` to a blocking descriptor."""
    view = memoryview(data)
    while view:
        view = view[_write(fd, view) :]


def send(fd: int, message: dict[str, Any]) -> None:
    write_all(fd, encode(message))


def read_exact(fd: int, n: int) -> bytes:
    """Exactly `n` bytes from a blocking descriptor; EOFError when it closes first."""
    chunks = []
    while n:
        chunk = _read(fd, min(n, 1 << 20))
        if not chunk:
            raise EOFError
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def receive(fd: int, limit: int = MAX_FRAME) -> dict[str, Any]:
    """The next frame from a blocking descriptor. ValueError when it is not a JSON object of at
    most `limit` bytes, EOFError when the descriptor closes."""
    (size,) = HEADER.unpack(read_exact(fd, HEADER.size))
    if size > limit:
        raise ValueError(f"a message of {size} bytes")
    message = _loads(read_exact(fd, size))
    if type(message) is not dict:
        raise ValueError("a message that is not an object")
    return message


class FrameReader:
    """Frames from a non-blocking pipe, as they complete."""

    def __init__(self, limit: int = MAX_FRAME) -> None:
        self.buffer = bytearray()
        self.limit = limit

    def feed(self, chunk: bytes) -> list[dict[str, Any]]:
        """Complete frames so far. ValueError when the stream is not frames of JSON objects."""
        self.buffer += chunk
        frames = []
        while len(self.buffer) >= HEADER.size:
            (size,) = HEADER.unpack_from(self.buffer)
            if size > self.limit:
                raise ValueError(f"a message of {size} bytes")
            if len(self.buffer) < HEADER.size + size:
                break
            body = bytes(self.buffer[HEADER.size : HEADER.size + size])
            del self.buffer[: HEADER.size + size]
            message = _loads(body)
            if type(message) is not dict:
                raise ValueError("a message that is not an object")
            frames.append(message)
        return frames
