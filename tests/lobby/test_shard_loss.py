"""A channel-layer shard dies while phones connect (lobby/realtime/socket_guard.py): every handshake is answered, with
the game's picture or with a refusal the page backs off on (an error frame with retry_after, then close 1013), never
with an HTTP 500; once the shard is back every phone is in. And a socket's frames keep to the handshake: the
server's log holds no ASGI protocol error."""

import asyncio
import json
import uuid
from collections import Counter

import pytest
from asgiref.sync import sync_to_async
from django.conf import settings

from lobby.realtime.socket_guard import UNREACHABLE_CLOSE_CODE, GuardedSocket, SocketState
from tests.support.hosts import Phone
from tests.support.servers import start_asgi, start_redis

ASGI_ERRORS = ("Unexpected ASGI message", "Expected 'websocket.accept'", "Exception in ASGI application")


async def test_a_socket_sends_nothing_before_its_accept_or_after_its_close():
    sent = []

    async def send(message):
        sent.append(message["type"])

    state = SocketState(send)
    await state.send({"type": "websocket.send", "text": "early"})
    await state.send({"type": "websocket.accept"})
    await state.send({"type": "websocket.accept"})
    await state.send({"type": "websocket.send", "text": "hello"})
    await state.send({"type": "websocket.close", "code": 4012})
    await state.send({"type": "websocket.send", "text": "late"})
    await state.send({"type": "websocket.close", "code": 1000})
    assert sent == ["websocket.accept", "websocket.send", "websocket.close"]
    assert state.dropped == 2


class _FailingConsumer:
    """Stands for a consumer whose handshake reaches the channel layer: it raises what the layer raised."""

    error: BaseException

    async def __call__(self, scope, receive, send):
        await receive()  # websocket.connect
        raise self.error


class _Guarded(GuardedSocket, _FailingConsumer):
    pass


async def _handshake_through_the_guard(error):
    sent = []

    async def receive():
        return {"type": "websocket.connect"}

    async def send(message):
        sent.append(message)

    consumer = _Guarded()
    consumer.error = error
    await consumer({"type": "websocket", "headers": []}, receive, send)
    return sent


async def test_a_shard_coming_back_mid_read_is_refused_with_1013_not_a_500():
    """redis-py's reconnect race (two coroutines reading one connection) while a shard comes back: the phone gets
    the same refusal as for a dead shard, which it backs off on, where it got an HTTP 500."""
    race = RuntimeError("readuntil() called while another coroutine is already waiting for incoming data")
    sent = await _handshake_through_the_guard(race)
    assert [m["type"] for m in sent] == ["websocket.accept", "websocket.send", "websocket.close"]
    assert json.loads(sent[1]["text"])["code"] == "unavailable"
    assert sent[2]["code"] == UNREACHABLE_CLOSE_CODE


async def test_any_other_runtime_error_in_a_consumer_is_still_raised():
    with pytest.raises(RuntimeError, match="a defect"):
        await _handshake_through_the_guard(RuntimeError("a defect"))


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(not settings.REDIS_URL, reason="the layer's shards are Redis servers: set REDIS_URL")
async def test_a_dead_layer_shard_refuses_handshakes_cleanly_and_never_with_a_5xx(make_room, tmp_path):
    shards = [start_redis(), start_redis()]
    log = tmp_path / "asgi.log"
    server = start_asgi(
        "asgi",
        log_path=log,
        env={
            "CHANNEL_LAYER_REDIS_URLS": ",".join(f"redis://127.0.0.1:{s.port}/0" for s in shards),
            "CHANNEL_LAYER_PREFIX": f"qg-shard-{uuid.uuid4().hex[:8]}",
            "RATELIMIT_KEY_PREFIX": f"rl-{uuid.uuid4().hex[:8]}",
            "LOG_LEVEL": "WARNING",
        },
    )
    phones = []
    try:
        created = await sync_to_async(make_room)()
        # A phone needs the layer when its room is new to the process (the room's one subscription, its channel
        # and group on a shard each): those after the fault come to rooms of their own. A phone of a room the
        # process already reads takes no channel of its own (lobby/realtime/own_channel.py).
        later = [await sync_to_async(make_room)() for _ in range(12)]
        refusals: Counter = Counter()
        lb = server.ws_base.rstrip("/")
        phones = [Phone(lb, created.room.code, f"P{n}", "127.0.0.1", refusals) for n in range(4)]
        phones += [Phone(lb, room.room.code, f"L{n}", "127.0.0.1", refusals) for n, room in enumerate(later)]
        async with asyncio.timeout(60):
            await asyncio.gather(*(phone.open() for phone in phones[:4]))  # in before the fault
            shards[1].kill()
            connecting = [asyncio.create_task(phone.open()) for phone in phones[4:]]
            # Connects (and reconnects, backing off) meet the dead shard: at least 3 s, and on a loaded machine
            # until one of them has (handshakes can queue longer than the outage), within 20 s more.
            await asyncio.sleep(3)
            until = asyncio.get_running_loop().time() + 20
            while not refusals["unavailable"] and asyncio.get_running_loop().time() < until:  # noqa: ASYNC110 - a count the phones keep
                await asyncio.sleep(0.1)
            shards[1] = start_redis(shards[1].port)
            pictures = await asyncio.gather(*connecting)
        assert all(picture["type"] == "state" for picture in pictures)
        http = {code: n for code, n in refusals.items() if code.startswith("http ")}
        assert not http, f"handshakes answered with an HTTP error: {http}"
        assert refusals["unavailable"] > 0, f"no connect met the dead shard: {dict(refusals)}"
        print(f"refused cleanly while the shard was down: {refusals['unavailable']}; HTTP errors: none")
    finally:
        for phone in phones:
            if phone.ws is not None:
                await phone.ws.close()
        server.stop()
        for shard in shards:
            shard.kill()
    text = log.read_text(errors="replace")
    lines = text.splitlines()
    errors = [n for n, line in enumerate(lines) if any(error in line for error in ASGI_ERRORS)]
    # The first error with the traceback under it, not the log's tail (which a later warning can fill).
    assert not errors, "\n".join(lines[errors[0] : errors[0] + 60]) if errors else ""
