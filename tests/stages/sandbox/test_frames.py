"""The one frame codec both sides use (inside/_frames.py): what one side writes, the other reads,
whole or in pieces, and a stream that is not frames of JSON objects is refused."""

from __future__ import annotations

import os

import pytest

from passbench.stages.sandbox.inside import _frames


def test_a_frame_sent_down_a_pipe_is_received_whole() -> None:
    read_fd, write_fd = os.pipe()
    try:
        _frames.send(write_fd, {"type": "cpu", "text": "é\u2028", "n": 3})
        assert _frames.receive(read_fd) == {"type": "cpu", "text": "é\u2028", "n": 3}
    finally:
        os.close(read_fd)
        os.close(write_fd)


def test_the_reader_returns_frames_only_when_complete() -> None:
    stream = _frames.encode({"a": 1}) + _frames.encode({"b": [2]})
    reader = _frames.FrameReader()
    assert reader.feed(stream[:3]) == []
    assert reader.feed(stream[3:7]) == []
    assert reader.feed(stream[7:]) == [{"a": 1}, {"b": [2]}]
    assert reader.feed(b"") == []


def test_too_large_or_not_an_object_is_refused() -> None:
    with pytest.raises(ValueError, match="bytes"):
        _frames.FrameReader(limit=4).feed(_frames.encode({"long": "x" * 10}))
    with pytest.raises(ValueError, match="not an object"):
        _frames.FrameReader().feed(_frames.pack(b"[1, 2]"))
    read_fd, write_fd = os.pipe()
    try:
        _frames.write_all(write_fd, _frames.pack(b"[1]"))
        with pytest.raises(ValueError, match="not an object"):
            _frames.receive(read_fd)
        os.close(write_fd)
        write_fd = -1
        with pytest.raises(EOFError):
            _frames.receive(read_fd)
    finally:
        os.close(read_fd)
        if write_fd >= 0:
            os.close(write_fd)
