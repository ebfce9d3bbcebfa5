"""Spreading sockets after a restart or over a new host (lobby/realtime/rebalance.py): who is over its share, how many
it moves, which sockets may be asked to reconnect (never a player who may be answering), and a simulated set of
servers behind a leastconn balancer, on a clock of the test's own, that reaches a fair share without moving anyone
twice."""

import asyncio
import random
import uuid

import pytest
import redis.asyncio as redis
from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import connections

from lobby.models import Room
from lobby.realtime import rebalance
from lobby.realtime.rebalance import Policy, Rebalancer, eligible, plan
from lobby.rules.machine import Phase

POLICY = Policy(tolerance=0.1, minimum=3, batch=100)


def servers(*units: tuple[int, ...]) -> dict[str, tuple[int, str]]:
    """Entries of processes: each argument one server, its processes' counts."""
    return {f"s{u}-p{p}": (count, f"s{u}") for u, counts in enumerate(units) for p, count in enumerate(counts)}


def aged(entries: dict[str, tuple[int, str]]) -> dict[str, tuple[int, str, float]]:
    """The same, as the registry has them: each process started long ago."""
    return {name: (count, unit, 0.0) for name, (count, unit) in entries.items()}


def test_after_a_restart_each_survivor_sheds_what_it_holds_over_a_fair_share():
    entries = servers((0,), (100,), (100,))
    assert [plan(name, entries, POLICY) for name in entries] == [0, 33, 33]


def test_a_fourth_server_at_12_percent_gets_its_share():
    # 200 over four: 50 each. The three at 58 are only 8 over (16 %), the fourth 24 under: before, the stop line
    # (the mean + 10) left it there for good.
    entries = servers((58,), (58,), (58,), (26,))
    assert [plan(name, entries, POLICY) for name in entries] == [8, 8, 8, 0]


def test_servers_within_ten_percent_of_their_share_keep_their_sockets():
    assert [plan(n, e, POLICY) for e in [servers((52,), (48,), (51,), (49,))] for n in e] == [0, 0, 0, 0]
    # Nor for fewer than the minimum: 3 against 0 is far off in percent, but not worth a move.
    assert [plan(n, e, POLICY) for e in [servers((3,), (0,))] for n in e] == [0, 0]


def test_a_server_under_its_share_sheds_nothing_even_from_its_fullest_worker():
    # Server 0's kernel gave one worker all of its 60; server 1 holds 120 on its one worker. A socket closed on
    # server 0 would come straight back to it (it holds the fewest): only server 1 sheds.
    entries = servers((60, 0), (120,))
    assert [plan(name, entries, POLICY) for name in entries] == [0, 0, 60]


def test_a_servers_workers_share_its_excess_in_proportion_to_what_they_hold():
    entries = servers((0,), (90, 30))
    assert [plan(name, entries, POLICY) for name in entries] == [0, 30, 10]


def test_a_turn_closes_at_most_the_batch():
    entries = servers((0,), (400,))
    assert plan("s1-p0", entries, Policy(tolerance=0.1, minimum=3, batch=50)) == 50


def test_one_server_spreads_over_its_workers():
    # Two workers behind one port: each worker is its own unit (the kernel picks among them).
    entries = servers((100, 0))
    assert [plan(name, entries, POLICY) for name in entries] == [50, 0]


def test_sockets_still_reconnecting_count_toward_the_share():
    # 200 players: 40 of those the first survivor moved are on their way to the restarted server. Taken from the
    # registry alone (160), the second would shed 46 and leave the restarted one over its share.
    entries = servers((0,), (60,), (100,))
    assert plan("s2-p0", entries, POLICY) == 46
    assert plan("s2-p0", entries, POLICY, total=200) == 33


def test_alone_it_never_sheds():
    assert plan("s0-p0", servers((500,)), POLICY) == 0
    assert plan("gone", servers((500,), (0,)), POLICY) == 0


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_after_a_turn_that_closed_sockets_it_waits_for_them_to_settle_and_remembers_the_total(settings):
    settings.REBALANCE_TOLERANCE, settings.REBALANCE_MIN_EXCESS, settings.REBALANCE_BATCH = 0.1, 3, 100
    clock = Clock()
    holder = Rebalancer(name="s1-p0", unit="s1", clock=clock, started=0)
    assert holder.to_close(aged(servers((0,), (100,), (100,))), 1.0) == 33
    holder.settle(1.0)
    clock.now += 1
    assert holder.to_close(aged(servers((10,), (67,), (100,))), 1.0) == 0  # settling
    clock.now += 2.5
    # Past the settle time the total of 3.5 s ago (200) still counts: 20 of the moved are not back yet.
    assert holder.to_close(aged(servers((23,), (67,), (90,))), 1.0) == 0  # it holds 67 of a fair 66.7
    clock.now += 6.5
    # Totals older than two settle times are forgotten: 50 players left, the fair share is 50 now.
    assert holder.to_close(aged(servers((0,), (90,), (60,))), 1.0) == 40


def test_while_a_dead_servers_entry_still_counts_its_players_nothing_moves(settings):
    settings.REBALANCE_TOLERANCE, settings.REBALANCE_MIN_EXCESS, settings.REBALANCE_BATCH = 0.1, 3, 100
    clock = Clock()
    holder = Rebalancer(name="s1-p0", unit="s1", clock=clock, started=0)
    assert holder.to_close(aged(servers((70,), (70,), (70,))), 1.0) == 0
    # Server 0 was killed; its 70 reconnected to the other two, and its entry still says 70 until it expires: the
    # dead one looks 23 under a fair 93, the survivors 12 over. They keep their sockets (they would only move
    # between the two of them).
    clock.now += 1
    assert holder.to_close(aged(servers((70,), (105,), (105,))), 1.0) == 0
    clock.now += 1
    assert holder.to_close(aged(servers((105,), (105,))), 1.0) == 0
    clock.now += 3
    assert holder.to_close(aged(servers((105,), (105,))), 1.0) == 0


def test_a_process_just_started_is_no_target_until_the_balancer_can_send_it_sockets(settings):
    settings.REBALANCE_TOLERANCE, settings.REBALANCE_MIN_EXCESS, settings.REBALANCE_BATCH = 0.1, 3, 100
    settings.REBALANCE_WARMUP_SECONDS = 5
    clock = Clock()
    holder = Rebalancer(name="s1-p0", unit="s1", clock=clock, started=0)
    entries = aged(servers((0,), (100,), (100,)))
    entries["s0-p0"] = (0, "s0", clock.now - 1)  # started a second ago: HAProxy has not taken it in yet
    assert holder.to_close(entries, 1.0) == 0
    clock.now += 4
    assert holder.to_close(entries, 1.0) == 33


class Player:
    """A page's socket in the simulation: in a room, joined, with its token."""

    def __init__(self, room_id: int):
        self.room_id, self.role, self.seq = room_id, "player", 3


def simulate(held: list[list[int]], seconds: float, seed: int) -> tuple[list[list[int]], dict[Player, int]]:
    """Servers behind a leastconn balancer (HAProxy's: a new connection goes to the server holding the fewest),
    each server's kernel handing it to a worker at random; `held`: each server's workers' sockets at the start.
    A server that holds nothing at the start has just started: the balancer sends it nothing for 3 s (HAProxy's
    two good checks). Every worker's Rebalancer turns each second (out of step with the others), writes its count
    to a registry the others read as it was at their last turn, and what it closes comes back 0.5-4 s later (a
    loaded machine). Ten
    rooms play questions (8 s open, 4 s between, each out of step): only players of a room between questions move.
    Returns each server's sockets every second and each moved player's moves."""
    rng = random.Random(seed)
    clock = Clock()
    start = clock.now
    new = [not sum(counts) for counts in held]
    workers = [[Rebalancer(name=f"s{u}-w{w}", unit=f"s{u}", clock=clock, started=start if new[u] else 0)
                for w in range(len(c))] for u, c in enumerate(held)]  # fmt: skip
    everyone = []
    for server, counts in zip(workers, held, strict=True):
        for worker, count in zip(server, counts, strict=True):
            for _ in range(count):
                everyone.append(Player(len(everyone) % 10))
                worker.track(everyone[-1])
    offsets = {w.name: rng.uniform(0, 1) for server in workers for w in server}
    room_offsets = [rng.uniform(0, 12) for _ in range(10)]
    # As each worker last wrote it (a restarted server's workers, at 0, as they start).
    registry = {w.name: (w.count(), w.unit, w.started) for server in workers for w in server}
    on_the_way: list[tuple[float, Player]] = []
    moves: dict[Player, int] = {}
    shares = []
    for step in range(int(seconds * 10)):
        clock.now = start + step / 10
        asking = {r for r in range(10) if (clock.now - start + room_offsets[r]) % 12 < 8}
        for due, player in [item for item in on_the_way if item[0] <= clock.now]:
            on_the_way.remove((due, player))
            up = [s for u, s in enumerate(workers) if not new[u] or clock.now >= start + 3]
            fewest = min(sum(w.count() for w in server) for server in up)
            server = rng.choice([s for s in up if sum(w.count() for w in s) == fewest])
            rng.choice(server).track(player)
        for worker in (w for server in workers for w in server):
            if round((clock.now - start - offsets[worker.name]) * 10) % 10:
                continue
            registry[worker.name] = (worker.count(), worker.unit, worker.started)
            n = worker.to_close(dict(registry), 1.0)
            chosen = eligible(worker.longest_held(), asking)[:n] if n else []
            for player in chosen:
                worker.sockets.pop(player)
                on_the_way.append((clock.now + rng.uniform(0.5, 4.0), player))
                moves[player] = moves.get(player, 0) + 1
            if chosen:
                worker.settle(1.0)
        if step % 10 == 0:
            shares.append([sum(w.count() for w in server) for server in workers])
    return shares, moves


def fair_within(counts: list[int], part: float) -> bool:
    fair = sum(counts) / len(counts)
    return all(abs(c - fair) <= part * fair for c in counts)


@pytest.mark.parametrize(
    ("held", "seed"),
    [
        ([[0], [100], [100]], 1),  # a host restarted: its players went to the other two
        ([[0], [100], [100]], 2),
        ([[67], [67], [66], [0]], 3),  # a fourth host started
        ([[0, 0], [60, 40], [45, 55]], 4),  # hosts of two workers each, one restarted
        ([[0, 0], [60, 40], [45, 55]], 5),
    ],
)
def test_a_restarted_or_new_server_reaches_its_fair_share_in_30_s_moving_each_player_at_most_once(held, seed, settings):
    settings.REBALANCE_TOLERANCE, settings.REBALANCE_MIN_EXCESS, settings.REBALANCE_BATCH = 0.1, 3, 100
    settings.REBALANCE_WARMUP_SECONDS = 5
    shares, moves = simulate(held, seconds=90, seed=seed)
    reached = next((second for second, counts in enumerate(shares) if fair_within(counts, 0.1)), None)
    assert reached is not None and reached <= 30, shares[:40]
    # And it stays there, with no more moves: nobody is sent back and forth.
    assert all(fair_within(counts, 0.1) for counts in shares[reached:]), shares
    assert sum(moves.values()) / len(moves) <= 1.5, sorted(moves.values())
    assert max(moves.values()) <= 2
    # Hardly more players moved than had to: what the servers held over a fair share at the start.
    fair = sum(map(sum, held)) / len(held)
    assert len(moves) <= 1.1 * sum(max(0, sum(counts) - fair) for counts in held), (len(moves), shares[:10])


class FakeSocket:
    def __init__(self, room_id, role="player", seq=3):
        self.room_id, self.role, self.seq, self.closed = room_id, role, seq, None

    async def close(self, code=None, reason=None):
        self.closed = (code, reason)


def test_only_players_of_rooms_not_in_an_open_question_are_eligible():
    asking, revealing = FakeSocket(1), FakeSocket(2)
    host, joining = FakeSocket(2, role="host"), FakeSocket(None, role=None)
    # Joined, but not yet sent its first picture: its "joined" frame (its token) may not have reached it.
    just_joined = FakeSocket(2, seq=-1)
    assert eligible([asking, revealing, host, joining, just_joined], open_question_rooms={1}) == [revealing]


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(not settings.REDIS_URL, reason="the registry of processes lives in Redis")
async def test_a_process_over_its_share_closes_players_in_the_reveal_and_none_in_an_open_question(make_room):
    asking = (await sync_to_async(make_room)()).room
    revealing = (await sync_to_async(make_room)()).room
    await sync_to_async(Room.objects.filter(pk=asking.pk).update)(phase=Phase.QUESTION, question_index=0)
    await sync_to_async(Room.objects.filter(pk=revealing.pk).update)(phase=Phase.REVEAL, question_index=0)
    mid_answer = [FakeSocket(asking.pk) for _ in range(20)]
    between = [FakeSocket(revealing.pk) for _ in range(20)]
    client = redis.Redis.from_url(settings.REDIS_URL)
    prefix = f"test-rebalance-{uuid.uuid4().hex}:"
    try:
        # Another live server, just restarted, holding nothing: the fair share is 20 each.
        await client.set(prefix + "replacement", 0, px=5000)
        clock = Clock()
        holder = Rebalancer(clock=clock, started=0)
        for socket in mid_answer + between:
            holder.track(socket)
            clock.now += 1  # the mid-answer ones held longest
        assert await holder.tick(client, prefix, 1.0) == 20
        assert {s.closed for s in between} == {(rebalance.REBALANCE_CLOSE_CODE, "rebalance")}
        assert not any(s.closed for s in mid_answer)
        # Its own count is in the registry for the others, with its server and an expiry (a killed process drops
        # out).
        assert (await client.get(prefix + holder.name)).decode() == f"40 {holder.unit} 0.000"
        assert 0 < await client.pttl(prefix + holder.name) <= rebalance.entry_ttl_ms(1.0) == 3000
        # The closed sockets are no longer counted; it still holds 20 over a fair 10, all in an open question.
        assert holder.count() == 20
        clock.now += rebalance.settle_seconds(1.0)
        assert await holder.tick(client, prefix, 1.0) == 0
        assert not any(s.closed for s in mid_answer)
    finally:
        await client.delete(*[k async for k in client.scan_iter(match=prefix + "*")])
        await client.aclose()
        rebalance.db_thread.submit(connections.close_all).result()


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(not settings.REDIS_URL, reason="the registry of processes lives in Redis")
async def test_a_question_opening_while_sockets_are_moved_waits_until_they_are_closed(make_room, settings):
    """The host opens a question in one room while the process is closing a batch of sockets: none of that room's
    players is closed once its question is open (before, the phase was read first, then the sockets were closed
    one by one, and a player could be moved up to half a second into the question)."""
    settings.REBALANCE_MIN_EXCESS, settings.REBALANCE_BATCH = 0, 20
    rooms = [(await sync_to_async(make_room)()).room for _ in range(2)]
    for room in rooms:
        await sync_to_async(Room.objects.filter(pk=room.pk).update)(phase=Phase.REVEAL, question_index=0)
    flip = sync_to_async(
        lambda: Room.objects.filter(pk=rooms[1].pk).update(phase=Phase.QUESTION, question_index=1),
        thread_sensitive=False,
    )
    read_phase = sync_to_async(lambda pk: Room.objects.get(pk=pk).phase, thread_sensitive=False)
    opened: list[asyncio.Task] = []
    phases_at_close: list[tuple[int, str]] = []

    class Moved(FakeSocket):
        async def close(self, code=None, reason=None):
            if not opened:  # the host's "next" in the second room lands during the batch
                opened.append(asyncio.get_running_loop().create_task(flip()))
                await asyncio.sleep(0.3)
            phases_at_close.append((self.room_id, await read_phase(self.room_id)))
            await super().close(code, reason)

    client = redis.Redis.from_url(settings.REDIS_URL)
    prefix = f"test-rebalance-{uuid.uuid4().hex}:"
    try:
        for name in ("a", "b", "c"):
            await client.set(prefix + name, 0, px=5000)
        holder = Rebalancer(started=0)
        moved = [Moved(rooms[n % 2].pk) for n in range(20)]
        for socket in moved:
            holder.track(socket)
        assert await holder.tick(client, prefix, 1.0) == 15
        assert await opened[0] == 1  # the question did open, once the batch was closed
        assert len(phases_at_close) == 15
        assert all(phase != Phase.QUESTION for _, phase in phases_at_close), phases_at_close
    finally:
        await client.delete(*[k async for k in client.scan_iter(match=prefix + "*")])
        await client.aclose()
        rebalance.db_thread.submit(connections.close_all).result()
