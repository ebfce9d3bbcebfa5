"""Rooms heal fast after a channel-layer (Redis) outage.

While Redis is away every room broadcast fails (lobby/events.py drops it after three tries) and players would
wait for their own periodic sync (10 s). So each server process watches Redis itself: one connection of its
own to each of the layer's servers (CHANNEL_LAYER_REDIS_URLS: one, or several shards), pinged every
PROBE_INTERVAL, without retries, so even a Redis restart between two pings is seen (it
breaks the connection). When Redis is back, the process sends the newest picture, read from the database, to
its own sockets whose picture is older than their room's, each in its reader's frame (host or player, as a room
event is delivered: `RoomConsumer.deliver`); it does so again a moment later, because the
channel layer resubscribes to its groups only after a while and an event published before that reaches nobody.
Delivered to this process's sockets directly, not through Redis: it works whichever process made the change.

A question whose opening broadcast failed was shown to nobody until the heal (a player's own sync aside), so
the process whose broadcast failed moves its deadline back by the time from that broadcast until its heal has
shown it, plus PASSES[1] (by then every process's passes have shown it): no answer is refused as too late for
time the outage took. A question that reached its deadline during the
outage closes as usual (the outage took longer than the whole question).
"""

import asyncio
import logging
import time
import weakref
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import timedelta

import redis.asyncio as redis
from channels.db import database_sync_to_async
from django.conf import settings
from django.db import transaction
from django.db.models import F
from redis.backoff import NoBackoff
from redis.retry import Retry

from core.cancellation import next_turn, stop_if_cancelled
from lobby import events
from lobby.models import Room
from lobby.reads import standings
from lobby.reads.selectors import Picture, room_picture
from lobby.rules.machine import Phase

logger = logging.getLogger(__name__)

PROBE_INTERVAL = 0.2
PROBE_TIMEOUT = 1.0  # a busy process answers a ping late; that is no outage
# Heal passes after Redis is back, in seconds: at once, then while the channel layer resubscribes.
PASSES = (0.0, 1.0, 2.5)

# A thread of its own: behind the clock's and the game's database work in a shared pool, the first heal pass
# waited seconds on a busy machine. Its connection closes after DATABASE_CONN_MAX_AGE like any other.
_thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="quizgate-heal")


def _in_db_thread(func):
    return database_sync_to_async(func, thread_sensitive=False, executor=_thread)


@dataclass
class Healer:
    """One process's (one event loop's) watch over the channel layer and its room sockets."""

    sockets: weakref.WeakSet = field(default_factory=weakref.WeakSet)
    failed_at: float | None = None  # a broadcast gave up (monotonic), not yet healed
    questions: dict[tuple[str, int], float] = field(default_factory=dict)  # (code, index) -> when it was sent
    task: asyncio.Task | None = None
    healing: asyncio.Task | None = None

    def start(self) -> None:
        if settings.REDIS_URL and (self.task is None or self.task.done()):
            self.task = asyncio.get_running_loop().create_task(self._watch(), name="channel-layer-heal")

    async def _watch(self) -> None:
        # Every shard of the channel layer (CHANNEL_LAYER_REDIS_URLS): one away is an outage of its rooms.
        clients = [
            redis.Redis.from_url(
                url, socket_timeout=PROBE_TIMEOUT, socket_connect_timeout=PROBE_TIMEOUT, retry=Retry(NoBackoff(), 0)
            )
            for url in (settings.CHANNEL_LAYER_REDIS_URLS or [settings.REDIS_URL])
        ]
        down_since: float | None = None
        while True:
            try:
                for client in clients:
                    await client.ping()
                up = True
            except (redis.RedisError, OSError):
                stop_if_cancelled()  # a cancel the client turned into an error of its own
                up = False
            if not up:
                if down_since is None:
                    down_since = time.monotonic()
                    logger.warning("channel layer (Redis) unreachable; rooms are healed when it is back")
            elif down_since is not None or self.failed_at is not None:
                began = min(t for t in (down_since, self.failed_at) if t is not None)
                down_since = self.failed_at = None
                # A task of its own: the watch goes on, and sees a second outage during the heal's passes.
                self.healing = asyncio.get_running_loop().create_task(self._heal(began))
            await next_turn(PROBE_INTERVAL)

    async def _heal(self, began: float) -> None:
        healed_at = time.monotonic()
        questions, self.questions = self.questions, {}
        for n, delay in enumerate(PASSES):
            await asyncio.sleep(delay - (PASSES[n - 1] if n else 0))
            try:
                sent = await self.catch_up()
                shown_at = time.monotonic()
                took = shown_at - healed_at
                if n == 0 and questions:
                    # After the first pass, so the phase reaches everyone first. The question gets back the time
                    # from its broadcast until it was shown here, and until the next pass (PASSES[1]) has shown
                    # it to any socket of another process that the first pass there missed.
                    extensions = [(code, i, shown_at + PASSES[1] - sent) for (code, i), sent in questions.items()]
                    await self.catch_up(extensions)
            except Exception:
                stop_if_cancelled()
                logger.exception("healing rooms after the channel layer's outage failed")
                continue
            if n == 0:
                logger.warning(
                    "channel layer back after %.1f s; %d socket(s) sent their room's newest state %.2f s later",
                    healed_at - began,
                    sent,
                    took,
                )

    async def catch_up(self, extensions: list[tuple[str, int, float]] | None = None) -> int:
        """Send each of this process's sockets its room's newest picture if it holds an older one; first move
        back the deadlines of `extensions` (code, question index, seconds). One hop to a database thread: on a
        busy machine each hop waits for a thread and the GIL."""
        sockets = [s for s in list(self.sockets) if s.room_id is not None]
        held: dict[int, int] = {}
        for socket in sockets:
            held[socket.room_id] = min(socket.seq, held.get(socket.room_id, socket.seq))
        pictures = await _in_db_thread(_newer_pictures)(extensions or [], held)
        for room_id, picture in pictures.items():
            standings.remember(room_id, picture)  # the room events that follow need not read it again
        sent = 0
        for socket in sockets:
            picture = pictures.get(socket.room_id)
            if picture is not None and socket.seq < picture.snapshot["seq"]:
                sent += 1
                try:
                    # Directly, not as a room event: a socket drops room events no newer than its own seq, and
                    # this one never went through the channel layer.
                    await socket.deliver(picture.snapshot, picture)
                except Exception:
                    logger.debug("a socket closed while its room healed", exc_info=True)
        return sent

    def send_failed(self, group: str, event: dict, started: float) -> None:
        self.failed_at = started if self.failed_at is None else min(self.failed_at, started)
        state = event.get("state") or {}
        if event.get("type") == events.ROOM_STATE and state.get("phase") == Phase.QUESTION:
            self.questions.setdefault((state["code"], state["question_index"]), started)


def _newer_pictures(extensions, held: dict[int, int]) -> dict[int, Picture]:
    """Extend the questions, then the picture of each room (id -> oldest seq a socket holds) that moved on."""
    for code, index, seconds in extensions:
        try:
            question_extend(code=code, question_index=index, seconds=seconds)
        except Exception:
            logger.exception("could not give question %d of %s back the outage's time", index, code)
    seqs = dict(Room.objects.filter(pk__in=held).values_list("pk", "seq"))
    pictures = {}
    for room_id, seq in seqs.items():
        if held[room_id] < seq:
            pictures[room_id] = room_picture(room_id=room_id)
            pictures[room_id].snapshot["sent_at"] = time.time()
    return pictures


def question_extend(*, code: str, question_index: int, seconds: float) -> bool:
    """Move an open question's deadline back by `seconds` (once: only the process whose broadcast failed calls
    it, for that broadcast). False when the question is no longer open."""
    with transaction.atomic():
        room = Room.objects.filter(code=code).values_list("pk", flat=True).first()
        moved = Room.objects.filter(pk=room, phase=Phase.QUESTION, question_index=question_index).update(
            deadline=F("deadline") + timedelta(seconds=seconds), seq=F("seq") + 1
        )
        if moved:
            events.room_changed(room_id=room)
    return bool(moved)


_healers: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Healer] = weakref.WeakKeyDictionary()


def _healer() -> Healer:
    loop = asyncio.get_running_loop()
    if loop not in _healers:
        _healers[loop] = Healer()
    return _healers[loop]


def track(socket) -> None:
    """A room socket (RoomConsumer) that has joined its room: healed with it."""
    healer = _healer()
    healer.sockets.add(socket)
    healer.start()


def forget(socket) -> None:
    _healer().sockets.discard(socket)


def tracked() -> list:
    """This process's (this event loop's) joined room sockets."""
    return list(_healer().sockets)


def _send_failed(group: str, event: dict, started: float) -> None:
    try:
        healer = _healer()
    except RuntimeError:  # no running loop (a Celery worker): nothing of this process to heal
        return
    healer.send_failed(group, event, started)


events.on_send_failure(_send_failed)
