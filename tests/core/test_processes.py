"""Server processes see each other die (core/processes.py): what a dead one held in Redis goes at once, released
by one survivor only, and a process that was only slow puts its own back."""

import uuid

import pytest
import redis.asyncio as redis
from django.conf import settings

from config import socket_cap
from core import processes

pytestmark = pytest.mark.skipif(not settings.REDIS_URL, reason="the processes' beats live in Redis")


@pytest.fixture
def own_hash(settings):
    """A channel-layer prefix of this test's own: the hash of beats holds this test's processes only."""
    prefix = f"test-processes-{uuid.uuid4().hex[:8]}"
    settings.CHANNEL_LAYERS = {"default": {**settings.CHANNEL_LAYERS["default"], "CONFIG": {"prefix": prefix}}}
    return prefix


async def test_a_process_silent_too_long_on_another_host_is_released_once_and_its_sockets_come_free(own_hash, settings):
    settings.WS_MAX_PER_IP = 2
    ip = f"192.0.2.{uuid.uuid4().hex[:8]}"
    client = redis.Redis.from_url(settings.REDIS_URL)
    try:
        # A process on another machine held both of this address's places, then went silent (its host lost power).
        dead = f"elsewhere-4242-{uuid.uuid4().hex[:8]}"
        seconds, _ = await client.time()
        await client.hset(processes.hash_key(), dead, f"{seconds - 10} {{}}")
        for n in range(2):
            await client.zadd(socket_cap._key(ip), {f"{dead}:x:{n}": seconds + 600})
        await client.sadd(socket_cap._addresses_key(dead), ip)
        survivors = [processes.Process(), processes.Process()]
        counter = socket_cap.RedisSockets(settings.REDIS_URL)
        # Another process of the same host, just started and still beating: left alone.
        await survivors[1].beat()
        # The full address is looked at again: the dead process's places are released, once, by one survivor.
        lease = await counter.acquire(ip)
        assert lease is not None
        assert [await s.beat() for s in survivors] == [0, 0]
        assert await client.hexists(processes.hash_key(), survivors[1].name)
        assert await client.zcard(socket_cap._key(ip)) == 1
        assert not await client.exists(socket_cap._addresses_key(dead))
        await counter.release(lease)
    finally:
        await client.delete(processes.hash_key(), socket_cap._key(ip))
        await client.aclose()


async def test_a_process_of_this_host_that_is_gone_is_dead_at_once(own_hash):
    client = redis.Redis.from_url(settings.REDIS_URL)
    try:
        seconds, _ = await client.time()
        gone = f"{processes.HOST}-999999999-{uuid.uuid4().hex[:8]}"  # no such process id on this host
        await client.hset(processes.hash_key(), gone, f"{seconds} {{}}")  # it beat just now
        assert processes.gone_here(gone) and not processes.gone_here(processes.Process().name)
        assert await processes.Process().beat() == 1
    finally:
        await client.delete(processes.hash_key())
        await client.aclose()


async def test_a_process_taken_for_dead_puts_its_sockets_back_at_its_next_beat(own_hash, settings):
    settings.WS_MAX_PER_IP = 1
    ip = f"192.0.2.{uuid.uuid4().hex[:8]}"
    client = redis.Redis.from_url(settings.REDIS_URL)
    try:
        counter = socket_cap.RedisSockets(settings.REDIS_URL)
        lease = await counter.acquire(ip)
        assert lease is not None
        slow = counter.process
        await slow.beat()
        # Its loop was blocked past PROCESS_HEARTBEAT_SECONDS: a survivor released its places.
        await client.hdel(processes.hash_key(), slow.name)
        await socket_cap.release_dead(client, slow.name, 10.0, None)
        assert await client.zcard(socket_cap._key(ip)) == 0
        await slow.beat()  # its field was gone: it puts back what it holds
        assert await client.zcard(socket_cap._key(ip)) == 1
        await counter.release(lease)
    finally:
        await client.delete(processes.hash_key(), socket_cap._key(ip))
        await client.aclose()
