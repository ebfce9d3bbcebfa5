"""The game clock lives as long as the server process: its ASGI lifespan starts it once and stops it, and it closes
due questions whether or not anyone is connected."""

import asyncio
import time
from datetime import timedelta

import httpx
import pytest
from channels.db import database_sync_to_async
from django.utils import timezone

from lobby import services
from lobby.models import Room
from lobby.realtime.clock import CLOCK_TASK_NAME
from lobby.rules.machine import Action
from tests.support.communicator import Client, server_lifespan
from tests.support.servers import start_asgi

pytestmark = pytest.mark.django_db(transaction=True)

CLOCK_INTERVAL = 0.25  # the server process's GAME_CLOCK_INTERVAL


def _open_question(make_room, *, due_in: float) -> Room:
    created = make_room(timer_seconds=10)
    services.player_join(code=created.room.code, nickname="Ann")
    services.game_act(room_id=created.room.pk, action=Action.START)
    Room.objects.filter(pk=created.room.pk).update(deadline=timezone.now() + timedelta(seconds=due_in))
    return Room.objects.get(pk=created.room.pk)


def _clocks() -> list[asyncio.Task]:
    return [task for task in asyncio.all_tasks() if task.get_name() == CLOCK_TASK_NAME and not task.done()]


def _phase(room_id: int) -> str:
    return Room.objects.values_list("phase", flat=True).get(pk=room_id)


def _roundtrip(server) -> float:
    """The baseline, in the same test: how long the server process takes to answer a page on this machine now
    (its scheduling, its database connection), which is what each of its clock's ticks costs too."""
    started = time.monotonic()
    response = httpx.get(f"http://127.0.0.1:{server.port}/", timeout=30)
    assert response.status_code == 200
    return time.monotonic() - started


def test_a_restarted_server_closes_a_due_question_with_no_one_connected(make_room, tmp_path):
    """The question fell due while no server ran; the process that comes up closes it on its own, within a
    couple of clock intervals, though no socket ever connects to it."""
    room = _open_question(make_room, due_in=-1)
    server = start_asgi("asgi", log_path=tmp_path / "asgi.log", env={"GAME_CLOCK_INTERVAL": str(CLOCK_INTERVAL)})
    try:
        listening = time.monotonic()
        while _phase(room.pk) == "question" and time.monotonic() - listening < 10:
            time.sleep(0.02)
        waited = time.monotonic() - listening
        roundtrip = _roundtrip(server)
    finally:
        server.stop()
    assert _phase(room.pk) == "reveal", (tmp_path / "asgi.log").read_text()
    # Two clock intervals, and what the server takes to answer anything on this machine now (twice).
    assert waited < 2 * CLOCK_INTERVAL + 2 * roundtrip, f"closed {waited:.2f} s after the server was up"


def test_a_question_falling_due_on_a_running_server_with_no_one_connected_closes(make_room, tmp_path):
    server = start_asgi("asgi", log_path=tmp_path / "asgi.log", env={"GAME_CLOCK_INTERVAL": str(CLOCK_INTERVAL)})
    try:
        roundtrip = _roundtrip(server)
        room = _open_question(make_room, due_in=0.3)
        due = time.monotonic() + 0.3
        while _phase(room.pk) == "question" and time.monotonic() < due + 10:
            time.sleep(0.02)
        late = time.monotonic() - due
        roundtrip = max(roundtrip, _roundtrip(server))
    finally:
        server.stop()
    assert _phase(room.pk) == "reveal", (tmp_path / "asgi.log").read_text()
    assert late < 2 * CLOCK_INTERVAL + 2 * roundtrip, f"closed {late:.2f} s after its deadline"


async def test_the_clock_starts_once_per_process_and_stops_with_the_lifespan_that_started_it(make_room):
    assert _clocks() == []
    async with server_lifespan():
        assert len(_clocks()) == 1
        async with server_lifespan():  # a second lifespan in the same process starts no second clock
            assert len(_clocks()) == 1
        assert len(_clocks()) == 1  # and its shutdown leaves the first one's clock running
        code = (await database_sync_to_async(make_room)()).room.code
        async with Client(code) as player:  # a socket opening starts no clock either
            await player.send(type="ping")
            assert (await player.recv())["type"] == "pong"
            assert len(_clocks()) == 1
    assert _clocks() == []


async def test_after_shutdown_the_clock_closes_nothing(make_room):
    async with server_lifespan():
        pass
    room = await database_sync_to_async(_open_question)(make_room, due_in=-1)
    await asyncio.sleep(0.3)  # six of the test settings' clock intervals
    assert await database_sync_to_async(_phase)(room.pk) == "question"
    async with server_lifespan():
        for _ in range(100):
            if await database_sync_to_async(_phase)(room.pk) != "question":
                break
            await asyncio.sleep(0.02)
    assert await database_sync_to_async(_phase)(room.pk) == "reveal"  # the next lifespan's clock closes it
