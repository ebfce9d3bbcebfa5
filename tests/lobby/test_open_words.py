"""An open question played over the real consumers: the answers stay secret until the reveal, the reveal is the
folded word cloud, and a word the host hides is gone from that moment on, from every frame and every snapshot."""

import json

import pytest
from channels.db import database_sync_to_async

from lobby.services import CreatedRoom
from lobby.tokens import host_token
from quiz.importing import parse_json
from tests.factories import RoomFactory, RoundFactory
from tests.quiz.test_kinds import _file

pytestmark = pytest.mark.django_db(transaction=True)

ROUND = [
    {"kind": "open", "question": "One word for today's lesson?", "max_answers": 2},
    {"question": "Capital of France?", "options": ["Paris", "Lyon"], "correct": "A"},
]


def _room():
    return RoomFactory(round=RoundFactory(questions=parse_json(_file(ROUND)).questions), option_seed="")


def _cloud(frame):
    return {entry["key"]: entry["count"] for entry in frame["reveal"]["cloud"]}


async def test_the_host_hides_a_word_and_no_later_frame_carries_it(sockets, host_socket):
    room = await database_sync_to_async(_room)()
    host = await host_socket(CreatedRoom(room=room, host_token=host_token(room_code=room.code)))
    ann, _ = await sockets.join(room.code, "Ann")
    ben, _ = await sockets.join(room.code, "Ben")
    await host.send(type="start")
    await ann.state(phase="question", question_index=0)
    await ann.send(type="answer", question=0, texts=["Rude Word", "Fun"])
    assert (await ann.until(lambda m: m["type"] == "answered"))["option"] == ["Rude Word", "Fun"]
    before = len(ben.received)
    await ben.send(type="answer", question=0, texts=["rude  word", "fün"])
    await ben.until(lambda m: m["type"] == "answered")
    # Nobody's words reach another phone before the reveal.
    reveal = await ben.state(phase="reveal", question_index=0)
    assert all("Rude" not in json.dumps(frame) for frame in ben.received[before:-1])
    assert _cloud(reveal) == {"rude word": 2, "fun": 2}
    assert _cloud(await host.state(phase="reveal")) == {"rude word": 2, "fun": 2}

    await host.send(type="hide_word", word="Rude Word")
    hidden = await host.until(lambda m: m["type"] == "state" and "reveal" in m and "rude word" not in _cloud(m))
    assert _cloud(hidden) == {"fun": 2}
    # The host's frame lists the players' results without the hidden words too.
    assert "rude" not in json.dumps(hidden).lower()
    assert sorted(map(tuple, (r["option"] for r in hidden["reveal"]["results"].values()))) == [("Fun",), ("fün",)]
    assert _cloud(await ben.until(lambda m: m["type"] == "state" and m["seq"] == hidden["seq"])) == {"fun": 2}
    # A phone that comes back later reads the room afresh: still hidden (its own answer is its own to see).
    await ben.send(type="sync", seq=-1)
    again = await ben.until(lambda m: m["type"] == "state" and m["seq"] >= hidden["seq"])
    assert "rude" not in json.dumps(again["reveal"]) and _cloud(again) == {"fun": 2}
    # Bad hide frames are refused with a message, and only the host may hide.
    await host.send(type="hide_word", word=["x"])
    assert (await host.error())["message"] == "Say which word to hide."
    await ann.send(type="hide_word", word="fun")
    assert (await ann.error())["message"] == "Only the host can do that."


async def test_a_second_answer_from_the_same_phone_is_refused(sockets, host_socket):
    room = await database_sync_to_async(_room)()
    host = await host_socket(CreatedRoom(room=room, host_token=host_token(room_code=room.code)))
    ann, _ = await sockets.join(room.code, "Ann")
    await sockets.join(room.code, "Ben")
    await host.send(type="start")
    await ann.state(phase="question", question_index=0)
    await ann.send(type="answer", question=0, texts=["x" * 10_000])
    assert (await ann.error())["message"] == "An answer is at most 40 characters."
    await ann.send(type="answer", question=0, texts=["one"])
    await ann.until(lambda m: m["type"] == "answered")
    await ann.send(type="answer", question=0, texts=["two"])
    assert (await ann.error())["code"] == "already_answered"


TYPED_ROUND = [
    {"kind": "typed", "question": "Capital of Australia?", "answers": ["Canberra"]},
    {"question": "Capital of France?", "options": ["Paris", "Lyon"], "correct": "A"},
]
LONG = "Sydney " + "y" * 92  # a typed answer may be 100 characters: a hide names all of it


async def test_the_host_hides_a_typed_answer_and_no_later_frame_carries_it(sockets, host_socket):
    room = await database_sync_to_async(
        lambda: RoomFactory(round=RoundFactory(questions=parse_json(_file(TYPED_ROUND)).questions), option_seed="")
    )()
    host = await host_socket(CreatedRoom(room=room, host_token=host_token(room_code=room.code)))
    phones = [(await sockets.join(room.code, name))[0] for name in ("Ann", "Ben", "Cy", "Dee")]
    await host.send(type="start")
    for phone, text in zip(phones, ["Sydney", "sydney!", "Canbera", LONG], strict=True):
        await phone.state(phase="question", question_index=0)
        await phone.send(type="answer", question=0, text=text)
        await phone.until(lambda m: m["type"] == "answered")
    reveal = (await host.state(phase="reveal"))["reveal"]
    common = {entry["key"]: entry["count"] for entry in reveal["common"]}
    assert common == {"sydney": 2, "canbera": 1, LONG.lower(): 1}

    await host.send(type="hide_word", word="sydney")
    hidden = await host.until(lambda m: m["type"] == "state" and "reveal" in m and len(m["reveal"]["common"]) == 2)
    await host.send(type="hide_word", word=LONG)
    last = await host.until(lambda m: m["type"] == "state" and m["seq"] > hidden["seq"])
    assert [(entry["text"], entry["right"]) for entry in last["reveal"]["common"]] == [("Canbera", True)]
    # Nor do the players' results the host's frame lists: a hidden answer is named nowhere in it.
    assert "ydney" not in json.dumps(last) and "yyyy" not in json.dumps(last)
    assert sorted(result["option"] or "-" for result in last["reveal"]["results"].values()) == [
        "-",
        "-",
        "-",
        "Canbera",
    ]
    frame = await phones[3].until(lambda m: m["type"] == "state" and m["seq"] == last["seq"])
    assert "Sydney" not in json.dumps(frame["reveal"]) and "sydney" not in json.dumps(frame["reveal"])
    # A fresh read of the room (a phone that comes back) keeps them hidden; its own answer is its own to see.
    await phones[0].send(type="sync", seq=-1)
    again = await phones[0].until(lambda m: m["type"] == "state" and m["seq"] >= last["seq"])
    assert again["reveal"]["common"] == last["reveal"]["common"] and again["you"]["result"]["option"] == "Sydney"
    assert "ydney" not in json.dumps({key: value for key, value in again.items() if key != "you"})
    # A hide longer than any answer is refused with a message.
    await host.send(type="hide_word", word="x" * 1000)
    assert (await host.error())["message"] == "Say which word to hide."
