"""Open WebSockets per client IP, capped (WS_MAX_PER_IP) on every WebSocket route: the per-connection message
budget is only a limit if one address cannot open sockets without end.

Without Redis there is one process, and its own count is exact. With Redis the count is shared by every process:
each open socket is a member of a sorted set per IP, scored by when its lease ends. A live process renews its
sockets' leases every third of WS_SOCKET_LEASE_SECONDS and removes a socket when it closes; a process killed
outright (no `disconnect`, no `finally`) renews nothing, so its sockets stop counting within one lease. A counter
with INCR/DECR would keep a dead process's sockets for ever (or, with an expiry, forget live ones); one lease per
socket costs a sorted-set member each and one pipelined round trip per process per renewal. The check and the
add are one Lua script, so two processes cannot both take the last place; it reads Redis's clock, so servers
with skewed clocks agree. A Redis outage fails open, loudly, like the other per-IP limits.

A lease runs for WS_SOCKET_LEASE_SECONDS, but a killed process's places come free sooner: each lease is named after
its process (core/processes.py), which also notes every address it holds a place of. The survivor that sees the
process die removes its leases at once, and a connect that finds the cap full first has the survivors look for a
dead process (a killed worker's 20 players from one school reconnect to a survivor, which would otherwise refuse
them until the dead leases ran out). A refusal tells the page when to try again (`retry_after`, seconds): within
PROCESS_HEARTBEAT_SECONDS any dead process's places are released.
"""

import asyncio
import itertools
import json
import logging
import math
import uuid
import weakref
from collections import Counter
from dataclasses import dataclass

import redis.asyncio as redis
from django.conf import settings

from core import processes
from core.client_ip import client_ip_from_scope

logger = logging.getLogger(__name__)

REFUSED_CLOSE_CODE = 1013  # "try again later"
REFUSED_REASON = "too many connections from this address"
REFUSED_FRAME = {
    "type": "error",
    "code": "too_many_connections",
    "message": "Too many connections from your network. Close another tab, or wait a moment and try again.",
}

# KEYS: the address's leases, the addresses of this process's leases. ARGV: cap, lease seconds, member, address.
_ACQUIRE = """
local now = redis.call('TIME')
now = tonumber(now[1]) + tonumber(now[2]) / 1000000
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[3])
redis.call('EXPIRE', KEYS[1], math.ceil(tonumber(ARGV[2])) + 1)
redis.call('SADD', KEYS[2], ARGV[4])
redis.call('EXPIRE', KEYS[2], math.ceil(tonumber(ARGV[2])) + 1)
return 1
"""
# ARGV[3]: 'XX' to renew only a lease still there (a released one stays released), or '' to put one back.
_RENEW = """
local now = redis.call('TIME')
now = tonumber(now[1]) + tonumber(now[2]) / 1000000
if ARGV[3] == 'XX' then
  redis.call('ZADD', KEYS[1], 'XX', now + tonumber(ARGV[1]), ARGV[2])
else
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[1]), ARGV[2])
end
redis.call('EXPIRE', KEYS[1], math.ceil(tonumber(ARGV[1])) + 1)
return 1
"""
# KEYS[1]: the address's leases. ARGV[1]: a dead process's name and ':'. Removes that process's leases.
_PURGE = """
local removed = 0
for _, member in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  if string.sub(member, 1, string.len(ARGV[1])) == ARGV[1] then
    removed = removed + redis.call('ZREM', KEYS[1], member)
  end
end
return removed
"""


@dataclass(frozen=True)
class Lease:
    ip: str
    member: str
    shared: bool  # held in Redis (False: this process's count, or not counted during a Redis outage)


def _key(ip: str) -> str:
    return f"{settings.RATELIMIT_KEY_PREFIX}:sockets:{ip}"


def _addresses_key(process: str) -> str:
    """The addresses a process holds leases of: where a survivor looks for them when it dies."""
    return f"{settings.RATELIMIT_KEY_PREFIX}:sockets-of:{process}"


def retry_after() -> float:
    """The seconds a refused page waits before it tries again: a dead process's places are free by then."""
    return settings.PROCESS_HEARTBEAT_SECONDS if settings.REDIS_URL else 1.0


def refused_frame() -> dict:
    return {**REFUSED_FRAME, "retry_after": retry_after()}


# A connect's place asked of Redis with others in one round trip (`RedisSockets._take_pending`), so many at most.
_TAKEN_AT_ONCE = 500
_UNAVAILABLE = object()  # Redis did not answer: the socket is let in (fails open, as the other per-IP limits do)


class LocalSockets:
    """One process's open sockets per IP."""

    def __init__(self):
        self.open: Counter[str] = Counter()

    async def acquire(self, ip: str) -> Lease | None:
        if self.open[ip] >= settings.WS_MAX_PER_IP:
            return None
        self.open[ip] += 1
        return Lease(ip=ip, member="", shared=False)

    async def release(self, lease: Lease) -> None:
        self.open[lease.ip] -= 1
        if self.open[lease.ip] <= 0:
            del self.open[lease.ip]


class RedisSockets:
    """Every process's open sockets per IP, as leases in Redis (see the module's docstring)."""

    def __init__(self, url: str):
        # A blocking pool: a burst of connects waits for one of its connections. The default pool raises past 100
        # connections, and a failing count lets the socket in, so a burst would have walked past the cap. Ten
        # connections keep up with a 1,000-player reconnect storm (bench/reconnect_storm.py).
        self.client = redis.Redis(connection_pool=redis.BlockingConnectionPool.from_url(url, max_connections=10))
        self.acquire_script = self.client.register_script(_ACQUIRE)
        self.renew_script = self.client.register_script(_RENEW)
        # The process's name (core/processes.py) first, so a survivor can tell its leases; then this counter's.
        self.process = processes.this()
        self.prefix = f"{self.process.name}:{uuid.uuid4().hex[:8]}"
        self.numbers = itertools.count()
        self.held: set[Lease] = set()
        self.renewer: asyncio.Task | None = None
        self.pending: list[tuple[Lease, asyncio.Future]] = []  # connects waiting for their place (`_take`)
        self.taker: asyncio.Task | None = None
        _counters.add(self)

    async def acquire(self, ip: str) -> Lease | None:
        taken = await self._take(ip)
        if taken is None:
            # Full: maybe of a dead process's sockets. The survivors release those first, then it asks again.
            try:
                if await self.process.sweep():
                    taken = await self._take(ip)
            except redis.RedisError:
                logger.warning("could not look for dead processes' sockets", exc_info=True)
        return taken

    async def _take(self, ip: str) -> Lease | None:
        lease = Lease(ip=ip, member=f"{self.prefix}:{next(self.numbers)}", shared=True)
        waiting = asyncio.get_running_loop().create_future()
        self.pending.append((lease, waiting))
        if self.taker is None or self.taker.done():
            self.taker = asyncio.get_running_loop().create_task(self._take_pending())
        taken = await waiting
        if taken is _UNAVAILABLE:
            return Lease(ip=ip, member="", shared=False)
        if not taken:
            return None
        self.held.add(lease)
        if self.renewer is None or self.renewer.done():
            self.renewer = asyncio.get_running_loop().create_task(self._renew_forever())
        return lease

    async def _take_pending(self) -> None:
        """The connects waiting for a place, many in one round trip (each script is atomic, and they run in order,
        so the cap holds). A room of 10,000 filling up sent 5,000 scripts a process one at a time through the
        pool's ten connections: the handshakes waited past the phones' patience (bench/ws_load.py)."""
        while self.pending:
            batch, self.pending = self.pending[:_TAKEN_AT_ONCE], self.pending[_TAKEN_AT_ONCE:]
            try:
                async with self.client.pipeline(transaction=False) as pipe:
                    for lease, _waiting in batch:
                        args = [settings.WS_MAX_PER_IP, settings.WS_SOCKET_LEASE_SECONDS, lease.member, lease.ip]
                        keys = [_key(lease.ip), _addresses_key(self.process.name)]
                        await self.acquire_script(keys=keys, args=args, client=pipe)
                    results = await pipe.execute()
            except redis.RedisError:
                logger.warning(
                    "socket count unavailable (Redis); allowing %d connection(s) from %s",
                    len(batch), ", ".join(sorted({lease.ip for lease, _ in batch})[:5]), exc_info=True,
                )  # fmt: skip
                results = [_UNAVAILABLE] * len(batch)
            for (_lease, waiting), result in zip(batch, results, strict=True):
                if not waiting.done():  # its connect gave up meanwhile: the lease runs out unrenewed
                    waiting.set_result(result)

    async def release(self, lease: Lease) -> None:
        self.held.discard(lease)
        if lease.shared:
            try:
                await self.client.zrem(_key(lease.ip), lease.member)
            except redis.RedisError:
                logger.warning("could not release a socket of %s; its lease runs out", lease.ip, exc_info=True)

    async def renew(self, *, put_back: bool = False) -> None:
        """Renew this counter's leases; `put_back` also those a survivor removed, taking this process for dead."""
        leases = list(self.held)
        if not leases:
            return
        seconds = settings.WS_SOCKET_LEASE_SECONDS
        async with self.client.pipeline(transaction=False) as pipe:
            for lease in leases:
                await self.renew_script(
                    keys=[_key(lease.ip)], args=[seconds, lease.member, "" if put_back else "XX"], client=pipe
                )
            addresses = _addresses_key(self.process.name)
            pipe.sadd(addresses, *{lease.ip for lease in leases})
            pipe.expire(addresses, math.ceil(seconds) + 1)
            await pipe.execute()

    async def _renew_forever(self) -> None:
        while self.held:
            await asyncio.sleep(settings.WS_SOCKET_LEASE_SECONDS / 3)
            try:
                await self.renew()
            except redis.RedisError:
                logger.warning("could not renew %d socket leases", len(self.held), exc_info=True)


_local = LocalSockets()
_shared: dict[tuple[asyncio.AbstractEventLoop, str], RedisSockets] = {}
_counters: weakref.WeakSet[RedisSockets] = weakref.WeakSet()


async def release_dead(client, name: str, silent: float, held: object) -> None:
    """A survivor saw process `name` die: its leases, under every address it held places of, go now."""
    purge = client.register_script(_PURGE)
    addresses = _addresses_key(name)
    freed = 0
    for ip in await client.smembers(addresses):
        freed += await purge(keys=[_key(ip.decode())], args=[f"{name}:"])
    await client.delete(addresses)
    if freed:
        logger.warning("released %d socket place(s) of the dead process %s", freed, name)


async def put_back() -> None:
    """This process was taken for dead: its live sockets count again."""
    process = processes.this()
    for counter in [c for c in list(_counters) if c.process is process]:
        await counter.renew(put_back=True)


processes.subscribe("sockets", on_death=release_dead, on_revived=put_back)


def open_sockets() -> LocalSockets | RedisSockets:
    """This process's counter: Redis's when there is one. A Redis client belongs to one event loop."""
    if not settings.REDIS_URL:
        return _local
    key = (asyncio.get_running_loop(), settings.REDIS_URL)
    if key not in _shared:
        _shared[key] = RedisSockets(settings.REDIS_URL)
    return _shared[key]


async def _refuse(receive, send) -> None:
    """Accept, say why in a frame the pages show, and close: a refusal at the handshake reaches no one."""
    message = await receive()
    if message["type"] != "websocket.connect":
        return
    await send({"type": "websocket.accept"})
    await send({"type": "websocket.send", "text": json.dumps(refused_frame())})
    await send({"type": "websocket.close", "code": REFUSED_CLOSE_CODE, "reason": REFUSED_REASON})


class PerIpSocketCap:
    """ASGI middleware for WebSocket routes: at most WS_MAX_PER_IP open sockets per client IP."""

    def __init__(self, application):
        self.application = application

    async def __call__(self, scope, receive, send):
        if scope["type"] != "websocket":
            return await self.application(scope, receive, send)
        ip = client_ip_from_scope(scope)
        counter = open_sockets()
        lease = await counter.acquire(ip)
        if lease is None:
            logger.info("refused a WebSocket from %s: %d open already", ip, settings.WS_MAX_PER_IP)
            return await _refuse(receive, send)
        try:
            return await self.application(scope, receive, send)
        finally:
            await counter.release(lease)
