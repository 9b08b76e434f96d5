"""A response cache on disk, so that re-running a generation costs nothing.

One row per sample, keyed by a hash of everything that determines it: provider, endpoint,
model, the requested parameters, the prompt, and the sample's index (sample 3 of a prompt is a
different draw from sample 2, and each must come back as itself on a re-run).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from passbench.core.errors import ProviderError

_SCHEMA = """
CREATE TABLE IF NOT EXISTS samples (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL,
    created REAL NOT NULL
)
"""


@dataclass(frozen=True)
class CachedSample:
    """The part of a Completion that does not depend on which task asked for it."""

    text: str
    finish_reason: str | None
    model: str
    params: Mapping[str, Any]
    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    latency_s: float
    reasoning: str = ""  # rows cached before reasoning was kept have none
    truncated: str = ""


def cache_key(
    *,
    provider: str,
    endpoint: str,
    model: str,
    params: Mapping[str, Any],
    prompt: Mapping[str, Any],
    sample_index: int,
) -> str:
    """A stable hex digest of the inputs (JSON with sorted keys, so dict order does not matter)."""
    payload = json.dumps(
        {
            "v": 1,
            "provider": provider,
            "endpoint": endpoint,
            "model": model,
            "params": params,
            "prompt": prompt,
            "sample_index": sample_index,
        },
        sort_keys=True,
        ensure_ascii=False,
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


class ResponseCache:
    """SQLite file of cached samples. Used from one thread (the event loop's); writes commit
    at once, so an interrupted run keeps everything it was answered."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute(_SCHEMA)
            self._db.commit()
        except sqlite3.Error as error:
            raise ProviderError(f"{self.path}: cannot open the response cache: {error}") from None

    def get(self, key: str) -> CachedSample | None:
        row = self._db.execute("SELECT value FROM samples WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        try:
            return CachedSample(**json.loads(row[0]))
        except (TypeError, ValueError):
            return None  # a row written by an incompatible version: generate it again

    def put_many(self, items: Iterable[tuple[str, CachedSample]]) -> None:
        now = time.time()
        rows = [(key, json.dumps(asdict(sample), ensure_ascii=False), now) for key, sample in items]
        with self._db:
            self._db.executemany(
                "INSERT OR REPLACE INTO samples (key, value, created) VALUES (?, ?, ?)", rows
            )

    def __len__(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM samples").fetchone()[0])

    def close(self) -> None:
        self._db.close()
