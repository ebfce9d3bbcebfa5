"""A server process died with players on it: their open questions get back the time its loss took.

Its players' sockets closed with it; they reconnect to a survivor with their tokens (static/js/live.js) within a
few seconds, and a question near its end would have closed meanwhile, their answers refused as too late for time
the outage took, not them. So every process says, in its beat (core/processes.py), which rooms it holds player
sockets of; the survivor that sees it die moves back the deadline of each of those rooms' open questions by the
time the process was silent (at most ROOM_MAX_TIMER) plus LOST_PROCESS_GRACE_SECONDS (the time a page takes to
come back), once, as the heal after a Redis outage gives a question back the outage's time (lobby/realtime/heal.py). A
room event tells everyone the new deadline. A room between questions is left alone, and so is a question that reached
its deadline before the death was seen (within a beat, 1 s, on the same host): the clock has closed it.
"""

import logging
from datetime import timedelta

from channels.db import database_sync_to_async
from django.conf import settings
from django.db import transaction
from django.db.models import F

from core import processes
from lobby import events
from lobby.models import Room
from lobby.realtime import heal
from lobby.rules.machine import Phase

logger = logging.getLogger(__name__)


def rooms_held() -> list[int]:
    """The rooms this process (this event loop) holds player sockets of."""
    return sorted({s.room_id for s in list(heal.tracked()) if s.room_id is not None and s.role == "player"})


def questions_give_back(*, room_ids: list[int], seconds: float) -> list[int]:
    """Move back the deadline of each of these rooms' open question by `seconds`. The rooms moved.

    Each room in a transaction of its own: holding every room's row at once deadlocked with the answer batches and
    the clock, which lock rooms as they come (seen in a host-loss bench run), and the give-back was lost with it."""
    moved = []
    for room_id in sorted(room_ids):
        with transaction.atomic():
            if Room.objects.filter(pk=room_id, phase=Phase.QUESTION).update(
                deadline=F("deadline") + timedelta(seconds=seconds), seq=F("seq") + 1
            ):
                moved.append(room_id)
                events.room_changed(room_id=room_id)
    return moved


async def _process_died(client, name: str, silent: float, held: object) -> None:
    if not isinstance(held, list) or not held:
        return
    room_ids = [r for r in held if isinstance(r, int) and not isinstance(r, bool)]
    # Never more than a whole question's time: after a long outage of every process a question is not reopened.
    seconds = min(silent, settings.ROOM_MAX_TIMER) + settings.LOST_PROCESS_GRACE_SECONDS
    moved = await database_sync_to_async(questions_give_back, thread_sensitive=False)(
        room_ids=room_ids, seconds=seconds
    )
    if moved:
        logger.warning("gave %d open question(s) of %s's players %.1f s back", len(moved), name, seconds)


processes.subscribe("rooms", holds=rooms_held, on_death=_process_died)
