"""Rate limits: a token bucket per WebSocket connection, and fixed-window counters per client IP kept in
Django's cache so every server process shares them.

Limits are read from settings at call time (with the defaults below), so a deployment or a test can tune them.
"""

import json
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import TypeVar

from django.conf import settings
from django.core.cache import BaseCache, caches
from django.core.signals import setting_changed
from django.utils.translation import gettext_lazy as _

# Found in core now (quiz limits by the client's address too); the lobby's callers keep these names.
from core.client_ip import UNKNOWN_IP, client_ip_from_request, client_ip_from_scope  # noqa: F401
from lobby.exceptions import GameError, RoomNotFound

logger = logging.getLogger(__name__)

T = TypeVar("T")


class RateLimited(GameError):
    code = "rate_limited"
    default_message = _("Too many tries from your network. Wait a minute and try again.")


# -- per connection: a token bucket --------------------------------------------------------------------------


class Verdict(Enum):
    ALLOW = "allow"
    DROP = "drop"  # over the limit: answer with an error frame and ignore the message
    CLOSE = "close"  # a flood far beyond the limit: close the connection


class MessageBucket:
    """About `per_minute` messages a minute with bursts of up to `burst`. Messages beyond that are dropped;
    when more than `flood` messages have been dropped within a minute the connection should be closed."""

    def __init__(self, *, per_minute: float, burst: int, flood: int, clock=time.monotonic):
        self.rate = per_minute / 60.0
        self.burst = float(burst)
        self.flood = flood
        self.clock = clock
        self.tokens = float(burst)
        self.updated = clock()
        self.dropped = 0
        self.dropped_since = 0.0

    @classmethod
    def from_settings(cls) -> "MessageBucket":
        return cls(
            per_minute=settings.WS_RATE_PER_MINUTE,
            burst=settings.WS_RATE_BURST,
            flood=settings.WS_RATE_FLOOD,
        )

    def check(self) -> Verdict:
        now = self.clock()
        self.tokens = min(self.burst, self.tokens + (now - self.updated) * self.rate)
        self.updated = now
        if self.tokens >= 1 - 1e-9:  # float error must not drop a message sent exactly on time
            self.tokens -= 1
            return Verdict.ALLOW
        if now - self.dropped_since > 60:
            self.dropped, self.dropped_since = 0, now
        self.dropped += 1
        return Verdict.CLOSE if self.dropped > self.flood else Verdict.DROP


# A ping is a small frame; anything larger is measured as a message, whatever it says.
PING_MAX_CHARS = 64


def is_ping(text_data: str | None) -> bool:
    if text_data is None or len(text_data) > PING_MAX_CHARS:
        return False
    try:
        message = json.loads(text_data)
    except ValueError:
        return False
    return isinstance(message, dict) and message.get("type") == "ping"


class ConnectionBudget:
    """A connection's budgets. Pings (a keep-alive some clients send every few seconds) have their own, so a
    client that pings often never loses an answer or a join to its pings; every other frame, a bad one too, comes
    out of the message budget. A connection that has shown the host's token (`as_host`) spends a host's budget
    instead: its actions are few and deliberate but come in runs (a host stepping through a round, setting each
    player's time), and a player's limit must never stop the game. Each budget drops and, on a flood, closes on
    its own."""

    def __init__(self, *, messages: MessageBucket, pings: MessageBucket, host: MessageBucket):
        self.messages = messages
        self.pings = pings
        self.host = host
        self.is_host = False

    @classmethod
    def from_settings(cls) -> "ConnectionBudget":
        pings = MessageBucket(
            per_minute=settings.WS_PING_PER_MINUTE, burst=settings.WS_PING_BURST, flood=settings.WS_RATE_FLOOD
        )
        host = MessageBucket(
            per_minute=settings.WS_HOST_RATE_PER_MINUTE, burst=settings.WS_HOST_RATE_BURST, flood=settings.WS_RATE_FLOOD
        )
        return cls(messages=MessageBucket.from_settings(), pings=pings, host=host)

    def as_host(self) -> None:
        self.is_host = True

    def check(self, text_data: str | None) -> Verdict:
        if is_ping(text_data):
            return self.pings.check()
        return (self.host if self.is_host else self.messages).check()


# -- per client IP: fixed-window counters in the cache ----------------------------------------------------------


@dataclass(frozen=True)
class IpLimit:
    name: str
    setting: str  # settings.<setting> = (count, window_seconds); the default is in config/settings.py, once

    def values(self) -> tuple[int, int]:
        count, window = getattr(settings, self.setting)
        return int(count), int(window)


# A school behind one NAT address joins one room together: what is counted is the rooms an address joins (an
# attacker spreading fake players over many games), not its joins into one room, which the room's own size
# caps. A wrong code is rare for a person.
ROOMS_JOINED = IpLimit("rooms", "RATELIMIT_ROOMS_JOINED_PER_IP")
CODE_GUESSES = IpLimit("guess", "RATELIMIT_CODE_GUESSES_PER_IP")


_shared_cache: BaseCache | None = None
_shared_cache_lock = threading.Lock()


def _cache() -> BaseCache:
    """One cache client for the whole process. Django's `caches["default"]` is one per async context, so every
    WebSocket consumer built its own Redis connection pool: a burst of 1,000 joins held 1,000 Redis
    connections (bench/reconnect_storm.py). Django's Redis and local-memory caches are thread-safe."""
    global _shared_cache
    if _shared_cache is None:
        with _shared_cache_lock:
            if _shared_cache is None:
                _shared_cache = caches.create_connection("default")
    return _shared_cache


def _forget_cache(*, setting: str, **kwargs) -> None:
    global _shared_cache
    if setting == "CACHES":
        _shared_cache = None


setting_changed.connect(_forget_cache)


def _key(limit: IpLimit, ip: str, window: int) -> str:
    prefix = settings.RATELIMIT_KEY_PREFIX
    return f"{prefix}:{limit.name}:{ip}:{int(time.time() // window)}"


def ip_hit(*, limit: IpLimit, ip: str) -> bool:
    """Count one event for this IP; False when that makes it exceed the limit in the current window."""
    count, window = limit.values()
    key = _key(limit, ip, window)
    cache = _cache()
    try:
        # add + incr are atomic on every shared backend (Redis, Memcached, database): no lost updates.
        cache.add(key, 0, timeout=window + 1)
        try:
            value = cache.incr(key)
        except ValueError:  # expired between add and incr
            cache.add(key, 1, timeout=window + 1)
            value = 1
    except Exception:
        # A cache outage must not lock everyone out of their game: fail open, loudly.
        logger.warning("rate limit cache unavailable; allowing %s", limit.name, exc_info=True)
        return True
    return value <= count


# The (address, room, window) marks this process has seen allowed: a room of 2,000 joining from one address
# asks Redis once per process, not once per player (each ask held a database thread for a round trip). A mark
# names its window, so the next window asks again; the set is emptied when it grows large.
_rooms_joined_here: set[str] = set()
_ROOMS_JOINED_HERE_MAX = 100_000


def _remember_joined(seen: str) -> None:
    if len(_rooms_joined_here) >= _ROOMS_JOINED_HERE_MAX:
        _rooms_joined_here.clear()
    _rooms_joined_here.add(seen)


def room_join_hit(*, ip: str, code: str) -> bool:
    """A join from this IP into the room `code`: the first into each room in the window counts against
    ROOMS_JOINED, the others are free (a room of 2,000 fills from one address). False when refused."""
    count, window = ROOMS_JOINED.values()
    seen = f"{_key(ROOMS_JOINED, ip, window)}:{code}"
    if seen in _rooms_joined_here:
        return True  # this process let that address into that room this window: no Redis round trip
    cache = _cache()
    try:
        if not cache.add(seen, 1, timeout=window + 1):
            _remember_joined(seen)
            return True  # this address is already in that room this window
    except Exception:
        logger.warning("rate limit cache unavailable; allowing %s", ROOMS_JOINED.name, exc_info=True)
        return True
    if ip_hit(limit=ROOMS_JOINED, ip=ip):
        _remember_joined(seen)
        return True
    try:
        cache.delete(seen)  # refused: its next try at this room is counted again
    except Exception:
        logger.warning("rate limit cache unavailable", exc_info=True)
    return False


def ip_blocked(*, limit: IpLimit, ip: str) -> bool:
    """True when this IP has already used up the limit in the current window (does not count an event)."""
    count, window = limit.values()
    try:
        return (_cache().get(_key(limit, ip, window)) or 0) >= count
    except Exception:
        logger.warning("rate limit cache unavailable; allowing %s", limit.name, exc_info=True)
        return False


def code_guess(*, ip: str, lookup: Callable[[], T]) -> T:
    """Look a room up by a code someone typed or put in a URL, under the client IP's code-guess limit: refused
    (RateLimited) once the IP has used it up, and each unknown code (`lookup` raising RoomNotFound) counts
    against it. The pages and the join both go through here, so codes can be enumerated by neither."""
    if ip_blocked(limit=CODE_GUESSES, ip=ip):
        raise RateLimited()
    try:
        return lookup()
    except RoomNotFound:
        ip_hit(limit=CODE_GUESSES, ip=ip)
        raise
