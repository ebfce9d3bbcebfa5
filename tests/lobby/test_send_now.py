"""A fan-out's frame is written to the connection at once when it can take it (issue 47): through uvicorn's
sans-I/O implementation, as config/serve.py runs it, the phone gets exactly the frames in the order they were sent,
whether written at once or through the awaited ASGI send; nothing is written at once to a socket before its accept,
after its close, or while its buffer is full (the awaited send then waits, and the fan-out's timeout closes a socket
that stays full)."""

import asyncio

import pytest
import uvicorn
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from lobby.realtime.socket_guard import SocketState
from tests.support.servers import free_port


async def _serve(app):
    config = uvicorn.Config(app, host="127.0.0.1", port=free_port(), ws="websockets-sansio", lifespan="off",
                            log_level="warning")  # fmt: skip
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    async with asyncio.timeout(10):
        while not server.started:  # noqa: ASYNC110 - uvicorn's flag, no event to wait on
            await asyncio.sleep(0.01)
    return server, task, config.port


async def test_frames_written_at_once_reach_the_phone_as_the_awaited_send_writes_them():
    written = []

    async def app(scope, receive, send):
        state = SocketState(send)
        assert (await receive())["type"] == "websocket.connect"
        written.append(state.send_text_now("before the accept"))
        await state.send({"type": "websocket.accept"})
        written.append(state.send_text_now('{"a": "héllo 🦊"}'))
        await state.send({"type": "websocket.send", "text": "awaited"})
        written.append(state.send_text_now("x" * 100_000))  # larger than the buffer's high-water mark
        connection = send.__self__
        connection.pause_writing()  # the buffer full: nothing is written at once
        written.append(state.send_text_now("while full"))
        connection.resume_writing()
        await state.send({"type": "websocket.close", "code": 1000})
        written.append(state.send_text_now("after the close"))

    server, task, port = await _serve(app)
    try:
        received = []
        async with connect(f"ws://127.0.0.1:{port}/", max_size=None) as ws:
            with pytest.raises(ConnectionClosed):
                while True:
                    received.append(await ws.recv())
    finally:
        server.should_exit = True
        await task
    assert written == [False, True, True, False, False]
    assert received == ['{"a": "héllo 🦊"}', "awaited", "x" * 100_000]


def test_another_servers_send_is_always_awaited():
    async def send(message):  # an ASGI send that is not uvicorn's sans-I/O connection (a test communicator)
        raise AssertionError("not called")

    state = SocketState(send)
    state.accepted = True
    assert state.send_text_now("frame") is False
