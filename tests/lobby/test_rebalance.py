"""Spreading sockets after a worker restart (lobby/realtime/rebalance.py): who is over its share, and which sockets may
be asked to reconnect (never a player who may be answering)."""

import asyncio
import uuid

import pytest
import redis.asyncio as redis
from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import connections

from lobby.models import Room
from lobby.realtime import rebalance
from lobby.realtime.rebalance import Policy, Rebalancer, eligible, to_shed
from lobby.rules.machine import Phase

POLICY = Policy(factor=1.5, minimum=10, batch=5)


def test_a_process_holding_everything_after_a_restart_sheds_half_its_excess():
    # 200 / 0: the mean is 100, the line it sheds down to 110; 90 over it, half of them this turn.
    assert to_shed(200, [0], POLICY, shedding=False) == (45, True)


def test_a_small_excess_is_shed_a_batch_at_a_time_and_never_past_the_line():
    assert to_shed(40, [0], POLICY, shedding=False) == (5, True)  # 10 over the line: half is under the batch
    assert to_shed(33, [7], POLICY, shedding=True) == (3, True)  # 3 over it: only those


def test_a_process_near_its_share_keeps_its_sockets():
    assert to_shed(110, [90], POLICY, shedding=False) == (0, False)
    # Over 1.5 x the mean but by fewer sockets than the minimum: small numbers are left alone.
    assert to_shed(8, [0], POLICY, shedding=False) == (0, False)


def test_alone_it_never_sheds():
    assert to_shed(500, [], POLICY, shedding=False) == (0, False)


def test_once_shedding_it_goes_on_to_within_the_minimum_of_the_mean_then_stops():
    # 120 / 80: not far enough over to start, but a process already shedding goes on down to mean + minimum.
    assert to_shed(120, [80], POLICY, shedding=False) == (0, False)
    assert to_shed(120, [80], POLICY, shedding=True) == (5, True)
    assert to_shed(113, [87], POLICY, shedding=True) == (3, True)
    assert to_shed(110, [90], POLICY, shedding=True) == (0, False)


def test_the_mean_is_over_every_live_process():
    # 3 processes, 300 sockets: the mean is 100; one starved at 0, so both full ones shed down to 110.
    assert to_shed(150, [150, 0], POLICY, shedding=False) == (20, True)
    assert to_shed(105, [105, 90], POLICY, shedding=False) == (0, False)


def test_a_restarted_worker_among_several_survivors_gets_its_share():
    # 4 workers, 2,000 sockets, one just restarted: each survivor holds 667, only 1.33 x the mean of 500, but one
    # process is starved, so every survivor sheds toward it.
    assert to_shed(667, [667, 666, 0], POLICY, shedding=False) == (79, True)
    # Once the restarted one holds a fair part, a survivor a little over the mean does not start again.
    assert to_shed(540, [520, 500, 440], POLICY, shedding=False) == (0, False)


class FakeSocket:
    def __init__(self, room_id, role="player", seq=3):
        self.room_id, self.role, self.seq, self.closed = room_id, role, seq, None

    async def close(self, code=None, reason=None):
        self.closed = (code, reason)


def test_only_players_of_rooms_not_in_an_open_question_are_eligible():
    asking, revealing = FakeSocket(1), FakeSocket(2)
    host, joining = FakeSocket(2, role="host"), FakeSocket(None, role=None)
    # Joined, but not yet sent its first picture: its "joined" frame (its token) may not have reached it.
    just_joined = FakeSocket(2, seq=-1)
    assert eligible([asking, revealing, host, joining, just_joined], open_question_rooms={1}) == [revealing]


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(not settings.REDIS_URL, reason="the registry of processes lives in Redis")
async def test_a_process_over_its_share_closes_players_in_the_reveal_and_none_in_an_open_question(make_room):
    asking = (await sync_to_async(make_room)()).room
    revealing = (await sync_to_async(make_room)()).room
    await sync_to_async(Room.objects.filter(pk=asking.pk).update)(phase=Phase.QUESTION, question_index=0)
    await sync_to_async(Room.objects.filter(pk=revealing.pk).update)(phase=Phase.REVEAL, question_index=0)
    mid_answer = [FakeSocket(asking.pk) for _ in range(20)]
    between = [FakeSocket(revealing.pk) for _ in range(20)]
    client = redis.Redis.from_url(settings.REDIS_URL)
    prefix = f"test-rebalance-{uuid.uuid4().hex}:"
    try:
        # Another live process, just restarted, holding nothing.
        await client.set(prefix + "replacement", 0, px=5000)
        holder = Rebalancer()
        for socket in mid_answer + between:
            holder.sockets.add(socket)
        assert await holder.tick(client, prefix, 1.0) == settings.REBALANCE_BATCH
        closed = [s for s in between if s.closed]
        assert len(closed) == settings.REBALANCE_BATCH
        assert {s.closed for s in closed} == {(rebalance.REBALANCE_CLOSE_CODE, "rebalance")}
        assert not any(s.closed for s in mid_answer)
        # Its own count is in the registry for the others, with an expiry (a killed process drops out).
        assert int(await client.get(prefix + holder.name)) == 40
        assert 0 < await client.pttl(prefix + holder.name) <= rebalance.entry_ttl_ms(1.0) == 3000
        # The closed sockets are no longer counted; the next turn closes the next batch.
        assert holder.count() == 40 - settings.REBALANCE_BATCH
        assert await holder.tick(client, prefix, 1.0) == settings.REBALANCE_BATCH
    finally:
        await client.delete(*[k async for k in client.scan_iter(match=prefix + "*")])
        await client.aclose()
        rebalance.db_thread.submit(connections.close_all).result()


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(not settings.REDIS_URL, reason="the registry of processes lives in Redis")
async def test_a_question_opening_while_sockets_are_moved_waits_until_they_are_closed(make_room, settings):
    """The host opens a question in one room while the process is closing a batch of sockets: none of that room's
    players is closed once its question is open (before, the phase was read first, then the sockets were closed
    one by one, and a player could be moved up to half a second into the question)."""
    settings.REBALANCE_MIN_EXCESS, settings.REBALANCE_BATCH = 0, 20
    rooms = [(await sync_to_async(make_room)()).room for _ in range(2)]
    for room in rooms:
        await sync_to_async(Room.objects.filter(pk=room.pk).update)(phase=Phase.REVEAL, question_index=0)
    flip = sync_to_async(
        lambda: Room.objects.filter(pk=rooms[1].pk).update(phase=Phase.QUESTION, question_index=1),
        thread_sensitive=False,
    )
    read_phase = sync_to_async(lambda pk: Room.objects.get(pk=pk).phase, thread_sensitive=False)
    opened: list[asyncio.Task] = []
    phases_at_close: list[tuple[int, str]] = []

    class Moved(FakeSocket):
        async def close(self, code=None, reason=None):
            if not opened:  # the host's "next" in the second room lands during the batch
                opened.append(asyncio.get_running_loop().create_task(flip()))
                await asyncio.sleep(0.3)
            phases_at_close.append((self.room_id, await read_phase(self.room_id)))
            await super().close(code, reason)

    client = redis.Redis.from_url(settings.REDIS_URL)
    prefix = f"test-rebalance-{uuid.uuid4().hex}:"
    try:
        for name in ("a", "b", "c"):
            await client.set(prefix + name, 0, px=5000)
        holder = Rebalancer()
        moved = [Moved(rooms[n % 2].pk) for n in range(20)]
        for socket in moved:
            holder.sockets.add(socket)
        assert await holder.tick(client, prefix, 1.0) == 15
        assert await opened[0] == 1  # the question did open, once the batch was closed
        assert len(phases_at_close) == 15
        assert all(phase != Phase.QUESTION for _, phase in phases_at_close), phases_at_close
    finally:
        await client.delete(*[k async for k in client.scan_iter(match=prefix + "*")])
        await client.aclose()
        rebalance.db_thread.submit(connections.close_all).result()
