"""Rate limits: per connection (a token bucket, then a close for a flood), the 16 KB frame cap, and per client
IP on joins and on room-code guesses, over WebSocket and HTTP."""

import asyncio
import os
import threading

import pytest

from lobby.realtime import ratelimit
from lobby.realtime.ratelimit import MessageBucket, Verdict

from .helpers import Client, joined_client

pytestmark = pytest.mark.django_db(transaction=True)


class FakeClock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


def test_the_bucket_allows_a_burst_then_about_100_a_minute_and_closes_on_a_flood():
    clock = FakeClock()
    bucket = MessageBucket(per_minute=100, burst=20, flood=200, clock=clock)
    assert [bucket.check() for _ in range(20)] == [Verdict.ALLOW] * 20
    assert bucket.check() is Verdict.DROP
    clock.now += 0.6  # 100 a minute: one message every 0.6 s
    assert bucket.check() is Verdict.ALLOW
    assert bucket.check() is Verdict.DROP
    # A steady 100 a minute for ten minutes is never dropped.
    allowed = 0
    for _ in range(1000):
        clock.now += 0.6
        allowed += bucket.check() is Verdict.ALLOW
    assert allowed == 1000
    # A flood: 199 more drops are answered, the one beyond 200 within the minute closes.
    verdicts = [bucket.check() for _ in range(201)]
    assert verdicts[:200] == [Verdict.DROP] * 200 and verdicts[200] is Verdict.CLOSE


def test_drops_spread_over_minutes_never_close():
    clock = FakeClock()
    bucket = MessageBucket(per_minute=100, burst=20, flood=200, clock=clock)
    for _ in range(20):
        bucket.check()
    for _ in range(10):  # ten minutes at twice the allowed rate
        for _ in range(200):
            clock.now += 0.3
            assert bucket.check() is not Verdict.CLOSE


async def test_over_the_limit_a_message_gets_rate_limited_and_is_dropped_and_the_connection_lives(room, settings):
    settings.WS_RATE_BURST = 5
    settings.WS_RATE_PER_MINUTE = 100
    created = await room()
    async with Client(created.room.code) as client:
        for _ in range(5):
            await client.send(type="sync")  # a message (before joining it is answered "not now")
        replies = [await client.recv() for _ in range(5)]
        assert all(reply["code"] == "not_now" for reply in replies)
        await client.send(type="join", nickname="Sixth")  # the 6th message: dropped, not joined
        reply = await client.recv()
        assert reply["type"] == "error" and reply["code"] == "rate_limited"
        assert "slow down" in reply["message"]
        assert await client.comm.receive_nothing(timeout=0.7)  # not joined, not closed
        # After 0.6 s one token has come back.
        await client.send(type="join", nickname="Patient")
        assert (await client.until(lambda m: m["type"] in ("joined", "error")))["type"] == "joined"


async def test_a_flood_far_beyond_the_limit_closes_the_connection_and_the_room_lives_on(room, settings, sockets):
    settings.WS_RATE_BURST = 5
    settings.WS_PING_BURST = 5  # a flood of pings: the pings' own budget closes on a flood too
    settings.WS_RATE_FLOOD = 50
    created = await room()
    code = created.room.code
    bystander, _ = await joined_client(sockets, code, "Bystander")
    flooder = await sockets.open(Client(code))
    for _ in range(200):
        await flooder.send(type="ping")
    replies = []
    while True:
        reply = await flooder.recv()
        replies.append(reply)
        if reply["type"] == "closed":
            break
    assert flooder.closed == 4008
    assert [r["type"] for r in replies[:5]] == ["pong"] * 5
    assert sum(r.get("code") == "rate_limited" for r in replies) == 51  # 50 drops answered, then the closing one
    assert len(replies) == 5 + 51 + 1  # nothing after the close
    await bystander.send(type="ping")
    assert (await bystander.until(lambda m: m["type"] == "pong"))["type"] == "pong"
    await bystander.__aexit__()


async def test_a_client_that_pings_often_still_joins_and_gets_its_answer_accepted(room, settings, sockets, host_socket):
    """Pings have their own budget: a client pinging at the documented rate (WS_PING_PER_MINUTE, bursts of
    WS_PING_BURST) never loses its join or its answer to them, however tight the message budget."""
    settings.WS_RATE_BURST = 3
    settings.WS_RATE_PER_MINUTE = 6
    created = await room(timer_seconds=60)
    code = created.room.code
    host = await host_socket(created)
    pinger = await sockets.open(Client(code))
    for _ in range(settings.WS_PING_BURST):
        await pinger.send(type="ping")
        assert (await pinger.recv())["type"] == "pong"
    assert (await pinger.join("Pinger"))["type"] == "joined"
    await host.send(type="start")
    await pinger.state(phase="question", question_index=0)
    for _ in range(5):  # then one a second, the documented rate: every one answered
        await asyncio.sleep(1)
        await pinger.send(type="ping")
        assert (await pinger.until(lambda m: m["type"] in ("pong", "error")))["type"] == "pong"
    await pinger.send(type="answer", question=0, option=1)
    assert (await pinger.until(lambda m: m["type"] in ("answered", "error"))) == {
        "type": "answered",
        "question": 0,
        "option": 1,
    }


async def test_pings_beyond_their_own_budget_are_dropped(room, settings):
    settings.WS_PING_BURST = 3
    created = await room()
    async with Client(created.room.code) as client:
        for _ in range(4):
            await client.send(type="ping")
        replies = [await client.recv() for _ in range(4)]
        assert [r["type"] for r in replies] == ["pong"] * 3 + ["error"]
        assert replies[3]["code"] == "rate_limited"
        assert (await client.join("StillFine"))["type"] == "joined"  # the message budget is untouched


async def test_frames_over_16_kb_are_refused_and_the_connection_survives(room, settings):
    assert settings.WS_MAX_MESSAGE_BYTES == 16 * 1024
    created = await room()
    async with Client(created.room.code) as client:
        base = '{"type": "ping", "pad": "'
        exact = base + "x" * (16 * 1024 - len(base) - 2) + '"}'
        assert len(exact.encode()) == 16 * 1024
        await client.send_raw(text=exact)
        assert await client.recv() == {"type": "pong"}  # exactly 16 KB is a fine ping
        over = base + "x" * (16 * 1024 - len(base) - 1) + '"}'
        [reply] = await client.exchange(text=over)  # one byte more: an error instead of the pong
        assert reply["code"] == "too_large"
        # Bytes, not characters: 6,000 three-byte characters are 18 KB.
        [reply] = await client.exchange(text='{"type": "ping", "pad": "' + "€" * 6000 + '"}')
        assert reply["code"] == "too_large"
        [reply] = await client.exchange(data=b"\x00" * 100_000)
        assert reply["code"] == "bad_message"
        assert (await client.join("StillHere"))["type"] == "joined"


async def test_joins_across_many_rooms_are_limited_per_client_ip(room, settings, sockets):
    settings.RATELIMIT_ROOMS_JOINED_PER_IP = (3, 60)
    codes = [(await room()).room.code for _ in range(4)]
    clients = []
    for n, code in enumerate(codes[:3]):
        for name in ("A", "B"):  # a second join into a room this address is in is not counted
            client, _ = await joined_client(sockets, code, f"{name}{n}", ip="198.51.100.1")
            clients.append(client)
    fourth = await sockets.open(Client(codes[3], ip="198.51.100.1"))
    reply = await fourth.join("D")
    assert reply["code"] == "rate_limited" and "Wait a minute" in reply["message"]
    assert (await fourth.join("D"))["code"] == "rate_limited"  # refused again, not let in by the first try
    again, _ = await joined_client(sockets, codes[0], "C0", ip="198.51.100.1")  # rooms it is in still take it
    other, _ = await joined_client(sockets, codes[3], "E", ip="198.51.100.2")  # another network is not affected
    for client in [*clients, fourth, again, other]:
        await client.__aexit__()


async def test_wrong_room_codes_are_limited_per_ip_and_then_even_a_right_code_says_nothing(room, settings):
    settings.RATELIMIT_CODE_GUESSES_PER_IP = (3, 60)
    created = await room()
    for guess in ["AAAAAA", "AAAAAB", "AAAAAC"]:
        async with Client(guess, ip="198.51.100.9") as client:
            assert (await client.join("Guesser"))["code"] == "room_not_found"
    async with Client(created.room.code, ip="198.51.100.9") as client:
        # The fourth try is refused before the code is looked at, so it cannot tell a live room from a dead one.
        assert (await client.join("Guesser"))["code"] == "rate_limited"
    async with Client(created.room.code, ip="198.51.100.10") as client:
        assert (await client.join("Honest"))["type"] == "joined"


def test_code_guesses_over_http_are_limited_too(client, make_room, settings):
    settings.RATELIMIT_CODE_GUESSES_PER_IP = (3, 60)
    live = make_room().room.code
    assert client.get(f"/play/{live}/").status_code == 200  # a right code does not count
    assert client.get("/play/AAAAAA/").status_code == 404
    assert client.get("/host/AAAAAB/").status_code == 404
    assert client.get("/join/", {"code": "AAAAAC"}).status_code == 302
    for url in [f"/play/{live}/", f"/host/{live}/", f"/host/{live}/results.csv"]:
        response = client.get(url)
        assert response.status_code == 429 and response["Retry-After"] == "60"
    response = client.get("/join/", {"code": live}, follow=True)
    assert "Too many tries" in response.content.decode()
    assert client.get(f"/play/{live}/", REMOTE_ADDR="198.51.100.20").status_code == 200


def test_x_forwarded_for_counts_only_when_trusted(client, make_room, settings):
    settings.RATELIMIT_CODE_GUESSES_PER_IP = (2, 60)
    settings.TRUST_X_FORWARDED_FOR = False
    # Untrusted: a client cannot dodge the limit by inventing a new X-Forwarded-For per request.
    for n in range(2):
        client.get("/play/AAAAAA/", HTTP_X_FORWARDED_FOR=f"10.0.0.{n}")
    assert client.get("/play/AAAAAA/", HTTP_X_FORWARDED_FOR="10.0.0.99").status_code == 429
    # Trusted (behind our proxy): the address the proxy appended, the last one, is the client.
    settings.TRUST_X_FORWARDED_FOR = True
    for _ in range(2):
        client.get("/play/AAAAAA/", HTTP_X_FORWARDED_FOR="6.6.6.6, 192.0.2.1")
    assert client.get("/play/AAAAAA/", HTTP_X_FORWARDED_FOR="6.6.6.6, 192.0.2.1").status_code == 429
    assert client.get("/play/AAAAAA/", HTTP_X_FORWARDED_FOR="192.0.2.1, 192.0.2.2").status_code == 404


def test_client_ip_from_a_websocket_scope(settings):
    scope = {"client": ["192.0.2.5", 1234], "headers": [(b"x-forwarded-for", b"1.1.1.1, 192.0.2.77")]}
    settings.TRUST_X_FORWARDED_FOR = False
    assert ratelimit.client_ip_from_scope(scope) == "192.0.2.5"
    settings.TRUST_X_FORWARDED_FOR = True
    assert ratelimit.client_ip_from_scope(scope) == "192.0.2.77"
    assert ratelimit.client_ip_from_scope({"headers": [(b"x-forwarded-for", b"\n junk key \x00")]}) == "junkkey"
    assert ratelimit.client_ip_from_scope({"client": None, "headers": []}) == "unknown"


CACHE_BACKENDS = {
    "locmem": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "ratelimit-test"},
    "redis": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": os.environ.get("REDIS_URL", "")},
}


@pytest.mark.parametrize("backend", sorted(CACHE_BACKENDS))
def test_concurrent_hits_never_overshoot_the_limit(settings, backend):
    """add + incr are atomic: 60 threads at once against a limit of 20 let exactly 20 through."""
    if backend == "redis" and not os.environ.get("REDIS_URL"):
        pytest.skip("set REDIS_URL to run against Redis")
    settings.CACHES = {"default": CACHE_BACKENDS[backend]}
    settings.RATELIMIT_ROOMS_JOINED_PER_IP = (20, 60)
    results = []
    start = threading.Barrier(60)

    def hit():
        start.wait()
        results.append(ratelimit.ip_hit(limit=ratelimit.ROOMS_JOINED, ip="192.0.2.200"))

    threads = [threading.Thread(target=hit) for _ in range(60)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results.count(True) == 20


async def test_a_cache_outage_fails_open(room, settings, caplog):
    settings.CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": "redis://127.0.0.1:1/0"}
    }
    created = await room()
    async with Client(created.room.code) as client:
        assert (await client.join("StillWelcome"))["type"] == "joined"
    assert "rate limit cache unavailable" in caplog.text


@pytest.mark.skipif(not os.environ.get("REDIS_URL"), reason="set REDIS_URL: counts the Redis server's clients")
async def test_a_burst_of_joins_does_not_hold_a_redis_connection_per_player(room, settings, sockets):
    """Each join checks the per-IP limits in the shared cache. Django's cache handle is one per async context
    (one per WebSocket consumer): used as is, 1,000 joins held 1,000 Redis connections.

    A process also opens a few connections of its own, once, as its first player comes in, and some after that
    player is told `joined`: the room's subscription, the layer's publishing connection, the heartbeat, the
    channel layer's watch. Two warm-up players, seen in each other's room, bring them all up, so what is counted
    is what the joins add: 30 joins, far more than the few that may be added."""
    import redis

    settings.ROOM_MAX_PLAYERS = 40
    server = redis.Redis.from_url(settings.REDIS_URL)
    db = str(server.connection_pool.connection_kwargs.get("db", 0))

    def held() -> dict[str, str]:
        # This database's connections by id: other runs may share the server, and a connection of an earlier
        # test that closes meanwhile must not hide a new one (the server's total did both).
        return {c["id"]: c["cmd"] for c in server.client_list() if c["db"] == db}

    created = await room()
    code = created.room.code
    players = []
    for nickname in ("warm-up", "warm-up 2"):
        player, _ = await joined_client(sockets, code, nickname)
        await player.state()  # past `joined`: in the room's subscription and watched by the heal
        players.append(player)
    # The second join's broadcast went out on the layer and came back in through the room's subscription.
    await players[0].until(lambda m: m["type"] == "state" and m["player_count"] == 2)
    before = held()
    for n in range(30):
        players.append((await joined_client(sockets, code, f"p{n}", ip=f"198.51.100.{n + 1}"))[0])
    added = {id_: cmd for id_, cmd in held().items() if id_ not in before}
    for client in players:
        await client.__aexit__()
    server.close()
    assert len(added) <= 2, f"{len(added)} more Redis connections for 30 joins (their last commands: {added})"


async def test_a_host_stepping_fast_through_a_round_is_never_throttled_and_a_player_still_is(
    room, settings, sockets, host_socket
):
    """The host's actions come out of a host's budget (WS_HOST_RATE_BURST), not the players' (WS_RATE_BURST): a
    round of ten questions stepped through as fast as the screen answers (31 steps) is never told to slow down,
    while a player's connection is held to the players' budget as before."""
    from tests.factories import SAMPLE

    created = await room(questions=(SAMPLE * 4)[:10])
    code = created.room.code
    host = await host_socket(created)
    player, _ = await joined_client(sockets, code, "Ada")
    steps = [("start", "lobby", -1)]
    for index in range(10):
        steps += [("close", "question", index), ("next", "reveal", index), ("next", "leaderboard", index)]
    assert len(steps) > settings.WS_RATE_BURST
    for kind, phase, index in steps:
        await host.send(type=kind, phase=phase, index=index)
        reply = await host.until(
            lambda m, left=phase: m["type"] == "error" or (m["type"] == "state" and m["phase"] != left)
        )
        assert reply["type"] == "state", (kind, phase, index, reply)
    assert reply["phase"] == "finished"
    for _ in range(settings.WS_RATE_BURST):
        await player.send(type="sync")
    await player.send(type="sync")
    assert (await player.error())["code"] == "rate_limited"


def test_a_host_connection_spends_its_own_budget_and_a_flood_of_it_still_closes():
    clock = FakeClock()
    budget = ratelimit.ConnectionBudget(
        messages=MessageBucket(per_minute=100, burst=2, flood=3, clock=clock),
        pings=MessageBucket(per_minute=60, burst=1, flood=3, clock=clock),
        host=MessageBucket(per_minute=300, burst=4, flood=3, clock=clock),
    )
    step = '{"type": "next", "phase": "reveal", "index": 0}'
    assert [budget.check(step) for _ in range(3)] == [Verdict.ALLOW, Verdict.ALLOW, Verdict.DROP]
    budget.as_host()  # the host's token shown: a full budget of its own, the players' left as it was
    assert [budget.check(step) for _ in range(4)] == [Verdict.ALLOW] * 4
    assert budget.check('{"type": "ping"}') is Verdict.ALLOW  # pings keep theirs
    assert [budget.check(step) for _ in range(4)] == [Verdict.DROP] * 3 + [Verdict.CLOSE]
