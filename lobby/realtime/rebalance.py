"""Spread the sockets again after a restart, or over a new host.

When a host (or one of its workers) dies its players reconnect to the survivors, and a replacement that comes up
later gets only new connections: it would sit near 0 while the survivors hold everyone. So each process (each event
loop) writes the number of its joined room sockets to Redis every REBALANCE_INTERVAL_SECONDS, with the server it
belongs to (its unit: the address and port the load balancer sends to, `unit_name`), under a key of its own (named
as the process is in core/processes.py) that expires after three intervals, at least 3 s; a killed process's entry
goes sooner, deleted by the survivor that sees it die (core/processes.py).

The balancer spreads over servers, and a server's kernel over its workers: so the spreading is by server (`plan`).
A server's fair share is the sockets of all of them x its part of the processes. Once a server is more than
REBALANCE_TOLERANCE (10 %) of its fair share off it, and at least REBALANCE_MIN_EXCESS sockets, every server over
its fair share closes what it holds over it (each process its part), at most REBALANCE_BATCH a turn, with
REBALANCE_CLOSE_CODE. A server under its share closes nothing: a socket it closed would come straight back to it
(HAProxy's leastconn sends a new connection to the server holding the fewest). Then it waits until the moved have
come back and every process has written its count again (`settle_seconds`) before it looks again; and the fair
share is taken over the most sockets seen in that time, not the registry's sum of the moment (which misses the
sockets still reconnecting, and made the servers over their share shed too much, their surplus then shed back:
thousands of moves in a game). It closes the sockets it has held longest, so one already moved is not moved again.
With one server (its workers behind one port) each process is its own unit: the kernel hands a closed socket to
any worker, one that sheds may get some back, and sheds those at a later turn.

Only sockets whose room is not in an open question: the rooms' rows are read and locked (SELECT ... FOR UPDATE) in
one transaction that lasts until their sockets are closed, so a question cannot open between the read and a close
(the host's "next" waits those few milliseconds): nobody is closed while they may be answering. The page's socket
(static/js/live.js) reconnects at once with its token, quietly.

Only with REDIS_URL (with the in-memory channel layer there is one process), and REBALANCE_INTERVAL_SECONDS > 0
(0 turns it off: a process then neither registers nor sheds).
"""

import asyncio
import logging
import math
import os
import time
import weakref
from collections import deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import redis.asyncio as redis
from asgiref.sync import async_to_sync
from channels.db import database_sync_to_async
from django.conf import settings
from django.db import transaction

from core import processes
from core.cancellation import next_turn, stop_if_cancelled
from lobby.models import Room
from lobby.rules.machine import Phase

logger = logging.getLogger(__name__)

REBALANCE_CLOSE_CODE = 4012  # an application code: "reconnect now, you are being moved to another worker"
REBALANCE_CLOSE_REASON = "rebalance"

# One thread of its own for its one read a turn, so it never waits behind the game's database work.
db_thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="quizgate-rebalance")


@dataclass(frozen=True)
class Policy:
    tolerance: float  # a server within this part of its fair share (0.1: +-10 %) is left alone ...
    minimum: int  # ... and one fewer than this many sockets off it
    batch: int  # the most sockets one process closes in a turn

    @classmethod
    def from_settings(cls) -> "Policy":
        return cls(
            tolerance=settings.REBALANCE_TOLERANCE,
            minimum=settings.REBALANCE_MIN_EXCESS,
            batch=settings.REBALANCE_BATCH,
        )


def unit_name() -> str:
    """The server this process belongs to, as the load balancer sees it: the host name and the address and port it
    listens on (config/serve.py puts them in QUIZGATE_SERVER for its workers); the host name alone otherwise."""
    return os.environ.get("QUIZGATE_SERVER") or processes.HOST


def plan(me: str, entries: dict[str, tuple[int, str]], policy: Policy, total: int | None = None) -> int:
    """How many sockets process `me` closes now. `entries`: every live process (`me` too) -> (its sockets, its
    unit). `total`: the sockets to share out, if more than the entries hold (some are on their way back).

    The units are the servers (each process its own when there is one server). A unit's fair share is `total` x
    its part of the processes. Nothing moves while every unit is within `tolerance` of its fair share or `minimum`
    sockets, whichever is more. Otherwise each unit over its fair share sheds what it holds over it, each of its
    processes in proportion to what it holds, and at most `batch`; a unit under it sheds nothing."""
    if me not in entries:
        return 0
    if len({unit for _, unit in entries.values()}) < 2:
        entries = {name: (count, name) for name, (count, _) in entries.items()}
    units: dict[str, list[int]] = {}
    for count, unit in entries.values():
        units.setdefault(unit, []).append(count)
    if len(units) < 2:
        return 0
    total = max(total or 0, sum(count for count, _ in entries.values()))
    processes_count = len(entries)
    off = {unit: sum(counts) - total * len(counts) / processes_count for unit, counts in units.items()}
    fair = {unit: total * len(counts) / processes_count for unit, counts in units.items()}
    if all(abs(off[unit]) <= max(policy.minimum, policy.tolerance * fair[unit]) for unit in units):
        return 0
    mine, my_unit = entries[me]
    held = sum(units[my_unit])
    if off[my_unit] < 1 or not held:
        return 0
    return min(math.floor(off[my_unit] * mine / held), mine, policy.batch)


def settle_seconds(interval: float) -> float:
    """After a turn that closed sockets, how long a process waits before it sheds again: the moved have come back
    and every process has written its new count (a turn each, plus a turn for the reconnects), at least 3 s."""
    return max(3 * interval, 3.0)


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
    """Close the first `n` of `candidates` (the longest held first) whose room is not in an open question, holding
    those rooms' rows until the closes are sent: a question opening meanwhile (an UPDATE of the row) waits for
    them. The closed ones."""
    with transaction.atomic():
        locked = Room.objects.select_for_update().filter(pk__in={s.room_id for s in candidates}).order_by("pk")
        asking = {pk for pk, phase in locked.values_list("pk", "phase") if phase == Phase.QUESTION}
        chosen = eligible(candidates, asking)[:n]
        if chosen:
            async_to_sync(_close)(chosen)
    return chosen


def _key_prefix() -> str:
    prefix = settings.CHANNEL_LAYERS["default"].get("CONFIG", {}).get("prefix", "quizgate")
    return f"{prefix}:rebalance:"


def _parse(name: str, raw: bytes) -> tuple[int, str, float]:
    count, unit, started = (raw.decode().split(" ") + ["", ""])[:3]
    return int(count), unit or processes.host_of(name), float(started or 0)


async def entries_of(client, prefix: str) -> dict[str, tuple[int, str, float]]:
    """The live processes' entries: name (`<host>-<pid>-<random>`) -> (joined sockets, unit, when it started), as
    each last wrote them."""
    keys = [k async for k in client.scan_iter(match=prefix + "*", count=100)]
    values = await client.mget(keys) if keys else []
    named = ((k.decode()[len(prefix) :], v) for k, v in zip(keys, values, strict=True) if v is not None)
    return {name: _parse(name, v) for name, v in named}


async def registry(client, prefix: str) -> dict[str, int]:
    """The live processes' entries: name -> joined sockets, as each last wrote it."""
    return {name: count for name, (count, *_) in (await entries_of(client, prefix)).items()}


def registry_pid(name: str) -> int:
    """The process id in an entry's name."""
    return int(name.split("-")[-2])


@dataclass
class Rebalancer:
    """One process's (one event loop's) entry in the registry, and its shedding."""

    # Each joined socket -> when it was tracked here (on `clock`, the wall's): the longest held are moved first.
    sockets: weakref.WeakKeyDictionary = field(default_factory=weakref.WeakKeyDictionary)
    name: str = field(default_factory=lambda: processes.this().name)
    unit: str = field(default_factory=unit_name)
    clock: Callable[[], float] = time.time
    started: float = field(default_factory=time.time)
    quiet_until: float = 0.0  # no shedding before (settling after a turn that closed sockets)
    totals: deque = field(default_factory=deque)  # (when, the registry's sum) over the last two settle times
    task: asyncio.Task | None = None

    def start(self) -> None:
        if not (settings.REDIS_URL and settings.REBALANCE_INTERVAL_SECONDS > 0):
            return
        if self.task is None or self.task.done():
            self.task = asyncio.get_running_loop().create_task(self._run(), name="socket-rebalance")

    def track(self, socket) -> None:
        self.sockets.setdefault(socket, self.clock())

    def count(self) -> int:
        return sum(1 for s in list(self.sockets.keys()) if s.room_id is not None)

    def longest_held(self) -> list:
        held = [(since, n, s) for n, (s, since) in enumerate(list(self.sockets.items())) if s.room_id is not None]
        return [s for _, _, s in sorted(held, key=lambda item: item[:2])]

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
            await next_turn(interval)

    def to_close(self, entries: dict[str, tuple[int, str, float]], interval: float) -> int:
        """This turn's number to close, from the registry's entries (this process's own among them). A process
        started less than REBALANCE_WARMUP_SECONDS ago is left out: the load balancer may not send it anything
        yet (HAProxy takes a new server in after two good checks), and what is closed for it would go back to
        the others, to be moved again. Nothing while the registry's sum moved more than the tolerance in the last
        settle time."""
        now = self.clock()
        warm = now - settings.REBALANCE_WARMUP_SECONDS
        entries = {name: (count, unit) for name, (count, unit, started) in entries.items() if started <= warm}
        self.totals.append((now, sum(count for count, _ in entries.values())))
        while self.totals and self.totals[0][0] < now - 2 * settle_seconds(interval):
            self.totals.popleft()
        if now < self.quiet_until:
            return 0
        policy = Policy.from_settings()
        # Sockets on the move: a server just died (its entry counts its players until it expires, while they
        # count again where they reconnected) or sockets moved are still coming back. Wait for the sum to settle.
        recent = [t for when, t in self.totals if when >= now - settle_seconds(interval)]
        if max(recent) - min(recent) > max(policy.minimum, policy.tolerance * max(recent)):
            return 0
        return plan(self.name, entries, policy, total=max(t for _, t in self.totals))

    def settle(self, interval: float) -> None:
        """Sockets were just closed: none again before they are back and every process has counted them."""
        self.quiet_until = self.clock() + settle_seconds(interval)

    async def tick(self, client, prefix: str, interval: float) -> int:
        mine = self.count()
        await client.set(prefix + self.name, f"{mine} {self.unit} {self.started:.3f}", px=entry_ttl_ms(interval))
        entries = {**await entries_of(client, prefix), self.name: (mine, self.unit, self.started)}
        n = self.to_close(entries, interval)
        if not n:
            return 0
        candidates = eligible(self.longest_held(), set())
        if not candidates:
            return 0
        chosen = await database_sync_to_async(_close_between_questions, thread_sensitive=False, executor=db_thread)(
            candidates, n
        )
        for socket in chosen:
            self.sockets.pop(socket, None)
        if chosen:
            self.settle(interval)
            logger.info("holding %d of %d sockets: asked %d to reconnect", mine, self.totals[-1][1], len(chosen))
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
    rebalancer.track(socket)
    rebalancer.start()


def forget(socket) -> None:
    _rebalancer().sockets.pop(socket, None)
