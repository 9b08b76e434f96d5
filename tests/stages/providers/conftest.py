"""Fixtures for provider tests: fake vendor servers on 127.0.0.1 and a recording Progress."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest

from passbench.stages.providers.retry import RetryPolicy

from .servers.openai_fake import OpenAIFake

#: Retries in tests wait milliseconds, not seconds; Retry-After from a server is still honoured.
FAST_RETRY = RetryPolicy(max_retries=3, base_s=0.01, max_s=0.05)


@dataclass
class RecordingProgress:
    started: list[tuple[int, str]] = field(default_factory=list)
    advanced: int = 0
    infos: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    finished: int = 0

    def start(self, total: int, description: str) -> None:
        self.started.append((total, description))

    def advance(self, n: int = 1, *, info: str = "") -> None:
        self.advanced += n
        self.infos.append(info)

    def warn(self, message: str) -> None:
        self.warnings.append(message)

    def finish(self) -> None:
        self.finished += 1


@pytest.fixture
def progress() -> RecordingProgress:
    return RecordingProgress()


@pytest.fixture
def openai_server() -> Iterator[OpenAIFake]:
    server = OpenAIFake(rejects={"o-reasoner": {"max_tokens", "temperature"}})
    yield server
    server.close()
