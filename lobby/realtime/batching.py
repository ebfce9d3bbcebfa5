"""Group commit: many connections' writes of one kind, gathered into one call.

While one call is writing, what arrives waits and goes in the next call together. An idle server writes each
item at once (no timer, no added wait); a busy one writes tens in one transaction instead of tens of
transactions, each of which would hold a database thread (and the GIL) for several round trips.

Work that must follow a write but that its callers need not wait for (counting, closing questions) goes in
`after`: it runs once the callers have their results, before the next write (one database thread per
process does all of it, so it does not compete with the event loop for the GIL from two threads). While writes
keep coming it runs for several batches at once: when nothing more is waiting to be written, or `after_every`
seconds after it last ran. A room of 10,000 answering within a second counted its answers after each batch of 200,
two scans of the room each time, while the next batch waited (issue 47); the host's count is drawn at most four
times a second anyway, and the last answer's batch, with nothing behind it, is counted at once."""

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
        after_every: float = 0.25,
    ):
        self.write = write
        self.after = after
        self.max_batch = max_batch
        self.after_every = after_every
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
        loop = asyncio.get_running_loop()
        waiting: list = []  # results written but not yet followed up
        followed_at = loop.time()
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
            if self.after is None:
                continue
            waiting.extend(result for result in results if not isinstance(result, BaseException))
            if waiting and (not queue.pending or loop.time() - followed_at >= self.after_every):
                followed, waiting, followed_at = waiting, [], loop.time()
                try:
                    await self.after(followed)
                except Exception:
                    # The results were delivered; a failed follow-up is logged and must not stop later batches.
                    logger.exception("follow-up of a group commit failed")
