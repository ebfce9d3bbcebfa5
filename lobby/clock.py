"""Each server process runs one clock task while it has connections. The tasks of all processes race to
close due questions; the compare-and-set in `question_close` lets exactly one of them win."""

import asyncio
import logging

from channels.db import database_sync_to_async
from django.conf import settings
from django.db import InterfaceError, OperationalError

from lobby.services import close_due_questions, resume_after_outage

logger = logging.getLogger(__name__)

_clocks: dict[asyncio.AbstractEventLoop, asyncio.Task] = {}
_users: dict[asyncio.AbstractEventLoop, int] = {}


def clock_acquire() -> None:
    loop = asyncio.get_running_loop()
    _users[loop] = _users.get(loop, 0) + 1
    task = _clocks.get(loop)
    if task is None or task.done():
        _clocks[loop] = loop.create_task(_run())


def clock_release() -> None:
    loop = asyncio.get_running_loop()
    _users[loop] = max(_users.get(loop, 1) - 1, 0)
    if _users[loop] == 0:
        task = _clocks.pop(loop, None)
        if task is not None:
            task.cancel()


async def _run() -> None:
    tick = database_sync_to_async(close_due_questions, thread_sensitive=False)
    resume = database_sync_to_async(resume_after_outage, thread_sensitive=False)
    outage = False
    while True:
        try:
            if outage:
                extended = await resume()
                logger.warning("database reachable again; %d open question(s) given more time", extended)
                outage = False
            await tick()
        except asyncio.CancelledError:
            raise
        except (OperationalError, InterfaceError):
            if not outage:
                logger.warning("database unreachable: the game clock is paused")
            outage = True
        except Exception:
            # Nothing must stop the clock: the next tick tries again.
            logger.exception("game clock tick failed")
        await asyncio.sleep(settings.GAME_CLOCK_INTERVAL)
