"""Faults during a live game, with real server processes: the database goes away for a moment, Redis
restarts. Nothing a player sent is lost and the game carries on where it was."""

import asyncio

import pytest
from asgiref.sync import sync_to_async
from django.conf import settings

from lobby.models import Answer
from tests.support.peer import Peer
from tests.support.proxy import OutageProxy
from tests.support.servers import database_url, start_asgi, start_redis

pytestmark = pytest.mark.django_db(transaction=True)
needs_redis = pytest.mark.skipif(not settings.REDIS_URL, reason="server processes share a game through Redis")
needs_postgres = pytest.mark.skipif(
    settings.DATABASES["default"]["ENGINE"].endswith("sqlite3"),
    reason="the outage is cut between server and PostgreSQL",
)


async def _lobby(base, created, nicknames):
    host = await Peer(base, created.room.code).open_as_host(created.host_token)
    players = []
    for nickname in nicknames:
        peer = await Peer(base, created.room.code).open()
        await peer.send(type="join", nickname=nickname)
        await peer.until(lambda m: m["type"] == "joined")
        players.append(peer)
    return host, players


@needs_redis
@needs_postgres
async def test_postgres_unreachable_pauses_the_room_and_no_answer_is_lost(make_room, tmp_path):
    db = settings.DATABASES["default"]
    proxy = OutageProxy(db.get("HOST") or "127.0.0.1", int(db.get("PORT") or 5432))
    url = database_url().replace(f":{db.get('PORT') or 5432}/", f":{proxy.port}/")
    server = start_asgi(
        "asgi", log_path=tmp_path / "asgi.log", env={"DATABASE_URL": url, "DB_OUTAGE_RESUME_SECONDS": "3"}
    )
    try:
        created = await sync_to_async(make_room)(timer_seconds=10)
        host, (ann, ben) = await _lobby(server.ws_base, created, ["Ann", "Ben"])
        await host.send(type="start")
        await ann.state(phase="question", question_index=0)

        proxy.cut_off()  # PostgreSQL is gone for this server
        await ann.send(type="answer", question=0, option=1)
        paused = await ann.until(lambda m: m["type"] == "error")
        assert paused["code"] == "paused" and "paused" in paused["message"]
        await asyncio.sleep(1.5)
        proxy.restore()

        ack = await ann.until(lambda m: m["type"] == "answered", timeout=10)
        assert ack["option"] == 1
        await ann.until(lambda m: m["type"] == "resumed")
        await ben.send(type="answer", question=0, option=0)
        reveal = await host.state(phase="reveal", question_index=0)
        assert reveal["reveal"]["distribution"][:2] == [1, 1]
        answers = await sync_to_async(lambda: dict(Answer.objects.values_list("player__nickname", "correct")))()
        assert answers == {"Ann": True, "Ben": False}
        for peer in (host, ann, ben):
            await peer.close()
    finally:
        server.stop()
        proxy.close()


@needs_redis
async def test_redis_restarted_mid_game_the_game_continues_where_it_was(make_room, tmp_path):
    redis = start_redis()
    env = {"REDIS_URL": f"redis://127.0.0.1:{redis.port}/0"}
    servers = [start_asgi(f"asgi-{n}", log_path=tmp_path / f"asgi-{n}.log", env=env) for n in (1, 2)]
    try:
        created = await sync_to_async(make_room)(timer_seconds=20)
        host, (ann,) = await _lobby(servers[0].ws_base, created, ["Ann"])
        _, (ben,) = await _lobby(servers[1].ws_base, created, ["Ben"])
        await host.send(type="start")
        await ben.state(phase="question", question_index=0)
        await ann.send(type="answer", question=0, option=1)
        await ann.until(lambda m: m["type"] == "answered")

        redis.kill()  # Redis restarts: every channel-layer connection and subscription is gone
        redis = start_redis(redis.port)
        await asyncio.sleep(1)

        # Players whose connection dropped reconnect with their token; the others carry on as they were.
        for peer in (host, ann, ben):
            if peer.ws.close_code is not None:
                await peer.reopen()
        await ben.send(type="answer", question=0, option=1)
        reveal = await ben.state(phase="reveal", question_index=0, timeout=15)
        assert reveal["reveal"]["distribution"][1] == 2
        await host.state(phase="reveal", question_index=0, timeout=15)
        await host.send(type="next", phase="reveal", index=0)
        await ann.state(phase="leaderboard", question_index=0, timeout=15)
        leaderboard = await ben.state(phase="leaderboard", question_index=0, timeout=15)
        assert {p["nickname"] for p in leaderboard["top"] if p["score"] >= 500} == {"Ann", "Ben"}
        for peer in (host, ann, ben):
            await peer.close()
    finally:
        for server in servers:
            server.stop()
        redis.stop()


@needs_redis
async def test_after_a_redis_outage_every_player_sees_the_current_phase_within_a_second(make_room, tmp_path):
    """Redis stops for 2 s while the host moves the game on: every broadcast of those 2 s fails. Within a second
    of Redis being back everyone, on either process, sees the question that opened meanwhile; the answer given
    during the outage is kept, and the question gives its full time from when it was shown (no answer refused
    as too late for time the outage took)."""
    redis = start_redis()
    env = {"REDIS_URL": f"redis://127.0.0.1:{redis.port}/0"}
    servers = [start_asgi(f"asgi-{n}", log_path=tmp_path / f"asgi-{n}.log", env=env) for n in (1, 2)]
    try:
        timer = 10
        created = await sync_to_async(make_room)(timer_seconds=timer)
        host, (ann, ada) = await _lobby(servers[0].ws_base, created, ["Ann", "Ada"])
        _, (ben, bea) = await _lobby(servers[1].ws_base, created, ["Ben", "Bea"])
        players = [ann, ada, ben, bea]
        await host.send(type="start")
        for peer in players:
            await peer.state(phase="question", question_index=0)

        redis.kill()
        await ann.send(type="answer", question=0, option=1)
        assert (await ann.until(lambda m: m["type"] in ("answered", "error")))["type"] == "answered"
        await host.send(type="close", phase="question", index=0)
        await asyncio.sleep(0.3)
        await host.send(type="next", phase="reveal", index=0)
        await asyncio.sleep(0.3)
        await host.send(type="next", phase="leaderboard", index=0)  # question 1 opens while nobody hears of it
        await asyncio.sleep(2 - 0.6)
        redis = start_redis(redis.port)
        back = asyncio.get_running_loop().time()

        async def shown(peer):
            state = await peer.state(phase="question", question_index=1, timeout=5)
            return asyncio.get_running_loop().time() - back, state

        seen = await asyncio.gather(*(shown(peer) for peer in [host, *players]))
        assert max(delay for delay, _ in seen) < 1.0, [round(delay, 2) for delay, _ in seen]

        async def answer_late(peer, option):
            # At the end of the time the player was shown, less a margin: inside the question's own time.
            await asyncio.sleep(timer - 1.5)
            await peer.send(type="answer", question=1, option=option)
            return await peer.until(lambda m: m["type"] in ("answered", "error") and m.get("question", 1) == 1)

        replies = await asyncio.gather(*(answer_late(peer, n % 2) for n, peer in enumerate(players)))
        assert [reply["type"] for reply in replies] == ["answered"] * 4, replies
        stored = await sync_to_async(lambda: sorted(Answer.objects.values_list("question_index", "player__nickname")))()
        assert stored == [(0, "Ann"), (1, "Ada"), (1, "Ann"), (1, "Bea"), (1, "Ben")]
        for peer in (host, *players):
            await peer.close()
    finally:
        for server in servers:
            server.stop()
        redis.stop()
