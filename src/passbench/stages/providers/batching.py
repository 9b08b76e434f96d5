"""Gathering concurrent one-prompt calls into batches for local engines (vLLM, transformers).

The Provider protocol takes one prompt per call, and the runner makes many calls at once. A
local engine is fastest when it sees them all together, so its provider hands each call to a
`MicroBatcher`: calls that arrive while the engine is busy (or within `wait_s` of each other)
run as one batch, grouped by a key (calls with different sampling settings cannot share one
engine call). Batches run one at a time in a worker thread, so the event loop stays free.

`run` returns one result per item; a result that is an exception is raised to that item's caller
alone (one bad prompt must not fail the hundreds batched with it). An exception raised by `run`
itself reaches every caller of the batch. A batcher may serve several event loops one after the
other (each `asyncio.run` of a caller that reuses the provider): its loop-bound state is renewed.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

Item = TypeVar("Item")
Result = TypeVar("Result")


@dataclass
class _Waiting(Generic[Item, Result]):
    item: Item
    future: asyncio.Future[Result]


class MicroBatcher(Generic[Item, Result]):
    """`await batcher.submit(key, item)` -> that item's result from `run(key, items)`."""

    def __init__(
        self,
        run: Callable[[Hashable, Sequence[Item]], Sequence[Result | BaseException]],
        *,
        max_batch: int = 64,
        wait_s: float = 0.02,
    ) -> None:
        self._run = run
        self.max_batch = max_batch
        self.wait_s = wait_s
        self._pending: dict[Hashable, list[_Waiting[Item, Result]]] = {}
        self._worker: asyncio.Task[None] | None = None
        self._wake: asyncio.Event | None = None
        self._loop_of_state: asyncio.AbstractEventLoop | None = None
        self.batches_run = 0

    async def submit(self, key: Hashable, item: Item) -> Result:
        loop = asyncio.get_running_loop()
        if self._loop_of_state is not loop:
            # Calls left over from a closed loop can never be answered; start afresh here.
            self._loop_of_state, self._wake, self._worker = loop, asyncio.Event(), None
            self._pending.clear()
        assert self._wake is not None
        future: asyncio.Future[Result] = loop.create_future()
        self._pending.setdefault(key, []).append(_Waiting(item, future))
        self._wake.set()
        if self._worker is None or self._worker.done():
            self._worker = asyncio.create_task(self._loop())
        return await future

    async def _loop(self) -> None:
        assert self._wake is not None
        while self._pending:
            # let the other calls of this round arrive before starting a batch
            self._wake.clear()
            try:
                await asyncio.wait_for(self._wake.wait(), self.wait_s)
                if sum(len(group) for group in self._pending.values()) < self.max_batch:
                    continue
            except asyncio.TimeoutError:
                pass
            key = max(self._pending, key=lambda k: len(self._pending[k]))
            group = self._pending[key][: self.max_batch]
            rest = self._pending[key][self.max_batch :]
            if rest:
                self._pending[key] = rest
            else:
                del self._pending[key]
            group = [waiting for waiting in group if not waiting.future.cancelled()]
            if not group:
                continue
            try:
                results = await asyncio.to_thread(self._run, key, [w.item for w in group])
            except BaseException as error:
                for waiting in group:
                    if not waiting.future.done():
                        waiting.future.set_exception(error)
                if not isinstance(error, Exception):
                    raise
                continue
            self.batches_run += 1
            for waiting, result in zip(group, results, strict=True):
                if waiting.future.done():
                    continue
                if isinstance(result, BaseException):
                    waiting.future.set_exception(result)
                else:
                    waiting.future.set_result(result)
