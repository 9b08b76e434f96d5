"""Fixtures: the real benchmark data (PASSBENCH_DATA_DIR), a local HTTP file server and Aider's
polyglot benchmark for its test files."""

from __future__ import annotations

import functools
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from passbench.stages.benchmarks import DataSettings, get_benchmark
from passbench.stages.benchmarks.aider_polyglot.benchmark import AiderPolyglot

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture
def offline(data_dir: Path, tmp_path: Path) -> DataSettings:
    """Data from the shared folder only: an empty private cache and no downloads."""
    return DataSettings(data_dir=data_dir, cache_dir=tmp_path / "cache", download=False)


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


class FileServer:
    """A real HTTP server on 127.0.0.1 serving `root`; `requests` lists the paths asked for."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.requests: list[str] = []
        server_self = self

        class Handler(_QuietHandler):
            def do_GET(self) -> None:
                server_self.requests.append(self.path)
                super().do_GET()

        self._server = ThreadingHTTPServer(
            ("127.0.0.1", 0), functools.partial(Handler, directory=str(root))
        )
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()

    def put(self, url_path: str, data: bytes) -> None:
        target = self.root / url_path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()


@pytest.fixture
def file_server(tmp_path: Path) -> Iterator[FileServer]:
    server = FileServer(tmp_path / "served")
    server.root.mkdir()
    yield server
    server.close()


@pytest.fixture(scope="module")
def polyglot() -> AiderPolyglot:
    """Aider's polyglot benchmark, as the registry gives it."""
    benchmark = get_benchmark("aider-polyglot")
    assert isinstance(benchmark, AiderPolyglot)
    return benchmark
