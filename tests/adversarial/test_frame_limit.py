"""The server's own frame limit (WS_SERVER_MAX_BYTES, set by config/serve.py): a frame over it is closed by uvicorn
before it is read, so a huge frame costs the server nothing; a frame between the app's cap and the server's still
gets the app's clear "too large" reply."""

import json
from pathlib import Path

import pytest
from asgiref.sync import sync_to_async
from django.conf import settings
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from quiz.jobs.tokens import generation_token
from tests.factories import GenerationJobFactory
from tests.support.servers import start_asgi

pytestmark = pytest.mark.django_db(transaction=True)

MIB = 1024 * 1024


def _peak_rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError("no VmHWM")


@pytest.fixture
def server(tmp_path):
    proc = start_asgi("asgi", log_path=tmp_path / "asgi.log")
    yield proc
    proc.stop()


async def _open(server, path: str):
    return await connect(f"{server.ws_base}{path}", origin=f"http://127.0.0.1:{server.port}", open_timeout=5)


async def _closed_by_the_server(ws, frame: str) -> int:
    try:
        await ws.send(frame)
        while True:
            await ws.recv()
    except ConnectionClosed as closed:
        assert closed.rcvd is not None, "the server did not close the connection itself"
        return closed.rcvd.code


async def test_a_frame_over_the_servers_cap_is_closed_by_the_server_before_it_is_read(server):
    assert settings.WS_SERVER_MAX_BYTES < MIB
    ws = await _open(server, "/ws/room/ABCDEF/")
    await ws.send('{"type": "ping"}')
    await ws.recv()  # the app is loaded and serving
    peak_before = _peak_rss_kb(server.popen.pid)
    # 1009 "message too big" comes from the server: the app never saw the frame (it would answer "too_large").
    assert await _closed_by_the_server(ws, "x" * MIB) == 1009
    ws = await _open(server, "/ws/room/ABCDEF/")
    assert await _closed_by_the_server(ws, "x" * (8 * MIB)) == 1009
    # Read whole (uvicorn's own 16 MiB limit) the 8 MiB frame lifted the peak by about 3 times its size.
    grown_kb = _peak_rss_kb(server.popen.pid) - peak_before
    assert grown_kb < 2048, f"the server's peak memory grew by {grown_kb} KB for frames of 1 and 8 MiB"
    # The server is fine: the next connection is served.
    ws = await _open(server, "/ws/room/ABCDEF/")
    await ws.send('{"type": "ping"}')
    assert json.loads(await ws.recv())["type"] == "pong"
    await ws.close()


async def test_a_frame_between_the_apps_cap_and_the_servers_gets_the_apps_clear_reply(server):
    size = settings.WS_MAX_MESSAGE_BYTES + 8 * 1024
    assert settings.WS_MAX_MESSAGE_BYTES < size < settings.WS_SERVER_MAX_BYTES
    ws = await _open(server, "/ws/room/ABCDEF/")
    await ws.send(json.dumps({"type": "ping", "padding": "x" * size}))
    reply = json.loads(await ws.recv())
    assert reply == {"type": "error", "code": "too_large", "message": "That message is too large."}
    await ws.send('{"type": "ping"}')  # and the connection lives on
    assert json.loads(await ws.recv())["type"] == "pong"
    await ws.close()


async def test_the_generation_socket_has_the_servers_cap_too(server):
    job = await sync_to_async(GenerationJobFactory)(owner_key="k", count=3, topic="Birds")
    ws = await _open(server, f"/ws/generation/{job.pk}/?t={generation_token(job_id=job.pk)}")
    assert json.loads(await ws.recv())["type"] == "progress"
    assert await _closed_by_the_server(ws, "x" * MIB) == 1009
