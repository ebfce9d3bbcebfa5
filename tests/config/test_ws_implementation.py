"""Every way the app starts (config/serve.py) runs uvicorn's sans-I/O WebSocket implementation (issue 47: its send
is cheaper, which a question's fan-out pays once per socket), and the game is served through it: a room's sockets
join, get the question with their own `you`, are acknowledged, and see the reveal."""

import pytest
from asgiref.sync import sync_to_async
from django.conf import settings

from config import serve
from tests.support.peer import Peer
from tests.support.servers import start_asgi


def test_every_start_of_the_server_uses_the_configured_websocket_implementation():
    assert settings.SERVER_WS_IMPLEMENTATION == "websockets-sansio"
    line = serve.command_line(["--host", "127.0.0.1"])
    assert line[line.index("--ws") + 1] == "websockets-sansio"
    assert serve.server_options()["ws"] == "websockets-sansio"  # the in-process servers (browser tests)
    with pytest.raises(SystemExit, match="SERVER_WS_IMPLEMENTATION"):
        serve.command_line(["--ws", "websockets"])


@pytest.mark.django_db(transaction=True)
async def test_the_server_serves_a_game_through_it(make_room, tmp_path):
    log = tmp_path / "asgi.log"
    server = start_asgi("asgi", log_path=log)
    try:
        created = await sync_to_async(make_room)(timer_seconds=10)
        code = created.room.code
        host = await Peer(server.ws_base, code).open_as_host(created.host_token)
        players = []
        for name in ("Ann", "Bob"):
            peer = await Peer(server.ws_base, code).open()
            await peer.send(type="join", nickname=name)
            await peer.until(lambda m: m["type"] == "joined")
            players.append(peer)
        await host.until(lambda m: m["type"] == "state" and len(m["players"]) == 2)
        await host.send(type="start", phase="lobby", index=-1)
        for peer, name in zip(players, ("Ann", "Bob"), strict=True):
            question = await peer.state(phase="question", question_index=0)
            assert question["you"]["nickname"] == name and question["you"]["answered"] is False
        await players[0].send(type="answer", question=0, option=1)
        assert (await players[0].until(lambda m: m["type"] == "answered"))["option"] == 1
        await players[1].send(type="answer", question=0, option=2)
        for peer, option in zip(players, (1, 2), strict=True):
            reveal = await peer.state(phase="reveal", question_index=0)
            assert reveal["you"]["option"] == option and reveal["you"]["result"]["option"] == option
        for peer in [host, *players]:
            await peer.close()
    finally:
        server.stop()
    # uvicorn warns at start when it runs its deprecated implementation; this server did not.
    assert "websockets_impl" not in log.read_text()
