"""How library code reports progress: one small interface that only the CLI renders."""

from __future__ import annotations

from typing import Protocol


class Progress(Protocol):
    """Receives progress from long work. Library code never prints; it calls these."""

    def start(self, total: int, description: str) -> None: ...

    def advance(self, n: int = 1, *, info: str = "") -> None: ...

    def warn(self, message: str) -> None: ...

    def finish(self) -> None: ...


class NullProgress:
    """Progress that goes nowhere (library use, tests)."""

    def start(self, total: int, description: str) -> None:
        pass

    def advance(self, n: int = 1, *, info: str = "") -> None:
        pass

    def warn(self, message: str) -> None:
        pass

    def finish(self) -> None:
        pass
