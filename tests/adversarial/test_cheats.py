"""What a player might try: peek at the answer, answer twice or late or for someone else, act as the host,
come back after being removed, set their own score, or crowd into a full room."""

import asyncio
import json
import threading
from datetime import timedelta

import pytest
from channels.db import database_sync_to_async
from django.db import connection
from django.utils import timezone

from lobby import services
from lobby.exceptions import RoomFull
from lobby.models import Answer, Player, Room

from .helpers import Client, joined_client

pytestmark = pytest.mark.django_db(transaction=True)

CORRECT = 1  # SAMPLE's first question: "What is 2 + 2?" -> "4"


@database_sync_to_async
def _db(fn):
    return fn()


async def _started(room, sockets, *players: str, timer_seconds: int = 120):
    created = await room(timer_seconds=timer_seconds)
    code = created.room.code
    host = await sockets.host(created.room.code, created.host_token)
    joined = [await joined_client(sockets, code, name) for name in players]
    await host.send(type="start")
    for client, _ in joined:
        await client.state(phase="question")
    return created, host, joined


def _no_answer_in(text: str) -> None:
    lowered = text.lower()
    for marker in ("correct_index", "data-correct", "is_correct", "two and two make four"):
        assert marker not in lowered, marker


async def test_the_host_and_player_pages_and_the_host_socket_do_not_carry_the_answer_before_the_reveal(room, sockets):
    created, host, [(ann, _)] = await _started(room, sockets, "Ann")
    code = created.room.code
    snapshot = await host.state(phase="question")
    _no_answer_in(json.dumps(snapshot))
    assert "reveal" not in snapshot and "explanation" not in json.dumps(snapshot)

    def pages():
        from django.test import Client as HttpClient

        host_browser = HttpClient()
        session = host_browser.session
        session["host_tokens"] = {code: created.host_token}
        session.save()
        return host_browser.get(f"/host/{code}/").content.decode(), HttpClient().get(f"/play/{code}/").content.decode()

    host_html, player_html = await database_sync_to_async(pages)()
    for html in (host_html, player_html):
        _no_answer_in(html)
        assert "What is 2 + 2?" not in html  # the question only arrives over the socket, in the snapshot
    await ann.__aexit__()
    await host.__aexit__()


async def test_two_tabs_answering_at_once_store_one_answer(room, sockets):
    created, host, [(tab1, joined), (other, _)] = await _started(room, sockets, "Ann", "Ben")
    async with Client(created.room.code) as tab2:
        await tab2.send(type="resume", token=joined["token"])
        await tab2.until(lambda m: m["type"] == "joined")
        await asyncio.gather(
            tab1.send(type="answer", question=0, option=0), tab2.send(type="answer", question=0, option=CORRECT)
        )
        replies = [await tab.until(lambda m: m["type"] in ("answered", "error")) for tab in (tab1, tab2)]
        assert sorted(reply["type"] for reply in replies) == ["answered", "error"]
        assert [r["code"] for r in replies if r["type"] == "error"] == ["already_answered"]
    count = await _db(lambda: Answer.objects.filter(player_id=joined["player"]["id"]).count())
    assert count == 1
    for client in (tab1, other, host):
        await client.__aexit__()


async def test_answers_for_a_closed_or_a_future_question_are_refused(room, sockets, game_clock):
    created, host, [(ann, _), (ben, _)] = await _started(room, sockets, "Ann", "Ben")
    await ann.send(type="answer", question=1, option=0)  # the next question, not open yet
    assert (await ann.error())["code"] == "answer_refused"
    await _db(lambda: Room.objects.filter(pk=created.room.pk).update(deadline=timezone.now() - timedelta(seconds=1)))
    await ann.send(type="answer", question=0, option=CORRECT)  # past the deadline, before the clock closed it
    assert (await ann.error())["code"] == "too_late"
    reveal = await ann.state(phase="reveal")
    assert reveal["you"]["result"] is None and reveal["reveal"]["distribution"] == [0, 0, 0, 0]
    await ann.send(type="answer", question=0, option=CORRECT)  # after the reveal
    assert (await ann.error())["code"] == "too_late"
    assert await _db(lambda: Answer.objects.count()) == 0
    for client in (ann, ben, host):
        await client.__aexit__()


async def test_a_player_cannot_answer_for_another_player_or_set_a_score(room, sockets):
    created, host, [(mallory, me), (victim, them)] = await _started(room, sockets, "Mallory", "Victim")
    victim_id = them["player"]["id"]
    await mallory.send(
        type="answer",
        question=0,
        option=0,  # wrong
        player=victim_id,
        player_id=victim_id,
        score=10_000,
        points=10_000,
        correct=True,
        streak=99,
    )
    ack = await mallory.until(lambda m: m["type"] in ("answered", "error"))
    assert ack == {"type": "answered", "question": 0, "option": 0}
    answers = await _db(lambda: list(Answer.objects.values_list("player_id", "correct")))
    assert answers == [(me["player"]["id"], False)]  # stored as Mallory's, wrong
    await victim.send(type="answer", question=0, option=CORRECT)  # the victim can still answer for themselves
    assert (await victim.until(lambda m: m["type"] in ("answered", "error")))["type"] == "answered"
    reveal = await mallory.state(phase="reveal")
    assert reveal["you"]["score"] == 0
    assert reveal["you"]["result"] == {"option": 0, "correct": False, "points": 0}
    await mallory.send(type="score", score=10_000)
    assert (await mallory.error())["code"] == "unknown_type"
    await mallory.send(type="report", question=0, text="x", score=10_000, player=victim_id)
    await mallory.until(lambda m: m["type"] == "reported")
    scores = await _db(lambda: dict(Player.objects.values_list("nickname", "score")))
    assert scores["Mallory"] == 0 and scores["Victim"] > 0
    for client in (mallory, victim, host):
        await client.__aexit__()


async def test_a_player_cannot_act_as_the_host(room, make_room, sockets):
    created = await room()
    code = created.room.code
    other = await database_sync_to_async(make_room)()
    player, joined = await joined_client(sockets, code, "Mallory")
    for frame in [
        {"type": "start"},
        {"type": "next", "phase": "lobby", "index": -1},
        {"type": "close"},
        {"type": "lock", "locked": True},
        {"type": "remove", "player": joined["player"]["id"]},
    ]:
        await player.send(**frame)
        assert (await player.error())["message"] == "Only the host can do that.", frame
    for token in [joined["token"], other.host_token, created.host_token[:-2], "", None, {"room": code}]:
        async with Client(code) as fake:
            await fake.send(type="host", token=token)
            assert (await fake.error())["code"] == "bad_token", token
            await fake.send(type="start")
            assert (await fake.error())["message"] == "Only the host can do that."
    # Over HTTP, the host page and the results need the session that created the room.
    from django.test import Client as HttpClient

    def fetch(url):
        return HttpClient().get(url).status_code

    assert await database_sync_to_async(fetch)(f"/host/{code}/") == 403
    assert await database_sync_to_async(fetch)(f"/host/{code}/results.csv") == 403
    room_row = await _db(lambda: Room.objects.values("phase", "locked").get(pk=created.room.pk))
    assert room_row == {"phase": "lobby", "locked": False}
    players = await _db(lambda: list(Player.objects.values_list("removed", flat=True)))
    assert players == [False]
    await player.__aexit__()


async def test_a_removed_player_stays_out(room, sockets, host_socket):
    created = await room()
    code = created.room.code
    host = await host_socket(created)
    eve, joined = await joined_client(sockets, code, "Eve")
    async with Client(code) as tab2:  # a second tab of the same player
        await tab2.send(type="resume", token=joined["token"])
        await tab2.until(lambda m: m["type"] == "joined")
        await host.send(type="remove", player=joined["player"]["id"])
        for tab in (eve, tab2):
            assert (await tab.error())["code"] == "removed"
            assert (await tab.until(lambda m: m["type"] == "closed"))["type"] == "closed"
    for attempt in range(2):
        async with Client(code) as back:
            await back.send(type="resume", token=joined["token"])
            assert (await back.error())["code"] == "removed", attempt
            assert (await back.recv())["type"] == "closed"  # and the server hangs up
    # The host locks the room: nobody new, under any name, gets in.
    await host.send(type="lock", locked=True)
    await host.state(locked=True)
    async with Client(code) as again:
        assert (await again.join("Eve2"))["code"] == "room_locked"
    await host.__aexit__()
    removed = await _db(lambda: Player.objects.get(pk=joined["player"]["id"]).removed)
    assert removed is True


async def test_the_room_cap_holds_under_50_simultaneous_joins(room, settings, sockets):
    settings.RATELIMIT_ROOMS_JOINED_PER_IP = (1000, 60)
    assert settings.ROOM_MAX_PLAYERS == 20
    created = await room()
    code = created.room.code
    clients = [Client(code, ip=f"198.51.100.{n}") for n in range(50)]
    await asyncio.gather(*(sockets.open(client) for client in clients))
    replies = await asyncio.gather(*(client.join(f"Player {n}") for n, client in enumerate(clients)))
    outcomes = [reply["type"] if reply["type"] == "joined" else reply["code"] for reply in replies]
    assert outcomes.count("joined") == 20 and outcomes.count("room_full") == 30
    assert await _db(lambda: Player.objects.filter(room_id=created.room.pk, removed=False).count()) == 20
    await asyncio.gather(*(client.__aexit__() for client in clients))


def test_the_room_cap_holds_when_50_threads_join_at_once(make_room):
    """The same race without the consumer's single database thread: 50 connections to the database at once."""
    code = make_room().room.code
    start = threading.Barrier(50)
    outcomes: list[str] = []

    def join(n: int) -> None:
        try:
            start.wait()
            services.player_join(code=code, nickname=f"Thread {n}")
            outcomes.append("joined")
        except RoomFull:
            outcomes.append("room_full")
        except Exception as error:  # noqa: BLE001 - any other outcome fails the test below
            outcomes.append(repr(error))
        finally:
            connection.close()

    threads = [threading.Thread(target=join, args=(n,)) for n in range(50)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(set(outcomes)) == ["joined", "room_full"], outcomes
    assert outcomes.count("joined") == 20
    assert Player.objects.filter(room__code=code).count() == 20


@pytest.mark.parametrize("value", ["false", "true", 0, 1, None, [], {}])
async def test_only_a_real_boolean_locks_or_unlocks_the_room(room, sockets, value, host_socket):
    created = await room()
    host = await host_socket(created, phase="lobby", locked=False)
    await host.send(type="lock", locked=value)
    assert (await host.error())["code"] == "bad_message"
    assert await _db(lambda: Room.objects.get(pk=created.room.pk).locked) is False
    # A real boolean still works, and a player can then no longer join.
    await host.send(type="lock", locked=True)
    await host.state(locked=True)
    async with Client(created.room.code) as late:
        assert (await late.join("Late"))["code"] == "room_locked"
