"""A room socket that does not say who it is within WS_JOIN_TIMEOUT is closed; one that does is kept."""

import asyncio

import pytest

from tests.support.communicator import Client

pytestmark = pytest.mark.django_db(transaction=True)


async def test_a_socket_that_never_joins_is_closed_after_the_timeout(room, settings, sockets):
    settings.WS_JOIN_TIMEOUT = 0.5
    created = await room()
    idle = await sockets.open(Client(created.room.code))
    await idle.send(type="ping")  # talking is not saying who you are
    assert (await idle.recv())["type"] == "pong"
    closed = await idle.recv(timeout=3)
    assert closed == {"type": "closed", "code": 4408}


async def test_joined_players_and_hosts_are_kept_past_the_timeout(room, settings, sockets, host_socket):
    settings.WS_JOIN_TIMEOUT = 0.5
    created = await room()
    code = created.room.code
    player, _ = await sockets.join(code, "Ada")
    host = await host_socket(created)
    await asyncio.sleep(1.2)
    for peer in (player, host):
        await peer.send(type="ping")
        assert (await peer.until(lambda m: m["type"] in ("pong", "closed")))["type"] == "pong"


async def test_a_refused_join_gives_the_socket_a_new_window(room, settings, sockets):
    """A person whose nickname was taken is still there, typing another one."""
    settings.WS_JOIN_TIMEOUT = 0.8
    created = await room()
    code = created.room.code
    await sockets.join(code, "Ada")
    typist = await sockets.open(Client(code))
    await asyncio.sleep(0.5)
    await typist.send(type="join", nickname="Ada")
    assert (await typist.until(lambda m: m["type"] == "error"))["code"] == "nickname_taken"
    await asyncio.sleep(0.5)  # 1 s since it opened: past the first window, inside the second
    await typist.send(type="join", nickname="Ada2")
    assert (await typist.until(lambda m: m["type"] in ("joined", "closed")))["type"] == "joined"
    await asyncio.sleep(1)
    await typist.send(type="ping")
    assert (await typist.until(lambda m: m["type"] in ("pong", "closed")))["type"] == "pong"


async def test_a_join_the_server_is_slow_to_answer_is_not_closed_for_idling(room, settings, sockets, monkeypatch):
    """Thousands joining at once queue for the database: a phone that has sent its join and waits longer than the
    window for the answer has said who it is, and gets into the game."""
    from lobby.realtime import game_db

    settings.WS_JOIN_TIMEOUT = 0.5
    created = await room()
    slow_join = game_db.join

    async def join_behind_a_queue(**kwargs):
        await asyncio.sleep(1.2)  # the window runs out twice over while the join waits
        return await slow_join(**kwargs)

    monkeypatch.setattr(game_db, "join", join_behind_a_queue)
    waiting = await sockets.open(Client(created.room.code))
    await waiting.send(type="join", nickname="Ada")
    assert (await waiting.until(lambda m: m["type"] in ("joined", "closed"), timeout=5))["type"] == "joined"
