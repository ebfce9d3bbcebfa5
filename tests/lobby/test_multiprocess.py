"""Two uvicorn processes share one game through the database and the Redis channel layer."""

import pytest
from asgiref.sync import sync_to_async
from django.conf import settings

from lobby.models import Answer, Player, Room
from tests.support.peer import Peer
from tests.support.servers import start_asgi

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not settings.REDIS_URL, reason="several processes need the Redis channel layer (REDIS_URL)"),
]


@pytest.fixture
def two_servers(tmp_path):
    servers = [start_asgi(f"asgi-{n}", log_path=tmp_path / f"asgi-{n}.log") for n in (1, 2)]
    yield servers
    for server in servers:
        server.stop()


async def _players(servers, code):
    peers = []
    for n, server in enumerate([servers[0], servers[0], servers[1], servers[1]]):
        peer = await Peer(server.ws_base, code).open()
        await peer.send(type="join", nickname=f"P{n}")
        await peer.until(lambda m: m["type"] == "joined")
        peers.append(peer)
    return peers


def _db_scores(room_id):
    players = {p.nickname: p.score for p in Player.objects.filter(room_id=room_id)}
    points = {p.nickname: sum(Answer.objects.filter(player=p).values_list("points", flat=True))
              for p in Player.objects.filter(room_id=room_id)}  # fmt: skip
    return players, points


async def test_a_round_across_two_processes_closes_each_question_once_and_scores_agree(two_servers, make_room):
    created = await sync_to_async(make_room)(timer_seconds=10)
    code = created.room.code
    host = await Peer(two_servers[0].ws_base, code).open_as_host(created.host_token)  # the host's own connection
    peers = await _players(two_servers, code)
    await host.until(lambda m: m["type"] == "state" and len(m["players"]) == 4)
    await host.send(type="start", phase="lobby", index=-1)
    for index in range(3):
        for peer in peers:
            await peer.state(phase="question", question_index=index)
        for n, peer in enumerate(peers):
            await peer.send(type="answer", question=index, option=(n + index) % 3)
        reveals = [await peer.state(phase="reveal", question_index=index) for peer in [host, *peers]]
        # Everyone, on either process, sees the same reveal with every answer counted: the host every result,
        # each player their own one, the same as the host's.
        results = reveals[0]["reveal"]["results"]
        assert len(results) == 4
        for r in reveals[1:]:
            assert r["you"]["result"] == results[str(r["you"]["id"])]
            assert r["reveal"] == {k: v for k, v in reveals[0]["reveal"].items() if k != "results"}
            assert r["top"] == reveals[0]["top"]
        await host.send(type="next", phase="reveal", index=index)
        await host.state(phase="leaderboard", question_index=index)
        await host.send(type="next", phase="leaderboard", index=index)
    finals = [await peer.state(phase="finished") for peer in [host, *peers]]
    # The same standings on either process: the host's full board, each player's own line and the top places.
    board = {p["nickname"]: (p["score"], p["rank"]) for p in finals[0]["players"]}
    for final in finals[1:]:
        assert (final["you"]["score"], final["you"]["rank"]) == board[final["you"]["nickname"]]
        assert {p["nickname"]: (p["score"], p["rank"]) for p in final["top"]}.items() <= board.items()
        assert final["top"] == finals[1]["top"]
    scores, points = await sync_to_async(_db_scores)(created.room.pk)
    # A question closed twice would have added its points twice.
    assert scores == points == {nickname: score for nickname, (score, _) in board.items()}
    assert sum(scores.values()) > 0
    for peer in [host, *peers]:
        await peer.close()


async def test_killing_a_process_mid_question_loses_no_answer_and_its_players_carry_on(two_servers, make_room):
    created = await sync_to_async(make_room)(timer_seconds=30)
    code = created.room.code
    survivor, doomed = two_servers
    host = await Peer(survivor.ws_base, code).open_as_host(created.host_token)
    peers = await _players(two_servers, code)
    await host.send(type="start", phase="lobby", index=-1)
    for peer in peers:
        await peer.state(phase="question", question_index=0)
    # P2 (on the doomed process) answers, then its process dies before the question closes.
    await peers[2].send(type="answer", question=0, option=1)
    await peers[2].until(lambda m: m["type"] == "answered")
    doomed.kill()
    # Its players reconnect to the other process with their tokens.
    moved = []
    for old in peers[2:]:
        peer = await Peer(survivor.ws_base, code).open()
        await peer.send(type="resume", token=old.token)
        snap = await peer.state(phase="question", question_index=0)
        moved.append((peer, snap))
    assert moved[0][1]["you"]["answered"] is True and moved[0][1]["you"]["option"] == 1
    assert moved[1][1]["you"]["answered"] is False
    live = [peers[0], peers[1], moved[0][0], moved[1][0]]
    await live[0].send(type="answer", question=0, option=1)
    await live[1].send(type="answer", question=0, option=0)
    await live[3].send(type="answer", question=0, option=1)
    reveal = await host.state(phase="reveal", question_index=0)
    assert len(reveal["reveal"]["results"]) == 4
    assert reveal["reveal"]["distribution"] == [1, 3, 0, 0]
    scores, points = await sync_to_async(_db_scores)(created.room.pk)
    assert scores == points and scores["P2"] >= 500
    room = await sync_to_async(Room.objects.get)(pk=created.room.pk)
    assert room.phase == "reveal"
    for peer in [host, *live]:
        await peer.close()


BIG_ROOM = 3_000
SOCKETS = 100  # the rest of the room is written straight into the database: the host's frames are what is measured
HOST_FRAME_LIMIT = 64 * 1024


def _seat_quiet_players(room, count: int) -> None:
    """`count` players already in the room (no sockets), a few of them waiting for an answer to "I need more time"."""
    Player.objects.bulk_create(
        Player(room=room, nickname=f"Quiet {n:04d}", nickname_key=f"quiet {n:04d}", asks_more_time=n % 500 == 3)
        for n in range(count)
    )


def _answer_for_quiet_players(room, question_index: int) -> None:
    marked = room.round.entries.get(position=question_index).question.correct_index
    quiet = Player.objects.filter(room=room, nickname__startswith="Quiet ").values_list("pk", flat=True)
    Answer.objects.bulk_create(
        Answer(room=room, player_id=pk, question_index=question_index, option=pk % 3, elapsed_ms=1000 + pk % 5000,
               correct=pk % 3 == marked)
        for pk in quiet
    )  # fmt: skip


def _stored_standings(room_id):
    from lobby.reads.selectors import room_picture

    return room_picture(room_id=room_id).standings.players


async def test_one_big_room_split_across_two_processes_keeps_the_host_frame_small_and_everyone_agrees(
    tmp_path, make_room
):
    """3,000 players (100 on sockets, half on each process, ROOM_MAX_PLAYERS raised): each process reads the
    standings itself; every player sees the same question, their own result as the host has it and the same top;
    every frame the host receives stays under 64 KB, and still counts every player and every answer."""
    env = {"ROOM_MAX_PLAYERS": str(BIG_ROOM), "WS_MAX_PER_IP": str(SOCKETS + 20)}
    servers = []
    try:
        for n in (1, 2):  # inside the try: a second process that fails to start must not leave the first running
            servers.append(start_asgi(f"big-{n}", log_path=tmp_path / f"big-{n}.log", env=env))
        created = await sync_to_async(make_room)(timer_seconds=60)
        code = created.room.code
        await sync_to_async(_seat_quiet_players)(created.room, BIG_ROOM - SOCKETS)
        host = await Peer(servers[0].ws_base, code).open_as_host(created.host_token)
        peers = []
        for n in range(SOCKETS):
            peer = await Peer(servers[n % 2].ws_base, code).open()
            await peer.send(type="join", nickname=f"P{n}")
            assert (await peer.until(lambda m: m["type"] in ("joined", "error")))["type"] == "joined"
            peers.append(peer)
        lobby = await host.until(lambda m: m["type"] == "state" and m["player_count"] == BIG_ROOM, timeout=30)
        named = {line["nickname"] for line in lobby["players"]}
        # The lobby's newest arrivals and every waiting request, by name; the count says everyone.
        assert {f"P{n}" for n in range(SOCKETS - 20, SOCKETS)} <= named
        assert lobby["time_request_count"] == 6 and len(lobby["time_requests"]) == 6
        await host.send(type="start", phase="lobby", index=-1)
        questions = [await peer.state(phase="question", question_index=0, timeout=30) for peer in peers]
        assert all(q["question"] == questions[0]["question"] and q["seq"] == questions[0]["seq"] for q in questions)
        await sync_to_async(_answer_for_quiet_players)(created.room, 0)
        for n, peer in enumerate(peers):
            await peer.send(type="answer", question=0, option=n % 3)
        # The host's counter reaches every answer, the quiet players' included.
        counted = await host.until(lambda m: m["type"] == "answers" and m["answered_count"] == BIG_ROOM, timeout=30)
        assert counted["question_index"] == 0
        await host.send(type="close", phase="question", index=0)
        reveals = [await peer.state(phase="reveal", question_index=0, timeout=30) for peer in peers]
        shown = await host.state(phase="reveal", question_index=0, timeout=30)
        assert shown["answered_count"] == BIG_ROOM and sum(shown["reveal"]["distribution"]) == BIG_ROOM
        assert shown["player_count"] == BIG_ROOM and set(shown["reveal"]["results"]) == {
            str(line["id"]) for line in shown["players"]
        }
        stored = await sync_to_async(_stored_standings)(created.room.pk)
        for reveal in reveals:
            you = reveal["you"]
            if str(you["id"]) in shown["reveal"]["results"]:
                assert you["result"] == shown["reveal"]["results"][str(you["id"])]
            assert (you["score"], you["rank"]) == stored[you["id"]][1:]
            assert reveal["top"] == shown["top"] and reveal["reveal"]["distribution"] == shown["reveal"]["distribution"]
        await host.send(type="next", phase="reveal", index=0)
        board = await host.state(phase="leaderboard", question_index=0, timeout=30)
        # The host's board: the stored top ten, by name, score and rank.
        top_ten = sorted(stored.items(), key=lambda item: (item[1][2], item[0]))[:10]
        lines = {line["id"]: (line["nickname"], line["score"], line["rank"]) for line in board["players"]}
        assert all(lines[player_id] == line for player_id, line in top_ten)
        assert max(host.sizes) < HOST_FRAME_LIMIT, max(host.sizes)
        for peer in [host, *peers]:
            await peer.close()
    finally:
        for server in servers:
            server.stop()
