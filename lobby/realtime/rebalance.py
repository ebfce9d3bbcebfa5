"""Spread the sockets again after a worker restart.

When a worker dies its players reconnect to the survivors, and a replacement that comes up later gets only new
connections: it would sit near 0 while a survivor holds everyone. So each process (each event loop) writes the
number of its joined room sockets to Redis every REBALANCE_INTERVAL_SECONDS, under a key of its own (named as
the process is in core/processes.py) that expires after three intervals, at least 3 s; a killed process's entry
goes sooner, deleted by the survivor that sees it die (core/processes.py). A process holding far more
than its share (at least REBALANCE_MIN_EXCESS over the mean of the live processes, and either over
REBALANCE_FACTOR x the mean or with another process under the mean / REBALANCE_FACTOR: see to_shed) closes player
sockets with REBALANCE_CLOSE_CODE, at least REBALANCE_BATCH and up to half its excess a turn, until it is no more than
REBALANCE_MIN_EXCESS over the mean. Only sockets whose room is not in an open question: the rooms' rows are read
and locked (SELECT ... FOR UPDATE) in one transaction that lasts until their sockets are closed, so a question
cannot open between the read and a close (the host's "next" waits those few milliseconds): nobody is closed
while they may be answering. The page's socket (static/js/live.js) reconnects at once with its
token, quietly, and the kernel hands the new connection to one of the workers: the spread is statistical (a
closed socket may come back to the same process, which then sheds again at its next turn).

Only with REDIS_URL (with the in-memory channel layer there is one process), and REBALANCE_INTERVAL_SECONDS > 0
(0 turns it off: a process then neither registers nor sheds).
"""

import asyncio
import logging
import math
import random
import weakref
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import redis.asyncio as redis
from asgiref.sync import async_to_sync
from channels.db import database_sync_to_async
from django.conf import settings
from django.db import transaction

from core import processes
from core.cancellation import stop_if_cancelled
from lobby.models import Room
from lobby.rules.machine import Phase

logger = logging.getLogger(__name__)

REBALANCE_CLOSE_CODE = 4012  # an application code: "reconnect now, you are being moved to another worker"
REBALANCE_CLOSE_REASON = "rebalance"

# One thread of its own for its one read a turn, so it never waits behind the game's database work.
db_thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="quizgate-rebalance")


@dataclass(frozen=True)
class Policy:
    factor: float
    minimum: int
    batch: int

    @classmethod
    def from_settings(cls) -> "Policy":
        return cls(
            factor=settings.REBALANCE_FACTOR, minimum=settings.REBALANCE_MIN_EXCESS, batch=settings.REBALANCE_BATCH
        )


def to_shed(mine: int, others: list[int], policy: Policy, *, shedding: bool) -> tuple[int, bool]:
    """How many sockets this process closes now, and whether it is still shedding.

    It starts when it holds at least `minimum` over the mean of the live processes and either it holds more than
    `factor` x the mean (it hoards) or another process holds less than the mean / `factor` (one is starved: a
    restarted worker among three survivors that each hold only 4/3 of the mean). It goes on until it is no more
    than `minimum` over the mean. Each turn closes at least `batch` and up to half of what it holds over that
    line: about half of the closed come back to the same process (the kernel, not the app, picks the worker of a
    new connection), so the excess shrinks by about a quarter a turn, however large it is."""
    counts = [mine, *others]
    if len(counts) < 2:
        return 0, False
    mean = sum(counts) / len(counts)
    stop_at = mean + policy.minimum
    excess = math.ceil(mine - stop_at)
    if excess <= 0:
        return 0, False
    if not shedding and not (mine > policy.factor * mean or min(others) < mean / policy.factor):
        return 0, False
    return min(excess, max(policy.batch, math.ceil(excess / 2))), True


def entry_ttl_ms(interval: float) -> int:
    """How long a process's entry outlives its last turn: three turns, and never under 3 s, so a loop busy for a
    moment (a burst of joins, a slow start) does not drop out and back in while it is alive."""
    return int(max(3 * interval, 3.0) * 1000)


def eligible(sockets, open_question_rooms: set[int]) -> list:
    """The sockets that may be asked to reconnect: joined players whose room is not in an open question, and
    that have been sent their first picture (so their token too: a player moved before it would join again as
    someone new)."""
    return [
        s
        for s in sockets
        if s.role == "player" and s.room_id is not None and s.seq >= 0 and s.room_id not in open_question_rooms
    ]


async def _close(sockets) -> None:
    for socket in sockets:
        try:
            await socket.close(code=REBALANCE_CLOSE_CODE, reason=REBALANCE_CLOSE_REASON)
        except Exception:
            logger.debug("a socket closed before it could be moved", exc_info=True)


def _close_between_questions(candidates: list, n: int) -> list:
    """Close up to `n` of `candidates` whose room is not in an open question, holding those rooms' rows until the
    closes are sent: a question opening meanwhile (an UPDATE of the row) waits for them. The closed ones."""
    with transaction.atomic():
        locked = Room.objects.select_for_update().filter(pk__in={s.room_id for s in candidates}).order_by("pk")
        asking = {pk for pk, phase in locked.values_list("pk", "phase") if phase == Phase.QUESTION}
        pool = eligible(candidates, asking)
        chosen = random.sample(pool, min(n, len(pool)))
        if chosen:
            async_to_sync(_close)(chosen)
    return chosen


def _key_prefix() -> str:
    prefix = settings.CHANNEL_LAYERS["default"].get("CONFIG", {}).get("prefix", "quizgate")
    return f"{prefix}:rebalance:"


async def registry(client, prefix: str) -> dict[str, int]:
    """The live processes' entries: name (`<host>-<pid>-<random>`) -> joined sockets, as each last wrote it."""
    keys = [k async for k in client.scan_iter(match=prefix + "*", count=100)]
    values = await client.mget(keys) if keys else []
    return {k.decode()[len(prefix) :]: int(v) for k, v in zip(keys, values, strict=True) if v is not None}


def registry_pid(name: str) -> int:
    """The process id in an entry's name."""
    return int(name.split("-")[-2])


@dataclass
class Rebalancer:
    """One process's (one event loop's) entry in the registry, and its shedding."""

    sockets: weakref.WeakSet = field(default_factory=weakref.WeakSet)
    name: str = field(default_factory=lambda: processes.this().name)
    shedding: bool = False
    task: asyncio.Task | None = None

    def start(self) -> None:
        if not (settings.REDIS_URL and settings.REBALANCE_INTERVAL_SECONDS > 0):
            return
        if self.task is None or self.task.done():
            self.task = asyncio.get_running_loop().create_task(self._run(), name="socket-rebalance")

    def count(self) -> int:
        return sum(1 for s in list(self.sockets) if s.room_id is not None)

    async def _run(self) -> None:
        client = redis.Redis.from_url(settings.REDIS_URL, socket_timeout=2, socket_connect_timeout=2)
        interval = settings.REBALANCE_INTERVAL_SECONDS
        prefix = _key_prefix()
        while True:
            try:
                await self.tick(client, prefix, interval)
            except Exception:  # Redis away (lobby/realtime/heal.py sees to the rooms): try again next time
                stop_if_cancelled()
                logger.debug("socket rebalance skipped a turn", exc_info=True)
            await asyncio.sleep(interval)

    async def tick(self, client, prefix: str, interval: float) -> int:
        mine = self.count()
        await client.set(prefix + self.name, mine, px=entry_ttl_ms(interval))
        others = [count for name, count in (await registry(client, prefix)).items() if name != self.name]
        n, self.shedding = to_shed(mine, others, Policy.from_settings(), shedding=self.shedding)
        if not n:
            return 0
        candidates = eligible([s for s in list(self.sockets) if s.room_id is not None], set())
        if not candidates:
            return 0
        chosen = await database_sync_to_async(_close_between_questions, thread_sensitive=False, executor=db_thread)(
            candidates, n
        )
        for socket in chosen:
            self.sockets.discard(socket)
        if chosen:
            logger.info("holding %d of %d sockets: asked %d to reconnect", mine, mine + sum(others), len(chosen))
        return len(chosen)


_rebalancers: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Rebalancer] = weakref.WeakKeyDictionary()


def _rebalancer() -> Rebalancer:
    loop = asyncio.get_running_loop()
    if loop not in _rebalancers:
        _rebalancers[loop] = Rebalancer()
    return _rebalancers[loop]


def start() -> None:
    """At the server's startup (the ASGI lifespan, config/asgi.py): a process with no sockets yet, a restarted
    worker, is in the registry from the start, so the others see it and shed toward it."""
    _rebalancer().start()


async def stop() -> None:
    """At shutdown: out of the registry at once rather than when its entry expires."""
    rebalancer = _rebalancer()
    if rebalancer.task is None:
        return
    rebalancer.task.cancel()
    try:
        client = redis.Redis.from_url(settings.REDIS_URL, socket_timeout=1, socket_connect_timeout=1)
        await client.delete(_key_prefix() + rebalancer.name)
        await client.aclose()
    except (redis.RedisError, OSError):
        pass


async def _forget_dead(client, name: str, silent: float, held: object) -> None:
    """A process died: out of the registry now, so the survivors' mean is over the live ones only."""
    await client.delete(_key_prefix() + name)


processes.subscribe("registry", on_death=_forget_dead)


def track(socket) -> None:
    """A room socket (RoomConsumer) that has joined its room: counted, and may be moved."""
    rebalancer = _rebalancer()
    rebalancer.sockets.add(socket)
    rebalancer.start()


def forget(socket) -> None:
    _rebalancer().sockets.discard(socket)
