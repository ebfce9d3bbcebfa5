"""A room of 300 over the real consumers: each player's frames stay small whatever the room's size, the host's
carry the full counts and the lines its screen draws (bounded too), nothing before a reveal says which option is
correct, and the whole room joins from one address while wrong codes from it are still limited."""

import asyncio
import json

import pytest
from channels.db import database_sync_to_async

from lobby.reads.selectors import room_picture
from tests.support.communicator import Client

pytestmark = pytest.mark.django_db(transaction=True)

ROOM = 300
# A player's frame: the phase, the question (300 characters and six options of 120 at most), their own line,
# the top 3 and the counts. Fixed, whatever the room's size.
PLAYER_FRAME_LIMIT = 4096
# The host's: the common part and a few dozen players' lines (lobby/reads/host_view.py), whatever the room's size.
HOST_FRAME_LIMIT = 64 * 1024
WAIT = 60


def _size(message: dict) -> int:
    return len(json.dumps(message).encode())


async def _fill(sockets, code: str, count: int) -> list[tuple[Client, dict]]:
    """`count` players joining together, 50 at a time, from the one address the test communicators share."""

    async def one(n: int):
        client = await sockets.open(Client(code))
        # Nicknames of the longest allowed size: the top places are at their largest.
        await client.send(type="join", nickname=f"player-{n:03d}-abcdefghij"[:20])
        joined = await client.until(lambda m: m["type"] in ("joined", "error"), timeout=WAIT)
        assert joined["type"] == "joined", joined
        return client, joined

    players = []
    for start in range(0, count, 50):
        players += await asyncio.gather(*(one(n) for n in range(start, min(start + 50, count))))
    return players


def _says_nothing_correct(message: dict) -> None:
    # The recorder test's checks (tests/lobby/test_consumers.py), for every frame of every player.
    text = json.dumps(message)
    assert "correct" not in text, message
    assert "reveal" not in message and "explanation" not in text, message
    assert "results" not in text and "distribution" not in text and '"result"' not in text, message


async def test_a_room_of_300_players_gets_frames_sized_for_their_reader(room, settings, sockets, host_socket):
    settings.ROOM_MAX_PLAYERS = ROOM
    settings.WS_MAX_PER_IP = ROOM + 20
    created = await room(option_seed="recorder")
    code = created.room.code
    host = await host_socket(created)
    players = await _fill(sockets, code, ROOM)
    lobby = await host.until(lambda m: m["type"] == "state" and m["player_count"] == ROOM, timeout=WAIT)
    # The host's frame names the newest arrivals (the lobby's chips), not everyone; the count is everyone.
    newest = [joined["player"]["id"] for _, joined in players][-20:]
    assert set(newest) <= {line["id"] for line in lobby["players"]} and len(lobby["players"]) < 100
    # A join burst is coalesced: far fewer host frames than joins.
    assert len([m for m in host.received if m["type"] == "state"]) < ROOM / 3
    await host.send(type="start")
    for index in range(3):
        marks = [len(client.received) for client, _ in players]
        questions = [await client.state(phase="question", question_index=index) for client, _ in players]
        assert all(q["question"] == questions[0]["question"] for q in questions)
        options = len(questions[0]["question"]["options"])
        for n, (client, _) in enumerate(players):
            await client.send(type="answer", question=index, option=n % options)
        reveals = [
            await client.until(
                lambda m, i=index: m["type"] == "state" and m["phase"] == "reveal" and m["question_index"] == i,
                timeout=WAIT,
            )
            for client, _ in players
        ]
        shown = await host.until(
            lambda m, i=index: m["type"] == "state" and m["phase"] == "reveal" and m["question_index"] == i,
            timeout=WAIT,
        )
        # Nothing a player received before this reveal says which option is correct.
        for (client, _), mark in zip(players, marks, strict=True):
            before = client.received[mark:]
            for message in before[: before.index(next(m for m in before if m.get("phase") == "reveal"))]:
                _says_nothing_correct(message)
        # The host has the full counts; each player their own result, the same as the host's.
        assert shown["answered_count"] == ROOM and sum(shown["reveal"]["distribution"]) == ROOM
        named = {str(line["id"]) for line in shown["players"]}
        assert set(shown["reveal"]["results"]) == named and len(named) < 100
        for (_, joined), reveal in zip(players, reveals, strict=True):
            if str(joined["player"]["id"]) in named:
                assert reveal["you"]["result"] == shown["reveal"]["results"][str(joined["player"]["id"])]
            assert reveal["player_count"] == ROOM and reveal["top"] == shown["top"]
            assert "results" not in reveal["reveal"] and "players" not in reveal
        await host.send(type="next", phase="reveal", index=index)
        await host.send(type="next", phase="leaderboard", index=index)
    finals = [await client.until(lambda m: m.get("phase") == "finished", timeout=WAIT) for client, _ in players]
    board = await host.until(lambda m: m["type"] == "state" and m["phase"] == "finished", timeout=WAIT)
    # Every phone's score and rank, and every line of the host's board, as the stored standings have them.
    stored = (await database_sync_to_async(room_picture)(room_id=created.room.pk)).standings.players
    assert len(board["players"]) >= 10  # the final board's ten places, at least
    for line in board["players"]:
        assert (line["nickname"], line["score"], line["rank"]) == stored[line["id"]]
    for final in finals:
        assert (final["you"]["score"], final["you"]["rank"]) == stored[final["you"]["id"]][1:]
        assert len(final["top"]) == 3
        assert final["top"] == sorted(board["players"], key=lambda p: (p["rank"], p["id"]))[:3]
    # Every frame every player received, at every phase, under the fixed size.
    sizes = [_size(m) for client, _ in players for m in client.received]
    assert max(sizes) < PLAYER_FRAME_LIMIT, max(sizes)
    assert max(_size(m) for m in host.received) < HOST_FRAME_LIMIT


async def test_a_join_burst_from_one_address_fills_a_room_of_200_and_wrong_codes_are_still_limited(
    room, settings, sockets
):
    settings.ROOM_MAX_PLAYERS = 200
    settings.WS_MAX_PER_IP = 220
    settings.RATELIMIT_CODE_GUESSES_PER_IP = (3, 60)
    created = await room()
    players = await _fill(sockets, created.room.code, 200)
    assert len(players) == 200
    late = await sockets.open(Client(created.room.code))
    await late.send(type="join", nickname="Late")
    assert (await late.error())["code"] == "room_full"  # the room's size stops it, not the address's joins
    for _ in range(3):
        async with Client("ZZZZZZ") as guesser:
            await guesser.send(type="join", nickname="Guesser")
            assert (await guesser.error())["code"] == "room_not_found"
    async with Client("ZZZZZY") as guesser:
        await guesser.send(type="join", nickname="Guesser")
        assert (await guesser.error())["code"] == "rate_limited"


async def test_a_burst_of_joins_with_one_nickname_lets_exactly_one_in_and_never_overfills_the_room(
    room, settings, sockets, host_socket
):
    """Joins that arrive together go into the database together: twenty phones asking for "Sam" at once get one
    Sam and nineteen "taken"; more joiners than seats fill the room exactly."""
    settings.ROOM_MAX_PLAYERS = 30
    settings.WS_MAX_PER_IP = 100
    created = await room()
    code = created.room.code
    host = await host_socket(created)

    async def join(nickname: str) -> dict:
        client = await sockets.open(Client(code))
        await client.send(type="join", nickname=nickname)
        return await client.until(lambda m: m["type"] in ("joined", "error"), timeout=WAIT)

    sams = ["Sam", "sam", "SAM", " Sam ", "sAm"] * 4
    first = await asyncio.gather(*(join(name) for name in sams + [f"p{n}" for n in range(9)]))
    assert [m["type"] for m in first[20:]] == ["joined"] * 9
    assert [m["type"] for m in first[:20]].count("joined") == 1
    assert sorted(m["code"] for m in first[:20] if m["type"] == "error") == ["nickname_taken"] * 19
    # 10 players in; 30 more ask for the 20 seats left.
    second = await asyncio.gather(*(join(f"q{n}") for n in range(30)))
    assert [m["type"] for m in second].count("joined") == 20
    assert sorted(m["code"] for m in second if m["type"] == "error") == ["room_full"] * 10
    lobby = await host.until(lambda m: m["type"] == "state" and m["player_count"] == 30, timeout=WAIT)
    names = [p["nickname"] for p in lobby["players"]]
    assert len(names) == 30 and len({n.casefold() for n in names}) == 30
    assert sum(n.casefold() == "sam" for n in names) == 1


async def test_a_joiner_is_never_told_they_were_removed_by_a_picture_from_before_their_join(room, sockets):
    """The process's shared picture can lag a burst of joins; a new player must get a picture with them in it."""
    from channels.db import database_sync_to_async

    from lobby.reads import standings
    from lobby.reads.selectors import room_picture

    created = await room()
    stale = await database_sync_to_async(room_picture)(room_id=created.room.pk)
    stale.snapshot["seq"] = 10**6  # claims to be newer than any join, yet has no players
    standings.remember(created.room.pk, stale)
    client = await sockets.open(Client(created.room.code))
    await client.send(type="join", nickname="Ben")
    state = await client.until(lambda m: m["type"] in ("state", "error"), timeout=WAIT)
    assert state["type"] == "state", state
    assert state["you"]["nickname"] == "Ben" and state["player_count"] == 1
