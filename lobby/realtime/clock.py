"""The game clock: one task per server process, for the whole life of the process (started and stopped by the
ASGI lifespan in config/asgi.py), so a process closes due questions from the moment it is up, whether or not
anyone is connected to it. The clocks of all processes race to close due questions; the compare-and-set in
`question_close` lets exactly one of them win."""

import asyncio
import contextlib
import logging

from channels.db import database_sync_to_async
from django.conf import settings
from django.db import InterfaceError, OperationalError

from core import collector
from core.cancellation import stop_if_cancelled
from lobby.services import close_due_questions, resume_after_outage, writing_tick

logger = logging.getLogger(__name__)

CLOCK_TASK_NAME = "game-clock"

_clock: asyncio.Task | None = None


def clock_start() -> bool:
    """Start this process's clock on the running loop. False, and nothing started, if it already runs."""
    global _clock
    if _clock is not None and not _clock.done() and _clock.get_loop().is_running():
        return False
    _clock = asyncio.get_running_loop().create_task(_run(), name=CLOCK_TASK_NAME)
    return True


async def clock_stop() -> None:
    """Stop the clock that runs on this loop, and wait until it has."""
    global _clock
    task = _clock
    if task is None or task.get_loop() is not asyncio.get_running_loop():
        return
    _clock = None
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task


async def _run() -> None:
    tick = database_sync_to_async(close_due_questions, thread_sensitive=False)
    resume = database_sync_to_async(resume_after_outage, thread_sensitive=False)
    writing = database_sync_to_async(writing_tick, thread_sensitive=False)
    outage = False
    while True:
        try:
            # The process's collector pauses into its metrics, each tick: first, as it needs no database.
            collector.flush_pauses()
            if outage:
                extended = await resume()
                logger.warning("database reachable again; %d open question(s) given more time", extended)
                outage = False
            await tick()
            await writing()
        except asyncio.CancelledError:
            raise
        except (OperationalError, InterfaceError):
            stop_if_cancelled()
            if not outage:
                logger.warning("database unreachable: the game clock is paused")
            outage = True
        except Exception:
            stop_if_cancelled()
            # Nothing must stop the clock (but a cancel): the next tick tries again.
            logger.exception("game clock tick failed")
        await asyncio.sleep(settings.GAME_CLOCK_INTERVAL)
