"""Server processes see each other die (core/processes.py): what a dead one held in Redis goes at once, released
by one survivor only, and a process that was only slow puts its own back."""

import asyncio
import os
import sys
import uuid
from pathlib import Path

import pytest
import redis as redis_sync
import redis.asyncio as redis
from django.conf import settings

from config import socket_cap
from core import processes

REPO = Path(__file__).resolve().parents[2]

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


CHILD = """
import asyncio, sys, time
import django
django.setup()
from django.conf import settings
settings.CHANNEL_LAYERS = {"default": {**settings.CHANNEL_LAYERS["default"], "CONFIG": {"prefix": sys.argv[1]}}}
from core import processes
processes.HOST = "elsewhere"  # another machine's for the survivor: only its beat tells that it is alive

async def main():
    process = processes.this()
    while process.thread is None:
        await asyncio.sleep(0.05)
    print(process.name, flush=True)
    sys.stdin.readline()
    time.sleep(float(sys.argv[2]))  # its loop blocked, as by thousands of sockets on loaded cores
    print("unblocked", flush=True)
    sys.stdin.readline()

asyncio.run(main())
"""


async def silence(client, name: str) -> float | None:
    """Seconds since `name` last beat, on Redis's clock (None: its field is gone)."""
    raw = await client.hget(processes.hash_key(), name)
    seconds, micros = await client.time()
    return None if raw is None else seconds + micros / 1_000_000 - float(raw.decode().split(" ")[0])


async def test_a_process_whose_loop_is_blocked_past_the_grace_is_not_dead_and_a_killed_one_is_found(own_hash, settings):
    settings.PROCESS_HEARTBEAT_SECONDS = 1.0
    grace = settings.PROCESS_HEARTBEAT_SECONDS
    env = {**os.environ, "PROCESS_HEARTBEAT_SECONDS": str(grace), "DJANGO_SETTINGS_MODULE": "config.test_settings"}
    child = await asyncio.create_subprocess_exec(
        sys.executable, "-c", CHILD, own_hash, str(4 * grace), env=env, cwd=REPO,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
    )  # fmt: skip
    client = redis.Redis.from_url(settings.REDIS_URL)
    survivor = processes.Process()
    try:
        name = (await child.stdout.readline()).decode().strip()
        assert processes.host_of(name) == "elsewhere"
        child.stdin.write(b"\n")
        unblocked = asyncio.ensure_future(child.stdout.readline())
        # While its loop is blocked, four times the grace: its beat thread keeps it alive for every survivor beat.
        start, end, worst = None, None, 0.0
        while not unblocked.done():
            assert await survivor.beat() == 0
            silent = await silence(client, name)
            assert silent is not None, "a live process whose loop was busy was taken for dead"
            worst = max(worst, silent)
            seconds, micros = await client.time()
            start, end = start or seconds + micros / 1e6, seconds + micros / 1e6
            await asyncio.sleep(grace / 10)
        assert (await unblocked).strip() == b"unblocked"
        assert end - start > 2 * grace  # the survivor watched well past the grace (else this proved nothing)
        assert worst <= grace
        # Killed outright (no finally): found dead by the first survivor beat after a grace of silence.
        child.kill()
        await child.wait()
        for _ in range(1000):
            silent = await silence(client, name)
            released = await survivor.beat()
            if released:
                break
            assert silent <= grace, "a process silent past the grace was not released"
            await asyncio.sleep(grace / 10)
        assert released == 1 and await silence(client, name) is None
    finally:
        if child.returncode is None:
            child.kill()
            await child.wait()
        await client.delete(processes.hash_key())
        await client.aclose()


async def test_a_loop_that_has_not_turned_for_long_stops_beating_and_is_found_dead(own_hash, settings):
    settings.PROCESS_HEARTBEAT_SECONDS = 0.5
    settings.PROCESS_LOOP_STUCK_SECONDS = 60
    now = [1000.0]
    stuck = processes.Process(clock=lambda: now[0])
    client = redis.Redis.from_url(settings.REDIS_URL)
    sync = redis_sync.Redis.from_url(settings.REDIS_URL)
    try:
        await stuck.beat()
        stuck.key = processes.hash_key()
        script = sync.register_script(processes._BEAT)
        now[0] += 59  # busy, not stuck: the thread beats for it
        before = await silence(client, stuck.name)
        assert stuck.beat_from_thread(script) and await silence(client, stuck.name) < before
        now[0] += 2  # its loop has not turned for 61 s: the thread lets it fall silent
        assert not stuck.beat_from_thread(script)
        survivor = processes.Process()
        for _ in range(1000):
            if await survivor.beat():
                break
            assert not stuck.beat_from_thread(script)
            await asyncio.sleep(0.05)
        assert await silence(client, stuck.name) is None
    finally:
        await client.delete(processes.hash_key())
        await client.aclose()
        sync.close()
