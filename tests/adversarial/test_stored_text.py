"""Text a player types reaches the database: every hostile string is stored cleanly or refused with an error
frame, never a crash, on SQLite and PostgreSQL alike."""

import re

import pytest
from channels.db import database_sync_to_async

from lobby import services
from lobby.exceptions import NicknameInvalid, NicknameTaken
from lobby.models import Player, Report

from .helpers import Client, joined_client

pytestmark = pytest.mark.django_db(transaction=True)
UNSAFE = re.compile(r"[\x00-\x1f\x7f-\x9f\ud800-\udfff\u202a-\u202e\u2066-\u2069]")

HOSTILE_TEXT = [
    "a\x00b",  # PostgreSQL refuses NUL in text
    "\ud800 lone surrogate",  # not encodable as UTF-8
    "x\udfff",
    "ß" * 20,  # casefolds to 40 characters
    "ﬃ" * 20,  # casefolds to 60
    "İ" * 20,  # casefolds to 2 code points each
    "\u202eevil",
    "💥" * 20,
    "<img src=x onerror=alert(1)>",
    "'; DROP TABLE lobby_player; --",
    "tab\there",
    "z" * 5000,
]


@pytest.mark.parametrize("text", HOSTILE_TEXT, ids=range(len(HOSTILE_TEXT)))
async def test_a_hostile_nickname_joins_cleanly_or_gets_an_error(room, text):
    created = await room()
    async with Client(created.room.code) as client:
        reply = await client.join(text)
        if reply["type"] == "error":
            assert reply["code"] == "nickname_invalid"
        else:
            stored = await database_sync_to_async(lambda: Player.objects.get(pk=reply["player"]["id"]))()
            assert stored.nickname == reply["player"]["nickname"]
            assert len(stored.nickname_key) <= 20
        await client.send(type="ping")
        assert (await client.until(lambda m: m["type"] == "pong"))["type"] == "pong"


@pytest.mark.parametrize("text", HOSTILE_TEXT, ids=range(len(HOSTILE_TEXT)))
async def test_a_hostile_report_is_stored_cleanly(room, text, sockets, host_socket):
    created = await room(timer_seconds=120)
    code = created.room.code
    host = await host_socket(created)
    player, joined = await joined_client(sockets, code, "Reporter")
    await host.send(type="start")
    await player.state(phase="question")
    await host.send(type="close")
    await player.state(phase="reveal")
    await player.send(type="report", question=0, text=text)
    reply = await player.until(lambda m: m["type"] in ("reported", "error"))
    assert reply["type"] == "reported", reply
    stored = await database_sync_to_async(lambda: Report.objects.get(player_id=joined["player"]["id"]).text)()
    assert len(stored) <= 500
    assert not UNSAFE.search(stored), repr(stored)
    await player.__aexit__()


def test_casefold_expansion_cannot_make_two_players_share_a_name_or_overflow_the_key(make_room):
    created = make_room()
    joined = services.player_join(code=created.room.code, nickname="ß" * 20)
    assert len(joined.player.nickname_key) <= 20
    with pytest.raises(NicknameTaken):
        services.player_join(code=created.room.code, nickname="SS" * 10)
    with pytest.raises(NicknameInvalid):
        services.player_join(code=created.room.code, nickname="\x00")
