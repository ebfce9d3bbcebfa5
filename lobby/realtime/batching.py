"""Group commit: many connections' writes of one kind, gathered into one call.

While one call is writing, what arrives waits and goes in the next call together. An idle server writes each
item at once (no timer, no added wait); a busy one writes tens in one transaction instead of tens of
transactions, each of which would hold a database thread (and the GIL) for several round trips.

Work that must follow a write but that its callers need not wait for (counting, closing questions) goes in
`after`: it runs once the callers have their results, before the next write (one database thread per
process does all of it, so it does not compete with the event loop for the GIL from two threads)."""

import asyncio
import logging
import weakref
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

logger = logging.getLogger(__name__)


@dataclass
class _Queue:
    pending: list[tuple[Any, asyncio.Future]] = field(default_factory=list)
    writer: asyncio.Task | None = None


class GroupCommit:
    """`write(items)` returns one result per item, in order: a value for its caller, or an exception instance
    to raise in that caller. If `write` itself raises, every caller of that batch gets the exception."""

    def __init__(
        self,
        write: Callable[[Sequence[Any]], Awaitable[list]],
        *,
        after: Callable[[list], Awaitable[Any]] | None = None,
        max_batch: int = 200,
    ):
        self.write = write
        self.after = after
        self.max_batch = max_batch
        # One queue per event loop: a server process has one; tests start many.
        self._queues: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Queue] = weakref.WeakKeyDictionary()

    async def submit(self, item: Any) -> Any:
        loop = asyncio.get_running_loop()
        queue = self._queues.setdefault(loop, _Queue())
        future = loop.create_future()
        queue.pending.append((item, future))
        if queue.writer is None or queue.writer.done():
            queue.writer = loop.create_task(self._drain(queue))
        return await future

    async def _drain(self, queue: _Queue) -> None:
        while queue.pending:
            batch = queue.pending[: self.max_batch]
            del queue.pending[: len(batch)]
            try:
                results = await self.write([item for item, _ in batch])
            except Exception as error:  # noqa: BLE001 - handed to every caller of the batch
                results = [error] * len(batch)
            for (_, future), result in zip(batch, results, strict=True):
                if future.done():  # its caller went away (a closed connection)
                    continue
                if isinstance(result, BaseException):
                    future.set_exception(result)
                else:
                    future.set_result(result)
            if self.after is not None and not all(isinstance(r, BaseException) for r in results):
                try:
                    await self.after(results)
                except Exception:
                    # The results were delivered; a failed follow-up is logged and must not stop later batches.
                    logger.exception("follow-up of a group commit failed")
