"""Every WebSocket message type, fuzzed: each hostile frame gets an error frame (or is ignored), the connection
answers the next ping, and afterwards the room still plays normally."""

import json

import pytest
from channels.db import database_sync_to_async

from lobby.models import Answer, Player, Room
from lobby.rules.machine import TIME_PERCENTS, Phase

from .fuzzing import FIELDS, fuzz, message, raw_frames, record
from .helpers import KNOWN_ERROR_CODES, Client, joined_client

pytestmark = pytest.mark.django_db(transaction=True)

HOST_TYPES = [
    *["start", "next", "close", "remove", "lock", "void", "extra_time", "decline_time", "speed_bonus", "reading"],
    "team_talk",
    "hide_word",
]


@pytest.fixture(autouse=True)
def generous_limits(settings):
    # The fuzz sends hundreds of frames a second on one connection; the limits have their own tests.
    settings.WS_RATE_PER_MINUTE = 10**6
    settings.WS_RATE_BURST = 10**6
    settings.WS_PING_PER_MINUTE = 10**6  # each frame is followed by a ping (Client.exchange)
    settings.WS_PING_BURST = 10**6
    settings.RATELIMIT_ROOMS_JOINED_PER_IP = (10**6, 60)
    settings.RATELIMIT_CODE_GUESSES_PER_IP = (10**6, 60)


def assert_handled(replies: list[dict], *, allowed: set[str]) -> None:
    for reply in replies:
        assert reply["type"] != "closed", replies
        assert reply["type"] in allowed | {"error", "state"}, reply
        if reply["type"] == "error":
            assert reply["code"] in KNOWN_ERROR_CODES, reply
            assert isinstance(reply["message"], str) and reply["message"], reply
            assert "Traceback" not in reply["message"] and "Error" not in reply["message"], reply


def checker(kind: str, client: Client, *, allowed: set[str] = frozenset(), extra=None):
    async def check(frame):
        if isinstance(frame, bytes):
            replies = await client.exchange(data=frame)
        else:
            replies = await client.exchange(text=frame)
        assert_handled(replies, allowed=set(allowed))
        if extra is not None:
            await extra(frame, replies)
        record(kind, frame, replies)

    return check


@database_sync_to_async
def _db(fn):
    return fn()


async def _game(room, sockets, *, phase: str):
    """A room with a host, a fuzzing player and a bystander, moved to `phase`."""
    created = await room(timer_seconds=120)
    code = created.room.code
    host = await sockets.host(created.room.code, created.host_token, kind=Client)
    fuzzer, fuzzer_joined = await joined_client(sockets, code, "Fuzzer")
    bystander, bystander_joined = await joined_client(sockets, code, "Bystander")
    if phase in ("question", "reveal"):
        await host.send(type="start")
        await bystander.state(phase="question")
    if phase == "reveal":
        await host.send(type="close")
        await bystander.state(phase="reveal")
    return created, host, (fuzzer, fuzzer_joined), (bystander, bystander_joined)


async def test_fuzz_answer(room, sockets):
    created, host, (fuzzer, me), (bystander, other) = await _game(room, sockets, phase="question")
    useful = [0, 1, 2, 3, -1, me["player"]["id"], other["player"]["id"]]
    await fuzz(message("answer", useful=useful), checker("answer", fuzzer, allowed={"answered"}))
    # At most one answer, always the fuzzer's own, never the bystander's.
    rows = await _db(lambda: list(Answer.objects.filter(room=created.room).values("player_id", "question_index")))
    assert all(row == {"player_id": me["player"]["id"], "question_index": 0} for row in rows) and len(rows) <= 1
    scores = await _db(lambda: list(Player.objects.filter(room=created.room).values_list("score", flat=True)))
    assert scores == [0, 0]  # nothing scored before the question closes, whatever the frames said
    await bystander.send(type="answer", question=0, option=1)
    assert (await bystander.until(lambda m: m["type"] in ("answered", "error")))["type"] == "answered"
    for client in (host, fuzzer, bystander):
        await client.__aexit__()


async def test_fuzz_report(room, sockets):
    created, host, (fuzzer, _), (bystander, _) = await _game(room, sockets, phase="reveal")
    await fuzz(
        message("report", useful=[0, 1, 2, -1, 3, "Wrong answer"]), checker("report", fuzzer, allowed={"reported"})
    )
    await bystander.send(type="report", question=0, text="The answer is wrong")
    assert (await bystander.until(lambda m: m["type"] in ("reported", "error")))["type"] == "reported"
    for client in (host, fuzzer, bystander):
        await client.__aexit__()


@pytest.mark.parametrize("kind", HOST_TYPES)
async def test_fuzz_host_actions(room, kind, sockets):
    created, host, (fuzzer, me), (bystander, other) = await _game(room, sockets, phase="lobby")
    useful = ["lobby", "question", "reveal", "leaderboard", "finished", -1, 0, 1, 2, 3, me["player"]["id"]]
    useful += [100, 150, 200] if kind == "extra_time" else []
    await fuzz(message(kind, useful=useful), checker(kind, host), max_examples=50)
    # Whatever the frames said, every player's time is one the game offers.
    times = await _db(lambda: set(Player.objects.filter(room=created.room).values_list("time_percent", flat=True)))
    assert times <= set(TIME_PERCENTS)
    # ...and the moment to read one it offers (0-10 s).
    assert 0 <= await _db(lambda: Room.objects.get(pk=created.room.pk).reading_seconds) <= 10
    # The room is in a legal position, and a host coming back gets a coherent picture of it.
    state = await _db(lambda: Room.objects.values("phase", "question_index", "question_count").get(pk=created.room.pk))
    assert state["phase"] in set(Phase)
    assert -1 <= state["question_index"] < state["question_count"]
    async with Client(created.room.code) as again:
        await again.send(type="host", token=created.host_token)
        snapshot = await again.state()
        assert snapshot["phase"] == state["phase"]
    assert (await host.exchange(text='{"type": "lock", "locked": false}')) is not None
    for client in (host, fuzzer, bystander):
        await client.__aexit__()


async def _named_teams_game(make_round, sockets):
    """A room with named teams, its host, a fuzzing player and a bystander in the first team; and another room's
    teams (a switch to one of those must be refused)."""
    from lobby import services

    def create():
        made = services.room_create(
            round_id=make_round().pk, timer_seconds=120, teams_mode="named", team_names="Owls\nFoxes"
        )
        other = services.room_create(round_id=make_round().pk, timer_seconds=120, teams_mode="named", team_names="A\nB")
        return (
            made,
            list(made.room.teams.values_list("pk", flat=True)),
            list(other.room.teams.values_list("pk", flat=True)),
        )

    created, mine, others = await _db(create)
    code = created.room.code
    host = await sockets.host(code, created.host_token, kind=Client)
    players = []
    for nickname in ("Fuzzer", "Bystander"):
        client = await sockets.open(Client(code))
        await client.send(type="join", nickname=nickname, team=mine[0])
        joined = await client.until(lambda m: m["type"] in ("joined", "error"))
        assert joined["type"] == "joined", joined
        players.append((client, joined))
    return created, host, players, mine, others


@pytest.mark.parametrize("phase", ["lobby", "question"])
async def test_fuzz_team(make_round, phase, sockets):
    created, host, [(fuzzer, me), (bystander, other)], mine, others = await _named_teams_game(make_round, sockets)
    if phase == "question":
        await host.send(type="start")
        await bystander.state(phase="question")
    useful = [*mine, *others, me["player"]["id"], other["player"]["id"], 0, -1]
    await fuzz(message("team", useful=useful), checker("team", fuzzer), max_examples=60)
    teams = await _db(lambda: dict(Player.objects.filter(room=created.room).values_list("nickname", "team_id")))
    # The fuzzer is in one of its room's teams (after the start: the one it joined), the bystander never moved.
    assert teams["Bystander"] == mine[0]
    assert teams["Fuzzer"] in (set(mine) if phase == "lobby" else {mine[0]})
    for client in (host, fuzzer, bystander):
        await client.__aexit__()


async def test_fuzz_team_talk_in_a_room_with_teams(make_round, sockets):
    created, host, [(fuzzer, _), (bystander, _)], _, _ = await _named_teams_game(make_round, sockets)
    useful = [0, 5, 10, 30, 31, -1, 15]
    await fuzz(message("team_talk", useful=useful), checker("team_talk", host), max_examples=50)
    # Whatever the frames said, the team talk is one the game offers (0-30 s), and a player cannot set it.
    assert 0 <= await _db(lambda: Room.objects.get(pk=created.room.pk).team_talk_seconds) <= 30
    await fuzzer.send(type="team_talk", seconds=0)
    assert (await fuzzer.error())["message"] == "Only the host can do that."
    for client in (host, fuzzer, bystander):
        await client.__aexit__()


async def test_fuzz_join_into_named_teams_each_from_a_fresh_connection(make_round, settings, sockets):
    settings.ROOM_MAX_PLAYERS = 10_000
    created, host, _, mine, others = await _named_teams_game(make_round, sockets)

    async def check(frame):
        async with Client(created.room.code) as client:
            replies = await client.exchange(text=frame)
        assert_handled(replies, allowed={"joined"})
        record("join", frame, replies)

    await fuzz(message("join", useful=["Ada", "Bo", *mine, *others]), check, max_examples=60)
    # Everyone who got in is in one of this room's teams.
    teams = await _db(lambda: set(Player.objects.filter(room=created.room).values_list("team_id", flat=True)))
    assert teams <= set(mine)
    await host.__aexit__()


async def test_fuzz_join_each_from_a_fresh_connection(room, settings, sockets):
    settings.ROOM_MAX_PLAYERS = 10_000
    created = await room()
    code = created.room.code
    joined_count = 0

    async def check(frame):
        nonlocal joined_count
        async with Client(code) as client:
            replies = await client.exchange(text=frame)
        assert_handled(replies, allowed={"joined"})
        joined_count += sum(reply["type"] == "joined" for reply in replies)
        record("join", frame, replies)

    await fuzz(message("join", useful=["Ada", " Ada ", "ada", "Bo"]), check)
    players = await _db(lambda: list(Player.objects.filter(room=created.room).values_list("nickname", flat=True)))
    assert len(players) == joined_count  # nobody is in the room without having been told so
    assert all(1 <= len(nickname) <= 20 and nickname.isprintable() for nickname in players)
    survivor, _ = await joined_client(sockets, code, "Survivor")
    await survivor.__aexit__()


@pytest.mark.parametrize("kind", ["resume", "host"])
async def test_fuzz_resume_and_host_each_from_a_fresh_connection(room, make_room, kind, sockets):
    created = await room()
    other_room = await database_sync_to_async(make_room)()
    code = created.room.code
    ann, ann_joined = await joined_client(sockets, code, "Ann")
    stranger, stranger_joined = await joined_client(sockets, other_room.room.code, "Stranger")
    tokens = {
        "player": ann_joined["token"],
        "host": created.host_token,
        "other_room_player": stranger_joined["token"],
        "other_room_host": other_room.host_token,
    }
    useful = [*tokens.values(), tokens["player"][:-1], tokens["host"] + "x", tokens["player"].upper()]

    async def check(frame):
        async with Client(code) as client:
            replies = await client.exchange(text=frame)
        assert_handled(replies, allowed={"joined", "hosting"})
        sent = json.loads(frame).get("token")
        for reply in replies:
            if reply["type"] == "hosting":
                assert sent == tokens["host"], frame  # only the real host token makes a host
            if reply["type"] == "joined":
                assert sent == tokens["player"] and reply["player"]["id"] == ann_joined["player"]["id"], frame
        record(kind, frame, replies)

    await fuzz(message(kind, useful=useful), check)
    await ann.send(type="ping")
    assert (await ann.recv())["type"] in ("pong", "state")
    survivor, _ = await joined_client(sockets, code, "Survivor")
    for client in (ann, stranger, survivor):
        await client.__aexit__()


async def test_fuzz_ping(room, sockets):
    created, host, (fuzzer, _), (bystander, _) = await _game(room, sockets, phase="lobby")
    await fuzz(message("ping"), checker("ping", fuzzer), max_examples=30)
    for client in (host, fuzzer, bystander):
        await client.__aexit__()


async def test_fuzz_sync(room, sockets):
    created, host, (fuzzer, _), (bystander, _) = await _game(room, sockets, phase="question")
    await fuzz(message("sync"), checker("sync", fuzzer), max_examples=50)
    for client in (host, fuzzer, bystander):
        await client.__aexit__()


@pytest.mark.parametrize("identified", [False, True], ids=["anonymous", "player"])
async def test_fuzz_raw_frames(room, identified, sockets):
    created = await room()
    code = created.room.code
    if identified:
        client, _ = await joined_client(sockets, code, "Fuzzer")
    else:
        client = await sockets.open(Client(code))
    await fuzz(
        raw_frames, checker("frame", client, allowed={"joined", "answered", "reported", "hosting"}), max_examples=100
    )
    if not identified:
        assert (await client.join("Late"))["type"] == "joined"
    survivor, _ = await joined_client(sockets, code, "Survivor")
    for c in (client, survivor):
        await c.__aexit__()


def test_every_message_type_is_fuzzed():
    from lobby.realtime.messages import MESSAGES

    # The socket's table of messages is every type it accepts (any other is "unknown_type").
    assert set(MESSAGES) == set(FIELDS), "a new message type needs a fuzz test"


@pytest.mark.parametrize(
    "frame",
    ["[" * 5000 + "]" * 5000, "[" * 16000, '{"a":' * 2000 + "1" + "}" * 2000, '{"type": "join", "x": ' + "[" * 3000],
    ids=["closed-lists", "open-lists", "objects", "inside-a-message"],
)
async def test_json_nested_thousands_deep_is_a_bad_message_not_a_crash(room, frame, sockets):
    """Found by the fuzz: json.loads raised RecursionError (not ValueError), which killed the connection."""
    created = await room()
    client, _ = await joined_client(sockets, created.room.code, "Nester")
    replies = await client.exchange(text=frame)
    assert [reply["code"] for reply in replies if reply["type"] != "state"] == ["bad_message"]
    await client.__aexit__()
