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
