"""The process's background loops stop when cancelled, even when the Redis client answers the cancel with an
error of its own: a whole run of the suite once hung at a test's end on the channel layer's watch, which had
caught such an error as "Redis down", slept and gone on, while the event loop waited for it to finish."""

import asyncio

import pytest
import redis.asyncio as redis

from core import processes
from core.cancellation import stop_if_cancelled
from lobby.realtime import heal, rebalance


async def _ping_that_turns_a_cancel_into_an_error(self, *args, **kwargs):
    try:
        await asyncio.sleep(3600)
    except asyncio.CancelledError:
        raise redis.ConnectionError("Connection closed by server.") from None


async def _call_that_swallows_a_cancel(self, *args, **kwargs):
    """A call that a cancel reaches and that returns as if nothing had happened: the request stays on the task
    (Task.cancelling()), but nothing is raised."""
    try:
        await asyncio.sleep(3600)
    except asyncio.CancelledError:
        return True


async def _stops_within(task: asyncio.Task, seconds: float) -> None:
    await asyncio.sleep(0.05)  # inside its call to Redis
    task.cancel()
    done, _ = await asyncio.wait([task], timeout=seconds)
    assert task in done, "the loop went on after its cancellation"
    assert task.cancelled()


async def test_the_channel_layer_watch_stops_when_its_cancel_comes_back_as_a_redis_error(settings, monkeypatch):
    settings.REDIS_URL = "redis://127.0.0.1:6379/15"
    monkeypatch.setattr(redis.Redis, "ping", _ping_that_turns_a_cancel_into_an_error)
    healer = heal.Healer()
    healer.start()
    await _stops_within(healer.task, seconds=2 + heal.PROBE_INTERVAL)


async def test_the_socket_registry_stops_when_its_cancel_comes_back_as_a_redis_error(settings, monkeypatch):
    settings.REDIS_URL = "redis://127.0.0.1:6379/15"
    settings.REBALANCE_INTERVAL_SECONDS = 0.05
    monkeypatch.setattr(rebalance.Rebalancer, "tick", _ping_that_turns_a_cancel_into_an_error)
    rebalancer = rebalance.Rebalancer()
    rebalancer.start()
    await _stops_within(rebalancer.task, seconds=2)


async def test_the_channel_layer_watch_stops_when_its_call_swallows_the_cancel_whole(settings, monkeypatch):
    settings.REDIS_URL = "redis://127.0.0.1:6379/15"
    monkeypatch.setattr(redis.Redis, "ping", _call_that_swallows_a_cancel)
    healer = heal.Healer()
    healer.start()
    # Without asking before its next wait, it sleeps PROBE_INTERVAL and pings on (here: for an hour).
    await _stops_within(healer.task, seconds=2)


async def test_the_heartbeat_stops_when_its_beat_swallows_the_cancel_whole(settings, monkeypatch):
    settings.REDIS_URL = "redis://127.0.0.1:6379/15"
    settings.PROCESS_HEARTBEAT_SECONDS = 30  # its next turn 10 s away
    monkeypatch.setattr(processes.Process, "beat", _call_that_swallows_a_cancel)
    process = processes.Process()
    process.start()
    await _stops_within(process.task, seconds=2)


async def test_the_socket_registry_stops_when_its_tick_swallows_the_cancel_whole(settings, monkeypatch):
    settings.REDIS_URL = "redis://127.0.0.1:6379/15"
    settings.REBALANCE_INTERVAL_SECONDS = 30
    monkeypatch.setattr(rebalance.Rebalancer, "tick", _call_that_swallows_a_cancel)
    rebalancer = rebalance.Rebalancer()
    rebalancer.start()
    await _stops_within(rebalancer.task, seconds=2)


async def test_a_loop_that_caught_the_error_is_told_it_was_cancelled():
    async def loop_once():
        try:
            await _ping_that_turns_a_cancel_into_an_error(None)
        except redis.ConnectionError:
            stop_if_cancelled()
            return "went on"

    task = asyncio.create_task(loop_once())
    await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task

    # Not cancelled: the error is the loop's to handle.
    async def failing_call():
        try:
            raise redis.ConnectionError("down")
        except redis.ConnectionError:
            stop_if_cancelled()
            return "went on"

    assert await failing_call() == "went on"
