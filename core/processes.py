"""Which server processes are alive, as each of them sees it, and what a dead one held, released at once.

A process killed outright (a SIGKILL, an out-of-memory kill, a host that loses power) runs no `finally`: what it
held in Redis (its sockets' places under the per-address cap, its entry in the registry that spreads sockets) would
count until a lease ran out, and its players' open questions would run on while they reconnect. So each process
(each event loop: one per uvicorn worker) beats: every PROCESS_HEARTBEAT_SECONDS / 3 it writes Redis's time and what
it holds (each subscriber's part, `holds`) into its field of one hash, and reads the others' fields. A process is
dead when its beat is older than PROCESS_HEARTBEAT_SECONDS, or at once when it ran on this same host (the host name
in its name) and its process id is gone or a zombie: a killed worker is seen by a survivor on its host within one
beat, one on another host within PROCESS_HEARTBEAT_SECONDS. The first survivor to delete the dead field (HDEL
answers 1 to one caller only) runs every subscriber's `on_death` once, with what the dead one last said it held.

The beat is written from a thread of its own, not from the event loop: a loop kept busy by thousands of sockets on
loaded cores ran its beat 4-9 s late, and the others took a live process for dead (its players got time back
nobody lost, its sockets' places were freed while they were open). The thread writes what the loop last said it
holds; the loop, at its own pace, refreshes that, looks for dead processes and puts back its own. A loop stuck for
good is still found: the thread stops beating once the loop has not turned for PROCESS_LOOP_STUCK_SECONDS, and
`/livez` (answered from the loop) takes it out of the load balancer meanwhile.

A process taken for dead all the same (its loop stuck past PROCESS_LOOP_STUCK_SECONDS, or Redis unreachable from it)
finds its field gone at its next beat, and each subscriber's `on_revived` puts back what it still holds. Names are
`<host>-<pid>-<random>`; hosts need distinct host names (machines and containers have them).

A worker killed outright is a zombie until its parent reaps it, and `os.kill(pid, 0)` takes a zombie for alive.
uvicorn's supervisor reaps a dead worker only between its health checks, and a check waits up to
SERVER_WORKER_HEALTHCHECK_SECONDS for a worker's answer: a worker killed while being asked stays a zombie that long.
So a zombie counts as gone (`gone`), for the metrics' sum of sockets (core/metrics.py) and for the beats above
alike.

While its supervisor is stuck so, a SIGTERM to the supervisor waits too; whoever then kills the supervisor outright
leaves its other workers running with no parent, holding the port, their game clocks closing questions. A worker
started by a supervisor (a multiprocessing child: `uvicorn --workers N`) therefore watches its parent from a thread
(`follow_parent`) and, when the parent is gone, stops as a SIGTERM stops it: its sockets are closed with 1012 (the
page reconnects, to a live server behind the balancer) and its lifespan's shutdown runs. Should that shutdown hang,
the worker exits ORPHAN_GRACE_SECONDS later.
"""

import asyncio
import json
import logging
import multiprocessing
import os
import random
import signal
import socket as socketlib
import threading
import time
import weakref
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import redis
import redis.asyncio
from django.conf import settings

from core.cancellation import next_turn, stop_if_cancelled

logger = logging.getLogger(__name__)

HOST = socketlib.gethostname()

_BEAT = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local new = redis.call('HSET', KEYS[1], ARGV[1], string.format('%.6f', now) .. ' ' .. ARGV[2])
return {tostring(now), new}
"""


@dataclass(frozen=True)
class Subscriber:
    holds: Callable[[], object] | None  # this process's part of its beat (JSON), on its loop
    # (the survivor's Redis client, the dead one's name, seconds it was silent, what it held)
    on_death: Callable[[redis.asyncio.Redis, str, float, object], Awaitable[None]] | None
    on_revived: Callable[[], Awaitable[None]] | None  # this process was taken for dead and is not


_subscribers: dict[str, Subscriber] = {}


def subscribe(part: str, *, holds=None, on_death=None, on_revived=None) -> None:
    """At import: `part` of every beat is `holds()`; `on_death` runs on the one survivor that saw a process die."""
    _subscribers[part] = Subscriber(holds=holds, on_death=on_death, on_revived=on_revived)


def hash_key() -> str:
    prefix = settings.CHANNEL_LAYERS["default"].get("CONFIG", {}).get("prefix", "quizgate")
    return f"{prefix}:processes"


def pid_of(name: str) -> int:
    return int(name.split("-")[-2])


def host_of(name: str) -> str:
    return name.rsplit("-", 2)[0]


def gone_here(name: str) -> bool:
    """A process of this host whose id no longer runs (or is a zombie, killed and not yet reaped)."""
    return host_of(name) == HOST and gone(pid_of(name))


ORPHAN_GRACE_SECONDS = 30.0

_following: list[int] = []  # the process id that follows its parent (a forked child would follow again)


def gone(pid: int) -> bool:
    """True when no process of this id runs on this machine, or it is a zombie (killed, not yet reaped)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rpartition(")")[2].split()[0] in ("Z", "X")
    except FileNotFoundError:
        if os.path.isdir("/proc/self"):
            return True
    except (OSError, ValueError, IndexError):
        return False
    try:  # no /proc on this system
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # someone else's process of that number: alive
        return False
    return False


def follow_parent() -> bool:
    """In a worker a supervisor started, stop this process when the supervisor is gone; True when it now follows."""
    parent = multiprocessing.parent_process()
    if parent is None or _following == [os.getpid()]:
        return False
    _following[:] = [os.getpid()]
    threading.Thread(target=_stop_when_gone, args=(parent,), name="quizgate-follow-parent", daemon=True).start()
    return True


def _stop_when_gone(parent) -> None:
    parent.join()  # returns when the parent's end of the sentinel pipe closes: the parent exited, however it died
    logger.warning("the server's supervisor (process %s) is gone: this worker stops", parent.pid)
    os.kill(os.getpid(), signal.SIGTERM)
    threading.Event().wait(ORPHAN_GRACE_SECONDS)
    logger.error("this worker's shutdown took over %s s with its supervisor gone: it exits", ORPHAN_GRACE_SECONDS)
    os._exit(1)


@dataclass
class Process:
    """This process's (this event loop's) beat, and its watch over the others."""

    name: str = field(default_factory=lambda: f"{HOST}-{os.getpid()}-{random.getrandbits(32):x}")
    task: asyncio.Task | None = None
    sweeping: asyncio.Task | None = None
    beats: int = 0
    client: redis.asyncio.Redis | None = None
    clock: Callable[[], float] = time.monotonic
    turned_at: float = 0.0  # when the loop last beat, on `clock`: the thread beats only while it is recent
    held: str = "{}"  # what the loop last said this process holds (JSON), for the thread to write
    key: str = ""  # the hash the thread writes into, fixed at the loop's first beat
    thread: threading.Thread | None = None
    stopping: threading.Event = field(default_factory=threading.Event)
    revivals_seen: int = 0  # the thread found this process's field gone (it was taken for dead) this many times
    revivals_done: int = 0  # ... and the loop has put its own back for this many

    def _client(self) -> redis.asyncio.Redis:
        if self.client is None:
            self.client = redis.asyncio.Redis.from_url(settings.REDIS_URL, socket_timeout=2, socket_connect_timeout=2)
            self.beat_script = self.client.register_script(_BEAT)
        return self.client

    def start(self) -> None:
        if settings.REDIS_URL and (self.task is None or self.task.done()):
            self.task = asyncio.get_running_loop().create_task(self._run(), name="process-heartbeat")

    async def _run(self) -> None:
        while True:
            try:
                await self.beat()
            except Exception:  # Redis away: the rooms' heal (lobby/realtime/heal.py) sees to that; beat again next time
                stop_if_cancelled()
                logger.debug("process heartbeat skipped a turn", exc_info=True)
            await next_turn(settings.PROCESS_HEARTBEAT_SECONDS / 3)

    def _start_thread(self) -> None:
        self.key = hash_key()
        loop = weakref.ref(asyncio.get_running_loop())
        self.thread = threading.Thread(target=self._keep_beating, args=(loop,), name="process-beat", daemon=True)
        _threads.append((self.stopping, self.thread))
        self.thread.start()

    def _keep_beating(self, loop: weakref.ref) -> None:
        """The beat's own thread: a busy event loop cannot delay it (the GIL still lets it run every few ms)."""
        client = redis.Redis.from_url(settings.REDIS_URL, socket_timeout=2, socket_connect_timeout=2)
        script = client.register_script(_BEAT)
        try:
            while not self.stopping.wait(settings.PROCESS_HEARTBEAT_SECONDS / 3):
                running = loop()
                if running is None or running.is_closed():
                    return  # the loop ended without stop() (a test's loop): nothing to beat for
                del running
                try:
                    self.beat_from_thread(script)
                except Exception:
                    logger.debug("process heartbeat (thread) skipped a turn", exc_info=True)
        finally:
            client.close()

    def beat_from_thread(self, script) -> bool:
        """One beat with what the loop last said it holds, unless the loop has not turned for too long (then the
        others find this process dead, as they would a killed one). Whether it beat."""
        if self.clock() - self.turned_at > settings.PROCESS_LOOP_STUCK_SECONDS:
            return False
        _, new = script(keys=[self.key], args=[self.name, self.held])
        if new:
            self.revivals_seen += 1
        return True

    def holding(self) -> dict:
        held = {}
        for part, subscriber in _subscribers.items():
            if subscriber.holds is not None:
                try:
                    held[part] = subscriber.holds()
                except Exception:
                    logger.exception("could not say what this process holds for %s", part)
        return held

    async def beat(self) -> int:
        """Say this process is alive, then release what dead ones held. The number of dead ones released."""
        self._client()
        self.held = json.dumps(self.holding())
        now, new = await self.beat_script(keys=[hash_key()], args=[self.name, self.held])
        self.turned_at = self.clock()
        self.beats += 1
        if self.task is not None and self.thread is None:
            self._start_thread()
        seen = self.revivals_seen  # the thread may have written the field back first
        if (new and self.beats > 1) or seen > self.revivals_done:
            self.revivals_done = seen
            logger.warning("this process (%s) was taken for dead (a late beat); putting back its own", self.name)
            for subscriber in _subscribers.values():
                if subscriber.on_revived is not None:
                    try:
                        await subscriber.on_revived()
                    except Exception:
                        stop_if_cancelled()
                        logger.exception("could not put back what this process holds")
        return await self._release_dead(float(now))

    async def sweep(self) -> int:
        """Release dead processes' holdings now (a refusal that a dead process's sockets may cause). Calls that
        come while one runs wait for it rather than run again."""
        if self.sweeping is None or self.sweeping.done():
            self.sweeping = asyncio.get_running_loop().create_task(self._sweep_now())
        return await asyncio.shield(self.sweeping)

    async def _sweep_now(self) -> int:
        seconds, micros = await self._client().time()
        return await self._release_dead(seconds + micros / 1_000_000)

    async def _release_dead(self, now: float) -> int:
        client = self._client()
        released = 0
        for raw_name, raw in (await client.hgetall(hash_key())).items():
            name = raw_name.decode()
            if name == self.name:
                continue
            at, _, held = raw.decode().partition(" ")
            silent = now - float(at)
            if silent <= settings.PROCESS_HEARTBEAT_SECONDS and not gone_here(name):
                continue
            if not await client.hdel(hash_key(), name):
                continue  # another survivor took it
            released += 1
            logger.warning("server process %s is gone (silent %.1f s): releasing what it held", name, silent)
            parts = json.loads(held or "{}")
            for part, subscriber in _subscribers.items():
                if subscriber.on_death is not None:
                    try:
                        await subscriber.on_death(client, name, silent, parts.get(part))
                    except Exception:
                        stop_if_cancelled()
                        logger.exception("could not release what %s held for %s", name, part)
        return released

    async def stop(self) -> None:
        """At shutdown: out of the hash at once (its holdings go with the process's own `finally`s)."""
        if self.task is None:
            return
        self.task.cancel()
        self.stopping.set()
        if self.thread is not None:
            await asyncio.to_thread(self.thread.join, 5)  # before the field goes: the thread would write it back
        try:
            await self._client().hdel(hash_key(), self.name)
            await self._client().aclose()
        except (redis.RedisError, OSError):
            pass


_threads: list[tuple[threading.Event, threading.Thread]] = []


def halt_threads() -> None:
    """Stop every beat thread of this process and wait for them (a test's end: its loops' beats end with it)."""
    while _threads:
        stopping, thread = _threads.pop()
        stopping.set()
        thread.join(5)


_processes: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Process] = weakref.WeakKeyDictionary()


def this() -> Process:
    """This event loop's process, beating from its first use (only with REDIS_URL)."""
    loop = asyncio.get_running_loop()
    if loop not in _processes:
        _processes[loop] = Process()
    process = _processes[loop]
    process.start()
    return process


async def stop() -> None:
    """At the server's shutdown (config/asgi.py)."""
    process = _processes.get(asyncio.get_running_loop())
    if process is not None:
        await process.stop()
