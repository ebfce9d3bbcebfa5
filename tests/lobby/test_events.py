"""The host's answer counter: the newest count at once, then at most one more every interval."""

import asyncio
import time

from channels.layers import get_channel_layer

from lobby import events


async def test_counts_arriving_together_reach_the_host_as_the_first_and_then_the_latest(monkeypatch):
    monkeypatch.setattr(events, "HOST_COUNT_INTERVAL", 0.2)
    layer = get_channel_layer()
    group = events.host_group("CNTTST")
    host = await layer.new_channel()
    await layer.group_add(group, host)
    loop = asyncio.get_running_loop()

    def committed(count):  # a batch of answers committed: its thread hands the new count to the loop
        events._keep_latest(loop, group, {"type": events.ROOM_ANSWERS, "question_index": 0, "answered_count": count})

    started = time.monotonic()
    committed(1)
    first = await asyncio.wait_for(layer.receive(host), 2)
    for count in range(2, 6):  # four more batches while the first count is still fresh
        committed(count)
    latest = await asyncio.wait_for(layer.receive(host), 2)
    assert (first["answered_count"], latest["answered_count"]) == (1, 5)
    assert time.monotonic() - started >= 0.2  # one interval after the first, carrying the newest count
    try:
        extra = await asyncio.wait_for(layer.receive(host), 0.5)
    except TimeoutError:
        extra = None
    assert extra is None
    events._keep_latest(loop, group, {"type": events.ROOM_ANSWERS, "question_index": 1, "answered_count": 1})
    assert (await asyncio.wait_for(layer.receive(host), 2))["question_index"] == 1  # quiet again: sent at once
    await layer.group_discard(group, host)


def test_a_big_rooms_lobby_pictures_are_spaced_so_its_phones_frames_stay_bounded():
    """A room's lobby picture is a frame to each of its phones: small rooms keep their pace (the host's screen four
    times a second, the phones once a second); a room of 10,000 gets its phones a picture every 4 s."""
    assert events.coalesce_intervals(20) == (0.25, 1.0)
    assert events.coalesce_intervals(2000) == (0.25, 1.0)
    assert events.coalesce_intervals(10_000) == (1.0, 4.0)
    for players in (3000, 10_000, 50_000):
        hosts, phones = events.coalesce_intervals(players)
        assert players / phones <= events.PLAYERS_FRAMES_A_SECOND
