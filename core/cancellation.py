"""Background loops that outlive a failure must still stop when cancelled.

A loop that catches a library's errors and tries again (the channel layer's watch, the socket registry, the game
clock) can lose its cancellation: the Redis client may answer a cancel that lands in the middle of a command
with an error of its own (seen once: the watch caught it as "Redis down", slept and went on, and the event loop
waited for it forever at shutdown). asyncio keeps the request on the task (Task.cancelling()), so after an
error is caught the loop asks whether it was cancelled meanwhile, and stops if so.

A cancel can also be lost with no error at all: whole runs of the suite found the watch and the heartbeat
"cancelling" but asleep on their next turn's wait, 10 s after the cancel, so the call before had returned as if
nothing had happened. Each loop therefore waits for its next turn with `next_turn`, which asks first."""

import asyncio


def stop_if_cancelled() -> None:
    """Raise CancelledError if the running task was asked to stop, whatever became of the exception."""
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError


async def next_turn(seconds: float) -> None:
    """Sleep until a loop's next turn, unless the running task was asked to stop (the request survived whatever
    the turn's calls did with it): then raise CancelledError."""
    stop_if_cancelled()
    await asyncio.sleep(seconds)
