"""The room's WebSocket through Channels' WebsocketCommunicator, against the real database and channel layer."""

import asyncio
import json
from datetime import timedelta

import pytest
from channels.db import database_sync_to_async
from django.db.models import F
from django.utils import timezone

from config.asgi import application as full_application
from lobby.models import Room
from tests.support.communicator import Client

pytestmark = pytest.mark.django_db(transaction=True)


async def test_join_gets_a_token_and_a_snapshot_and_the_host_sees_players_arrive(room, sockets, host_socket):
    created = await room()
    code = created.room.code
    host = await host_socket(created)
    player, joined = await sockets.join(code, "Ada")
    assert joined["player"]["nickname"] == "Ada" and joined["token"]
    snap = await player.state(phase="lobby")
    assert snap["you"]["nickname"] == "Ada"
    arrived = await host.until(lambda m: m["type"] == "state" and len(m["players"]) == 1)
    assert arrived["players"][0]["nickname"] == "Ada"
    await player.__aexit__()


async def test_taken_nickname_and_full_room_get_clear_errors(room, settings, sockets):
    settings.ROOM_MAX_PLAYERS = 2
    created = await room()
    code = created.room.code
    a, _ = await sockets.join(code, "Ada")
    b, _ = await sockets.join(code, "Bob")
    async with Client(code) as c:
        await c.send(type="join", nickname="ada")
        error = await c.error()
        assert error["code"] == "room_full"  # the room is full before the name is even compared
    settings.ROOM_MAX_PLAYERS = 20
    async with Client(code) as c:
        await c.send(type="join", nickname=" ADA ")
        error = await c.error()
        assert error["code"] == "nickname_taken" and "already has that nickname" in error["message"]
        await c.send(type="join", nickname="Cy")
        await c.until(lambda m: m["type"] == "joined")
    await a.__aexit__()
    await b.__aexit__()


async def test_malformed_and_unauthorised_messages_get_error_frames_and_the_connection_survives(room):
    created = await room()
    async with Client(created.room.code) as c:
        for raw in ["not json", "[]", '{"type": 5}', '{"type": "nope"}', '{"type": "__init__"}', "x" * 20000]:
            await c.comm.send_to(text_data=raw)
            assert (await c.error())["code"] in {"bad_message", "unknown_type", "too_large"}
        await c.comm.send_to(bytes_data=b"\x00\x01")
        assert (await c.error())["code"] == "bad_message"
        await c.send(type="start")
        assert "host" in (await c.error())["message"]
        await c.send(type="host", token="forged")
        assert (await c.error())["code"] == "bad_token"
        await c.send(type="answer", question=0, option=0)
        assert (await c.error())["message"] == "Join the game first."
        await c.send(type="ping")
        assert (await c.recv())["type"] == "pong"


async def test_a_player_cannot_act_as_host(room, sockets):
    created = await room()
    player, _ = await sockets.join(created.room.code, "Mallory")
    await player.send(type="start")
    assert (await player.error())["message"] == "Only the host can do that."
    await player.send(type="remove", player=1)
    assert (await player.error())["message"] == "Only the host can do that."
    phase = await database_sync_to_async(lambda: Room.objects.get(pk=created.room.pk).phase)()
    assert phase == "lobby"
    await player.__aexit__()


async def test_answer_double_answer_and_late_answer(room, sockets, game_clock, host_socket):
    created = await room()
    code = created.room.code
    host = await host_socket(created)
    ann, _ = await sockets.join(code, "Ann")
    ben, _ = await sockets.join(code, "Ben")
    await host.send(type="start")
    await ann.state(phase="question")
    await ann.send(type="answer", question=0, option=1)
    ack = await ann.until(lambda m: m["type"] == "answered")
    assert ack == {"type": "answered", "question": 0, "option": 1}
    await ann.send(type="answer", question=0, option=2)
    assert (await ann.error())["code"] == "already_answered"
    counted = await host.until(lambda m: m["type"] == "answers")
    assert counted == {"type": "answers", "question_index": 0, "answered_count": 1}
    assert not [m for m in ann.backlog + ben.backlog if m["type"] == "answers"]  # only the host needs it
    await database_sync_to_async(
        lambda: Room.objects.filter(pk=created.room.pk).update(deadline=timezone.now() + timedelta(seconds=0.3))
    )()
    await asyncio.sleep(0.4)
    await ben.send(type="answer", question=0, option=1)
    assert (await ben.error())["code"] == "too_late"
    reveal = await ben.state(phase="reveal")
    assert reveal["you"]["answered"] is False
    assert reveal["you"]["result"] is None
    assert reveal["reveal"]["distribution"] == [0, 1, 0, 0]
    await ann.__aexit__()
    await ben.__aexit__()


async def test_reconnect_returns_to_the_same_phase_score_and_answer(room, sockets, host_socket):
    created = await room()
    code = created.room.code
    host = await host_socket(created)
    ann, joined = await sockets.join(code, "Ann")
    ben, _ = await sockets.join(code, "Ben")
    await host.send(type="start")
    await ann.state(phase="question")
    await ann.send(type="answer", question=0, option=1)
    await ann.until(lambda m: m["type"] == "answered")
    await ann.__aexit__()  # the phone goes to sleep

    async with Client(code) as again:
        await again.send(type="resume", token=joined["token"])
        back = await again.until(lambda m: m["type"] == "joined")
        assert back["player"]["nickname"] == "Ann"
        snap = await again.state(phase="question")
        assert snap["you"]["answered"] is True and snap["you"]["option"] == 1
    await host.__aexit__()  # the host's browser goes too
    host_again = await host_socket(created, phase="question")
    snap = host_again.snapshot
    assert snap["answered_count"] == 1
    await ben.__aexit__()


async def test_the_deadline_closes_the_question_when_the_host_is_gone(room, sockets, game_clock, host_socket):
    created = await room(timer_seconds=10)
    code = created.room.code
    host = await host_socket(created)
    ann, _ = await sockets.join(code, "Ann")
    await host.send(type="start")
    await ann.state(phase="question")
    await host.__aexit__()
    # Host disconnected; the server's clock alone must reveal once the deadline passes.
    await database_sync_to_async(
        lambda: Room.objects.filter(pk=created.room.pk).update(deadline=timezone.now() + timedelta(seconds=0.2))
    )()
    reveal = await ann.state(phase="reveal")
    assert reveal["reveal"]["correct_index"] == 1
    await ann.__aexit__()


async def test_a_removed_player_is_told_and_cannot_resume(room, sockets, host_socket):
    created = await room()
    code = created.room.code
    host = await host_socket(created)
    eve, joined = await sockets.join(code, "Eve")
    await eve.state(phase="lobby")
    await host.send(type="remove", player=joined["player"]["id"])
    error = await eve.error()
    assert error["code"] == "removed"
    assert (await eve.comm.receive_output(timeout=2))["type"] == "websocket.close"
    async with Client(code) as back:
        await back.send(type="resume", token=joined["token"])
        assert (await back.error())["code"] == "removed"


@pytest.mark.parametrize("option_seed", ["", "recorder"], ids=["round-order", "shuffled"])
async def test_no_message_to_a_player_says_which_option_is_correct_before_its_reveal(
    room, sockets, option_seed, host_socket
):
    """Record everything a player receives during a whole game; before each reveal, the correct option
    (its index under any key, or its text marked as correct) must be absent."""
    created = await room(option_seed=option_seed)
    code = created.room.code
    host = await host_socket(created)
    spy, _ = await sockets.join(code, "Spy")
    other, _ = await sockets.join(code, "Other")
    await host.send(type="start")
    for index in range(3):
        before = len(spy.received)
        question = await spy.state(phase="question", question_index=index)
        await other.send(type="answer", question=index, option=0)
        await spy.send(type="answer", question=index, option=1)
        reveal = await spy.state(phase="reveal", question_index=index)
        pre_reveal = spy.received[before:-1]
        assert question in pre_reveal
        for message in pre_reveal:
            text = json.dumps(message)
            assert "correct" not in text, message
            assert "reveal" not in message and "explanation" not in text, message
            assert "results" not in text and "distribution" not in text, message
        assert "correct_index" in reveal["reveal"]
        await host.send(type="next", phase="reveal", index=index)
        await spy.state(phase="leaderboard")
        await host.send(type="next", phase="leaderboard", index=index)
    final = await spy.state(phase="finished")
    assert final["you"]["rank"] in (1, 2)
    for c in (host, spy, other):
        await c.__aexit__()


async def test_websocket_from_a_foreign_origin_is_refused(room, sockets):
    created = await room()
    comm = sockets.communicator(
        full_application, f"/ws/room/{created.room.code}/", headers=[(b"origin", b"http://evil.example")]
    )
    connected, _ = await comm.connect()
    assert not connected
    comm = sockets.communicator(
        full_application,
        f"/ws/room/{created.room.code}/",
        headers=[(b"origin", b"http://localhost"), (b"host", b"localhost")],
    )
    connected, _ = await comm.connect()
    assert connected
    await comm.disconnect()


async def test_a_client_that_missed_events_catches_up_with_sync(room, sockets):
    created = await room()
    code = created.room.code
    ann, _ = await sockets.join(code, "Ann")
    current = await ann.state(phase="lobby")
    await ann.send(type="sync", seq=current["seq"])
    await ann.send(type="ping")
    assert (await ann.recv())["type"] == "pong"  # up to date: no snapshot
    # The room moves on while Ann's events are lost (simulated by writing to the database directly).
    await database_sync_to_async(
        lambda: Room.objects.filter(pk=created.room.pk).update(seq=F("seq") + 5, locked=True)
    )()
    await ann.send(type="sync", seq=current["seq"])
    fresh = await ann.state()
    assert fresh["seq"] == current["seq"] + 5 and fresh["locked"] is True
    await ann.__aexit__()


async def test_the_host_voids_a_played_question_and_players_see_the_corrected_scores(room, sockets, host_socket):
    created = await room()
    code = created.room.code
    host = await host_socket(created)
    ann, _ = await sockets.join(code, "Ann")
    await host.send(type="start")
    await ann.state(phase="question")
    await ann.send(type="void", index=0)
    assert (await ann.error())["message"] == "Only the host can do that."
    await ann.send(type="answer", question=0, option=1)  # right: 500+ points
    reveal = await ann.state(phase="reveal")
    assert reveal["you"]["score"] >= 500 and reveal["voided"] == []
    await host.send(type="void", index=0)
    corrected = await ann.state(phase="reveal", voided=[0])
    assert corrected["you"]["score"] == 0
    await host.send(type="void", index=0)
    assert (await host.error())["code"] == "void_refused"
    await host.send(type="void", index=1)  # not played yet
    assert (await host.error())["code"] == "void_refused"
    for client in (host, ann):
        await client.__aexit__()
