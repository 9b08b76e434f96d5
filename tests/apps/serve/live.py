"""A real `passbench serve` on a loopback port, in a thread of the test process."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from passbench.apps.serve import ServeConfig, build_app


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@contextmanager
def running_server(config: ServeConfig) -> Iterator[str]:
    """Serve `config` (its port) until the block ends; yields the base URL."""
    import uvicorn

    runner = uvicorn.Server(
        uvicorn.Config(build_app(config), host="127.0.0.1", port=config.port, log_level="warning")
    )
    thread = threading.Thread(target=runner.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not runner.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the server did not start")
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{config.port}/"
    finally:
        runner.should_exit = True
        thread.join(30)
