"""One subscription per room and process (issue 31).

Every socket of a room used to add its own channel to the room's group, so an event to a room was received from
the channel layer once per socket: 2,000 Redis messages (and 2,000 receives, decodes and picture look-ups) in a
process holding 2,000 players, 20 each for 50 rooms of 20. Now the first socket of a room in a process opens one
channel of the process's own and adds it to the room's group; one task reads each room event from it once, finds
the room's picture once (lobby/reads/standings.py) and hands event and picture to every local socket of the room,
which applies its own rules (`RoomConsumer.room_event`: nothing before its first full picture, nothing older
than the seq it holds, its own `you` part). The last socket to leave discards the channel and stops the task.

Only the room group goes through here. The host group and everything per connection stay on each consumer's own
channel. The heal after a channel-layer outage (lobby/realtime/heal.py) still delivers to each socket directly.
"""

import asyncio
import logging
import time
import weakref
from dataclasses import dataclass, field

from django.utils import translation

from core import metrics
from core.cancellation import stop_if_cancelled
from core.i18n import language_from_scope
from lobby import events
from lobby.reads import standings
from lobby.reads.selectors import room_picture
from lobby.realtime.game_db import db

logger = logging.getLogger(__name__)

RECEIVE_RETRY_SECONDS = 0.5  # after a failed receive (the channel layer away); the heal covers what is missed
# One socket's send may hold the room's loop in this process this long at most. A phone whose connection takes no
# more (its buffers full) is closed instead: it reconnects and gets the full picture, and the rest of its room
# gets the event without waiting for it. Under a second of a room's pace is already far too late for a frame.
SEND_SECONDS = 5.0


@dataclass(eq=False)
class Subscription:
    """One room's subscription in one process: its channel in the room's group and the task that reads it."""

    code: str
    layer: object
    sockets: set = field(default_factory=set)  # the RoomConsumers of this room in this process
    channel: str | None = None
    opened: asyncio.Task | None = None
    reader: asyncio.Task | None = None

    async def open(self) -> None:
        self.channel = await self.layer.new_channel("room.")
        await self.layer.group_add(events.room_group(self.code), self.channel)
        self.reader = asyncio.get_running_loop().create_task(self._read(), name=f"room-fanout-{self.code}")

    async def close(self) -> None:
        try:
            await asyncio.shield(self.opened)
        except Exception:
            return  # never subscribed
        self.reader.cancel()
        try:
            await self.layer.group_discard(events.room_group(self.code), self.channel)
        except Exception:
            # An outage: the group's entry expires (core layer) or went with the connection (pub/sub).
            logger.debug("could not leave the group of room %s", self.code, exc_info=True)

    async def _read(self) -> None:
        while True:
            try:
                message = await self.layer.receive(self.channel)
            except Exception:
                stop_if_cancelled()
                logger.warning("room %s: receive from the channel layer failed", self.code, exc_info=True)
                await asyncio.sleep(RECEIVE_RETRY_SECONDS)
                continue
            if message.get("type") != events.ROOM_STATE:
                continue
            try:
                await self.hand_out(message)
            except Exception:
                stop_if_cancelled()
                logger.exception("room %s: an event could not be handed out", self.code)

    async def hand_out(self, event: dict) -> None:
        """One room event to every local socket of the room that wants it, from one picture."""
        common = event["state"]
        readers = [socket for socket in list(self.sockets) if socket.wants(common)]
        if not readers:
            return
        by_language: dict[str, list] = {}
        for socket in readers:
            if socket.language is None:
                socket.language = language_from_scope(socket.scope)
            by_language.setdefault(socket.language, []).append(socket)
        try:
            # In the first reader's language, as when the first consumer to ask loaded it.
            with translation.override(readers[0].language):
                picture = await standings.picture_for(event, load=db(room_picture))
        except Exception:
            stop_if_cancelled()
            # The database is away: this event is skipped; the clients' periodic sync brings the picture back.
            logger.warning("standings of room %s unavailable; an event was skipped", self.code, exc_info=True)
            return
        if picture.snapshot["seq"] < common["seq"]:
            # Still older than the event after every load: skipped (its standings could predate a reader's own
            # join and say "removed"); the periodic sync or the next event brings the picture.
            return
        sent_at = common.get("sent_at")
        timed = isinstance(sent_at, float)
        latencies: list[float] = []
        loop = asyncio.get_running_loop()
        for language, sockets in by_language.items():
            with translation.override(language):
                waiting = iter(sockets)
                while True:
                    # One timeout for the room's sockets, moved to each in turn (a socket's own timeout cost as
                    # much as its frame): a stalled one ends this block, is closed, and the rest carry on.
                    # Moved only when it is about to fall short of SEND_SECONDS for the socket at hand, and then a
                    # little further (a twentieth): every socket still has SEND_SECONDS at least, but a fan-out that
                    # never waits moves the timer a few times a second, not once a socket (a timer handle made and
                    # cancelled, and the loop's heap of timers changed, for each of 2,000 sockets).
                    # Most sockets take their frame at once, with no await (`deliver_now`): only the rest wait.
                    try:
                        async with asyncio.timeout(None) as guard:
                            deadline = 0.0
                            for socket in waiting:
                                try:
                                    sent = socket.deliver_now(common, picture)
                                    if sent is None:
                                        least = loop.time() + SEND_SECONDS
                                        if deadline < least:
                                            deadline = least + SEND_SECONDS / 20
                                            guard.reschedule(deadline)
                                        sent = await socket.room_event(common, picture)
                                except Exception:
                                    stop_if_cancelled()
                                    logger.debug(
                                        "a socket of room %s closed during a fan-out", self.code, exc_info=True
                                    )
                                    continue
                                if sent and timed:
                                    latencies.append(time.time() - sent_at)
                            guard.reschedule(None)
                        break
                    except TimeoutError:
                        logger.warning("room %s: a socket took no frame for %s s; closed", self.code, SEND_SECONDS)
                        self.sockets.discard(socket)
                        loop.create_task(_close_stalled(socket))
        metrics.fanout_observed_many(latencies)


async def _close_stalled(socket) -> None:
    """Close a socket that took no frame in time, off the room's loop (its close may wait on the same buffers)."""
    try:
        async with asyncio.timeout(SEND_SECONDS):
            await socket.close()
    except Exception:
        logger.debug("a stalled socket could not be closed cleanly", exc_info=True)


_subscriptions: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[tuple[int, str], Subscription]] = (
    weakref.WeakKeyDictionary()
)


def _mine() -> dict[tuple[int, str], Subscription]:
    return _subscriptions.setdefault(asyncio.get_running_loop(), {})


async def join(socket) -> None:
    """`socket` (a RoomConsumer with `code` and `channel_layer`) is served its room's events from now on."""
    subscriptions = _mine()
    key = (id(socket.channel_layer), socket.code)
    subscription = subscriptions.get(key)
    if subscription is None:
        subscription = subscriptions[key] = Subscription(code=socket.code, layer=socket.channel_layer)
        subscription.opened = asyncio.get_running_loop().create_task(subscription.open())
    subscription.sockets.add(socket)
    try:
        # shield: one joiner going away must not cancel the subscription the others wait for.
        await asyncio.shield(subscription.opened)
    except Exception:
        stop_if_cancelled()
        if subscriptions.get(key) is subscription:
            del subscriptions[key]  # the next joiner tries again
        subscription.sockets.discard(socket)
        raise


async def leave(socket) -> None:
    subscriptions = _mine()
    key = (id(socket.channel_layer), socket.code)
    subscription = subscriptions.get(key)
    if subscription is None or socket not in subscription.sockets:
        return
    subscription.sockets.discard(socket)
    if not subscription.sockets:
        del subscriptions[key]  # a socket joining from now on opens a subscription of its own
        await subscription.close()


def subscribed() -> list[Subscription]:
    """This process's (this event loop's) room subscriptions."""
    return list(_mine().values())
