"""Group names and the one room event. Sent only after the transaction that caused it commits."""

import asyncio
import logging
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field

from asgiref.sync import async_to_sync
from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from django.db import transaction

from core.server_loop import server_loop
from lobby.reads import standings
from lobby.reads.selectors import Picture, room_picture

logger = logging.getLogger(__name__)

ROOM_STATE = "room.state"
ROOM_ANSWERS = "room.answers"
COHOST_REPLACED = "room.cohost_replaced"
SEND_ATTEMPTS = 3


def room_group(code: str) -> str:
    # Codes come from our own alphabet (A-Z, 2-9), so the name always fits Channels' rules.
    return f"room.{code}"


def host_group(code: str) -> str:
    """The room's host screens only: the answer count changes with every answer, and sending it to 20
    players who ignore it would multiply the server's work per answer by 21."""
    return f"room.{code}.host"


def room_changed(*, room_id: int, coalesce: bool = False) -> None:
    """After commit, the room's new picture to everyone in it. `coalesce` (joins, leaves, the lock): such
    changes go out at most once every ROOM_COALESCE_INTERVAL per room and process, each carrying the newest
    picture, so a burst of 2,000 joins is a few broadcasts a second, not 2,000. Phase changes go at once."""
    if coalesce:
        transaction.on_commit(lambda: _broadcast_soon(room_id))
    else:
        transaction.on_commit(lambda: room_broadcast(room_id=room_id))


def answers_changed(*, room_code: str, question_index: int, answered_count: int) -> None:
    event = {"type": ROOM_ANSWERS, "question_index": question_index, "answered_count": answered_count}
    transaction.on_commit(lambda: _send_latest(host_group(room_code), event))


def cohost_link_replaced(*, room_code: str, generation: int) -> None:
    """To the room's host screens: those let in by a co-host link older than `generation` stop hosting."""
    event = {"type": COHOST_REPLACED, "generation": generation}
    transaction.on_commit(lambda: _send(host_group(room_code), event))


# The host's answer counter needs the newest count, not every count: per room, one send at once, then at
# most one every HOST_COUNT_INTERVAL carrying the latest value (the reveal's snapshot has the final count).
# Each send is a Redis publish, and a process's publishes go out one at a time, the room broadcasts included.
HOST_COUNT_INTERVAL = 0.25


@dataclass
class _Latest:
    events: dict[str, dict] = field(default_factory=dict)  # group -> newest event not yet sent
    flushing: set[str] = field(default_factory=set)


_latest: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Latest] = weakref.WeakKeyDictionary()


def _send_latest(group: str, event: dict) -> None:
    loop = server_loop()
    if loop is None:
        _send(group, event)
    else:
        loop.call_soon_threadsafe(_keep_latest, loop, group, event)


def _keep_latest(loop: asyncio.AbstractEventLoop, group: str, event: dict) -> None:
    latest = _latest.setdefault(loop, _Latest())
    latest.events[group] = event
    if group not in latest.flushing:
        latest.flushing.add(group)
        loop.create_task(_flush_latest(latest, group))


async def _flush_latest(latest: _Latest, group: str) -> None:
    try:
        while group in latest.events:
            await _send_async(group, latest.events.pop(group))
            await asyncio.sleep(HOST_COUNT_INTERVAL)
    finally:
        latest.flushing.discard(group)


# Lobby changes (joins above all): at most 4 broadcasts a second per room and process to the host's screens,
# and at most one a second to the players' phones (which show the count, not the list), carrying the newest.
ROOM_COALESCE_INTERVAL = 0.25
PLAYERS_COALESCE_INTERVAL = 1.0
# A lobby picture is a frame to every phone of the room (and a picture of the whole room read for it): a room of
# 10,000 filling up at one picture a second per process was 20,000 frames a second on two cores, most of what its
# joins cost. The intervals grow with the room, so that its lobby pictures stay about this many frames a second
# per process: a room of 10,000 sees its count move every 4 s on the phones, every second on the host's screen.
PLAYERS_FRAMES_A_SECOND = 2500
HOST_PICTURES_PLAYERS_A_SECOND = 10_000


def coalesce_intervals(players: int) -> tuple[float, float]:
    """(host screens', phones') least seconds between two coalesced lobby pictures of a room of `players`."""
    return (
        max(ROOM_COALESCE_INTERVAL, players / HOST_PICTURES_PLAYERS_A_SECOND),
        max(PLAYERS_COALESCE_INTERVAL, players / PLAYERS_FRAMES_A_SECOND),
    )


@dataclass
class _Dirty:
    rooms: set[int] = field(default_factory=set)  # rooms changed since their last coalesced broadcast
    flushing: set[int] = field(default_factory=set)
    # When each room's phones may next be sent a picture (time.monotonic()), across flushes: a pause in the joins
    # ends a flush, and the next join must not send the phones a picture sooner than that.
    players_due: dict[int, float] = field(default_factory=dict)


_dirty: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Dirty] = weakref.WeakKeyDictionary()


def _broadcast_soon(room_id: int) -> None:
    loop = server_loop()
    if loop is None:
        room_broadcast(room_id=room_id)
    else:
        loop.call_soon_threadsafe(_mark_dirty, loop, room_id)


def _mark_dirty(loop: asyncio.AbstractEventLoop, room_id: int) -> None:
    dirty = _dirty.setdefault(loop, _Dirty())
    dirty.rooms.add(room_id)
    if room_id not in dirty.flushing:
        dirty.flushing.add(room_id)
        loop.create_task(_flush_room(dirty, room_id))


async def _flush_room(dirty: _Dirty, room_id: int) -> None:
    """The coalesced broadcasts of one room: the newest picture to its host screens every
    ROOM_COALESCE_INTERVAL while it changes, and to everyone (phones too) at most every
    PLAYERS_COALESCE_INTERVAL. The last change always reaches everyone."""
    players_due = dirty.players_due.pop(room_id, 0.0)
    players_behind = False  # the hosts hold a picture the phones have not had
    try:
        while room_id in dirty.rooms or players_behind:
            if room_id not in dirty.rooms:  # nothing new: the phones get the picture the hosts already have
                await asyncio.sleep(max(players_due - time.monotonic(), 0))
                if room_id not in dirty.rooms:
                    dirty.rooms.add(room_id)
            dirty.rooms.discard(room_id)
            to_players = time.monotonic() >= players_due
            hosts_every, players_every = ROOM_COALESCE_INTERVAL, PLAYERS_COALESCE_INTERVAL
            try:
                picture = await database_sync_to_async(room_broadcast, thread_sensitive=False)(
                    room_id=room_id, hosts_only=not to_players
                )
                hosts_every, players_every = coalesce_intervals(picture.snapshot.get("player_count", 0))
            except Exception:
                # Clients catch up from their periodic sync; the next change brings a fresh picture anyway.
                logger.exception("coalesced broadcast for room %s failed", room_id)
            if to_players:
                players_due = time.monotonic() + players_every
            players_behind = not to_players
            await asyncio.sleep(hosts_every)
    finally:
        if players_due > time.monotonic():
            dirty.players_due[room_id] = players_due
        dirty.flushing.discard(room_id)


def _send(group: str, event: dict) -> None:
    loop = server_loop()
    if loop is not None:
        # Called from a worker thread of the server: hand the send to the event loop and return, so the
        # thread (and the database connection it holds) is free for the next player's action at once.
        asyncio.run_coroutine_threadsafe(_send_async(group, event), loop)
    else:  # a Celery worker, a management command: no server loop to hand it to
        async_to_sync(_send_async)(group, event)


# Told of every event given up on: (group, event, when its first try began, time.monotonic()). lobby/realtime/heal.py
# listens, to re-send the rooms' newest state when the channel layer is back.
_failure_listeners: list[Callable[[str, dict, float], None]] = []


def on_send_failure(listener: Callable[[str, dict, float], None]) -> None:
    _failure_listeners.append(listener)


async def _send_async(group: str, event: dict) -> None:
    # A restarted Redis leaves a dead connection in the pool: the first send fails, a second one reconnects.
    started = time.monotonic()
    for attempt in range(SEND_ATTEMPTS):
        try:
            await get_channel_layer().group_send(group, event)
            return
        except Exception:
            if attempt + 1 == SEND_ATTEMPTS:
                # Clients still catch up: the next event or their periodic sync brings a fresh snapshot.
                logger.exception("event for %s failed", group)
                for listener in _failure_listeners:
                    listener(group, event, started)
            else:
                await asyncio.sleep(0.2 * (attempt + 1))


def room_broadcast(*, room_id: int, hosts_only: bool = False) -> Picture:
    """Send the common part of the room's picture to everyone in it (each consumer adds its reader's part from
    its process's standings, lobby/reads/standings.py); returns the picture (and during a reveal the crowd's verdict
    on it). `hosts_only`: to the room's host screens alone (a coalesced lobby change the phones get later)."""
    before = standings.newest(room_id)
    picture = room_picture(room_id=room_id)
    snapshot = picture.snapshot
    snapshot["sent_at"] = time.time()  # lets a client (and bench/ws_load.py) measure fan-out latency
    standings.remember(room_id, picture)  # this process's consumers need not read it again
    # If this send is lost, the database still holds the change: clients catch up from the next snapshot.
    group = host_group(snapshot["code"]) if hosts_only else room_group(snapshot["code"])
    _send(group, state_event(room_id, picture, before=before))
    return picture


def state_event(room_id: int, picture: Picture, before: Picture | None = None) -> dict:
    """The room event of a picture: its common part and, for a small room, its standings, so that the other
    processes need not read the picture again (lobby/reads/standings.py); for a big room whose standings are those
    of the picture `before` it (a question opening after the leaderboard), the seq of that one, whose standings
    the other processes hold already."""
    event = {"type": ROOM_STATE, "room_id": room_id, "state": picture.snapshot}
    carried = standings.carried(picture)
    if carried is not None:
        event["standings"] = carried
    else:
        same = standings.unchanged_since(before, picture)
        if same is not None:
            event["standings_of"] = same
    return event
