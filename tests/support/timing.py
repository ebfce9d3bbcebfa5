"""Time bounds that hold on a loaded machine.

A test that bounds how long something took says what the work itself must take (a deadline, latencies in waves)
and adds what the same kind of work costs on this machine right now, measured in the same test: a clean run of
the same call (`timed`), and how late this loop's timers fire while the work runs (`LoopLag`). Never a fixed
number of seconds of slack: on a shared 2-core machine under load, any fixed slack is sometimes too small.
"""

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")


async def timed(make: Callable[[], Awaitable[T]]) -> tuple[T, float]:
    """The result of awaiting `make()` and the seconds it took."""
    started = time.monotonic()
    result = await make()
    return result, time.monotonic() - started


class LoopLag:
    """How late this event loop's timers fire while the work measured runs beside it: a sampler wakes every
    `every` seconds and keeps the worst lateness (`worst`). A busy machine delays the work's own deadline timer by
    about as much, so a bound that allows twice `worst` follows the load of that very moment, bursts and all.

        async with LoopLag() as lag:
            await work()
        assert wall <= deadline + 2 * baseline + 2 * lag.worst
    """

    def __init__(self, every: float = 0.02) -> None:
        self.every = every
        self.worst = 0.0
        self._task: asyncio.Task | None = None

    async def _sample(self) -> None:
        while True:
            started = time.monotonic()
            await asyncio.sleep(self.every)
            self.worst = max(self.worst, time.monotonic() - started - self.every)

    async def __aenter__(self) -> "LoopLag":
        self._task = asyncio.get_running_loop().create_task(self._sample())
        return self

    async def __aexit__(self, *exc) -> None:
        assert self._task is not None
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task
