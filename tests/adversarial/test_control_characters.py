"""A NUL or another control character in anything a player or host sends is cleaned or refused with a clear
message, never a crash; and a batch of answers never fails for one bad row: the honest player answering in the
same batch is acknowledged and stored. Run on PostgreSQL (which refuses NUL in text) as well as SQLite."""

import json
import re
from dataclasses import replace
from datetime import timedelta

import pytest
from channels.db import database_sync_to_async
from django.db import connection
from django.test import Client as HttpClient
from django.utils import timezone

from core.text import clean_line, safe_payload
from lobby import services
from lobby.exceptions import AnswerRefused
from lobby.homework import services as homework
from lobby.models import Answer, Player, Report, Room
from lobby.rules.machine import Action
from lobby.services import CreatedRoom
from lobby.tokens import host_token
from quiz.importing import parse_json
from quiz.kinds.typed import Typed
from quiz.models import Round
from tests.factories import RoomFactory, RoundFactory

from .helpers import joined_client

UNSAFE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")
TYPED = [
    {"kind": "typed", "question": "Capital of Australia?", "answers": ["Canberra"], "explanation": "", "source": ""},
    {"question": "2 + 2?", "options": ["3", "4"], "correct": "B", "explanation": "", "source": ""},
]
CONTROL = ["a\x00b", "\x00", "x\x07y\x1bz", "c\x7fd\x9f", "e\ud800f"]


def test_the_cleaning_keeps_line_breaks_for_fields_of_many_lines_and_makes_one_line_of_the_rest():
    assert safe_payload({"type": "answer", "text": "a\x00b\x01", "k\x00": ["x\ud800", 3, None]}) == {
        "type": "answer",
        "text": "a b ",
        "k ": ["x ", 3, None],
    }
    assert safe_payload("Reds\nBlues\tGreens\r\n") == "Reds\nBlues\tGreens\r\n"
    assert clean_line("  a\x00b\n\u202eevil\x9f ") == "a b evil"
    deep = json.loads("[" * 100 + "]" * 100)
    assert safe_payload(deep) is not None  # a deep message is cut, not a RecursionError


def _typed_room(**fields) -> Room:
    questions = parse_json(json.dumps({"title": "T", "questions": TYPED})).questions
    return RoomFactory(round=RoundFactory(questions=questions), option_seed="", **fields)


def _open_question(room: Room, *nicknames: str) -> list[int]:
    ids = [services.player_join(code=room.code, nickname=name).player.pk for name in nicknames]
    assert services.game_act(room_id=room.pk, action=Action.START)
    return ids


@pytest.mark.django_db(transaction=True)
def test_a_batch_with_a_nul_answer_stores_it_cleaned_and_the_honest_answer_beside_it():
    room = _typed_room(timer_seconds=120)
    cheat, honest = _open_question(room, "Cheat", "Honest")
    results = services.answers_submit(
        [
            services.AnswerIn(cheat, 0, given={"text": "Can\x00berra"}),
            services.AnswerIn(honest, 0, given={"text": "canberra"}),
        ]
    )
    assert [type(result).__name__ for result in results] == ["AnswerAck", "AnswerAck"]
    stored = dict(Answer.objects.values_list("player_id", "response"))
    assert stored == {cheat: "Can berra", honest: "canberra"}
    assert Answer.objects.get(player_id=honest).correct


@pytest.mark.django_db(transaction=True)
def test_one_row_the_database_refuses_fails_only_its_own_answer(monkeypatch):
    """Were a kind ever to hand the database a row it cannot hold, that player is told and the batch goes in."""
    room = _typed_room(timer_seconds=120)
    cheat, honest = _open_question(room, "Cheat", "Honest")
    judge = Typed.judge
    # The kind hands on the text as it came: a NUL, which PostgreSQL's jsonb refuses.
    monkeypatch.setattr(Typed, "judge", lambda *a: replace(judge(*a), response=a[2]["text"]))
    if connection.vendor != "postgresql":
        pytest.skip("SQLite stores a NUL in JSON as an escape: only PostgreSQL refuses the row")
    bad = "\x00"
    results = services.answers_submit(
        [services.AnswerIn(cheat, 0, given={"text": f"a{bad}b"}), services.AnswerIn(honest, 0, given={"text": "x"})]
    )
    assert isinstance(results[0], AnswerRefused)
    assert "could not be stored" in str(results[0])
    assert type(results[1]).__name__ == "AnswerAck"
    assert list(Answer.objects.values_list("player_id", flat=True)) == [honest]


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("text", CONTROL, ids=range(len(CONTROL)))
async def test_control_characters_over_the_socket_never_cost_an_honest_player_their_answer(text, sockets, host_socket):
    room = await database_sync_to_async(_typed_room)(timer_seconds=120)
    host = await host_socket(CreatedRoom(room=room, host_token=host_token(room_code=room.code)))
    cheat, cheat_joined = await joined_client(sockets, room.code, "Cheat")
    honest, honest_joined = await joined_client(sockets, room.code, "Honest")
    await host.send(type="start")
    await cheat.state(phase="question")
    await honest.state(phase="question")
    # Sent together: the server may store both in one batch.
    await cheat.send(type="answer", question=0, text=text)
    await honest.send(type="answer", question=0, text="Canberra")
    cheat_reply = await cheat.until(lambda m: m["type"] in ("answered", "error", "closed"))
    honest_reply = await honest.until(lambda m: m["type"] in ("answered", "error", "closed"))
    assert honest_reply == {"type": "answered", "question": 0, "option": "Canberra"}
    if cheat_reply["type"] == "error":
        assert (cheat_reply["code"], cheat_reply["message"]) == ("answer_refused", "Type an answer.")
    else:
        assert cheat_reply["type"] == "answered" and not UNSAFE.search(cheat_reply["option"])
    # Both still connected: a report with the same characters, and a nickname with them in a new socket.
    await host.send(type="close")
    await honest.state(phase="reveal")
    await cheat.send(type="report", question=0, text=text)
    assert (await cheat.until(lambda m: m["type"] in ("reported", "error")))["type"] == "reported"
    await honest.send(type="ping")
    assert (await honest.until(lambda m: m["type"] in ("pong", "closed")))["type"] == "pong"
    reports = await database_sync_to_async(lambda: list(Report.objects.values_list("text", flat=True)))()
    assert not any(UNSAFE.search(report) for report in reports)
    late = await sockets.open(type(cheat)(room.code, ip="203.0.113.9"))
    reply = await late.join(f"N{text}")
    assert reply["type"] == "joined" or reply["code"] in ("nickname_invalid", "game_over"), reply
    names = await database_sync_to_async(lambda: list(Player.objects.values_list("nickname", flat=True)))()
    assert not any(UNSAFE.search(name) for name in names)
    assert cheat_joined and honest_joined


def _homework(make_round):
    questions = parse_json(json.dumps({"title": "T", "questions": TYPED})).questions
    created = homework.assignment_create(
        round_id=make_round(questions).pk,
        deadline=timezone.now() + timedelta(days=1),
        reveal="each",
        timer_seconds=60,
    )
    Room.objects.filter(pk=created.room.pk).update(option_seed="")
    return created


def _post(client, code, path, body):
    token = client.cookies["csrftoken"].value
    return client.post(
        f"/hw/{code}/api/{path}", json.dumps(body), content_type="application/json", HTTP_X_CSRFTOKEN=token
    )


@pytest.mark.django_db
@pytest.mark.parametrize("text", CONTROL, ids=range(len(CONTROL)))
def test_control_characters_in_homework_are_cleaned_or_refused_and_the_honest_player_plays_on(make_round, text):
    code = _homework(make_round).room.code
    players = {}
    for name, nickname, answer in (("cheat", f"Cheat{text}", text), ("honest", "Honest", "canberra")):
        client = HttpClient(enforce_csrf_checks=True)
        client.get(f"/hw/{code}/")
        joined = _post(client, code, "join", {"nickname": nickname})
        if joined.status_code == 400:
            assert joined.json()["code"] == "nickname_invalid"
            joined = _post(client, code, "join", {"nickname": name})
        assert joined.status_code == 200, joined.content
        token = joined.json()["token"]
        assert _post(client, code, "start", {"token": token, "question": 0}).status_code == 200
        players[name] = _post(client, code, "answer", {"token": token, "question": 0, "text": answer})
    assert players["honest"].status_code == 200
    assert players["honest"].json()["verdict"]["correct"] is True
    cheat = players["cheat"]
    assert cheat.status_code in (200, 400), cheat.content
    if cheat.status_code == 400:
        assert cheat.json()["error"] == "Type an answer."
    stored = list(Answer.objects.values_list("response", flat=True)) + list(
        Player.objects.values_list("nickname", flat=True)
    )
    assert not any(UNSAFE.search(value) for value in stored if isinstance(value, str))


@pytest.mark.django_db
def test_a_round_imported_or_written_with_control_characters_is_stored_clean():
    text = json.dumps({"title": "Quiz\x00night", "questions": [{**TYPED[1], "question": "2\x00+\x072?"}]})
    result = parse_json(text)
    assert result.title == "Quiz night" and not result.errors
    assert result.questions[0].text == "2 + 2?"
    round_ = RoundFactory(questions=result.questions, title="Round\x00one")
    assert Round.objects.get(pk=round_.pk).title == "Round one"
