"""Time bounds that hold on a loaded machine.

A test that bounds how long something took says what the work itself must take (a deadline, latencies in waves)
and adds what the same kind of work costs on this machine right now, measured in the same test: a clean run of
the same call (`timed`), or how late a timer fires (`wake_lateness`). Never a fixed number of seconds of slack:
on a shared 2-core machine under load, any fixed slack is sometimes too small.
"""

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")


async def timed(make: Callable[[], Awaitable[T]]) -> tuple[T, float]:
    """The result of awaiting `make()` and the seconds it took."""
    started = time.monotonic()
    result = await make()
    return result, time.monotonic() - started


async def wake_lateness(delay: float = 0.05, *, samples: int = 3) -> float:
    """How much later than asked an asyncio timer of `delay` seconds fires on this machine now (the worst of
    `samples`): what each wait on a timer costs beyond its own length while the machine is this busy."""
    worst = 0.0
    for _ in range(samples):
        started = time.monotonic()
        await asyncio.sleep(delay)
        worst = max(worst, time.monotonic() - started - delay)
    return worst


def sleep_lateness(delay: float = 0.05, *, samples: int = 3) -> float:
    """`wake_lateness` for a thread: how late `time.sleep(delay)` returns on this machine now."""
    worst = 0.0
    for _ in range(samples):
        started = time.monotonic()
        time.sleep(delay)
        worst = max(worst, time.monotonic() - started - delay)
    return worst
