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
"""

import asyncio
import itertools
import json
import logging
import uuid
from collections import Counter
from dataclasses import dataclass

import redis.asyncio as redis
from django.conf import settings

from core.client_ip import client_ip_from_scope

logger = logging.getLogger(__name__)

REFUSED_CLOSE_CODE = 1013  # "try again later"
REFUSED_REASON = "too many connections from this address"
REFUSED_FRAME = {
    "type": "error",
    "code": "too_many_connections",
    "message": "Too many connections from your network. Close another tab, or wait a moment and try again.",
}

_ACQUIRE = """
local now = redis.call('TIME')
now = tonumber(now[1]) + tonumber(now[2]) / 1000000
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[3])
redis.call('EXPIRE', KEYS[1], math.ceil(tonumber(ARGV[2])) + 1)
return 1
"""
_RENEW = """
local now = redis.call('TIME')
now = tonumber(now[1]) + tonumber(now[2]) / 1000000
redis.call('ZADD', KEYS[1], 'XX', now + tonumber(ARGV[1]), ARGV[2])
redis.call('EXPIRE', KEYS[1], math.ceil(tonumber(ARGV[1])) + 1)
return 1
"""


@dataclass(frozen=True)
class Lease:
    ip: str
    member: str
    shared: bool  # held in Redis (False: this process's count, or not counted during a Redis outage)


def _key(ip: str) -> str:
    return f"{settings.RATELIMIT_KEY_PREFIX}:sockets:{ip}"


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
        self.process = uuid.uuid4().hex[:12]
        self.numbers = itertools.count()
        self.held: set[Lease] = set()
        self.renewer: asyncio.Task | None = None

    async def acquire(self, ip: str) -> Lease | None:
        lease = Lease(ip=ip, member=f"{self.process}:{next(self.numbers)}", shared=True)
        args = [settings.WS_MAX_PER_IP, settings.WS_SOCKET_LEASE_SECONDS, lease.member]
        try:
            taken = await self.acquire_script(keys=[_key(ip)], args=args)
        except redis.RedisError:
            logger.warning("socket count unavailable (Redis); allowing a connection from %s", ip, exc_info=True)
            return Lease(ip=ip, member="", shared=False)
        if not taken:
            return None
        self.held.add(lease)
        if self.renewer is None or self.renewer.done():
            self.renewer = asyncio.get_running_loop().create_task(self._renew_forever())
        return lease

    async def release(self, lease: Lease) -> None:
        self.held.discard(lease)
        if lease.shared:
            try:
                await self.client.zrem(_key(lease.ip), lease.member)
            except redis.RedisError:
                logger.warning("could not release a socket of %s; its lease runs out", lease.ip, exc_info=True)

    async def renew(self) -> None:
        leases = list(self.held)
        if not leases:
            return
        async with self.client.pipeline(transaction=False) as pipe:
            for lease in leases:
                await self.renew_script(
                    keys=[_key(lease.ip)], args=[settings.WS_SOCKET_LEASE_SECONDS, lease.member], client=pipe
                )
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
    await send({"type": "websocket.send", "text": json.dumps(REFUSED_FRAME)})
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
