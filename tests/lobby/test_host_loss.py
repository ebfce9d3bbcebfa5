"""A host lost behind the load balancer: three hosts (process groups of their own on 127.0.0.11-13, one uvicorn
worker each) behind HAProxy as deploy/haproxy.cfg configures it, on PostgreSQL, the primary Redis and two channel
layer shards (CHANNEL_LAYER_REDIS_URLS). One room whose players HAProxy spreads over the hosts plays a question; one
host's whole process group is killed; every player is back within 5 s through the load balancer, no acknowledged
answer is lost, nobody is refused (neither as too late nor by the socket cap, under the default caps); a fourth
host then started takes a share of the sockets (lobby/realtime/rebalance.py sheds toward it between questions).

The room has 60 players, not the issue's 300: on this 2-core machine shared with other work, 300 players plus
four hosts and HAProxy take most of a minute to join and make the 5 s bound depend on the machine's load, not on
the code (bench/host_loss.py --rooms 1 --players 300 measures the 300; deploy/README.md has its figures). 60 still
puts about 20 on each host, so the kill drops a third of the room at once. The players come from three school
addresses (127.0.1.1-3) through HAProxy's X-Forwarded-For, 20 each, under the default WS_MAX_PER_IP."""

import asyncio
import contextlib
import json
import os
import re
import signal
import time
import uuid
from collections import Counter

import pytest
import redis.asyncio as redis
from asgiref.sync import sync_to_async
from django.conf import settings
from websockets.asyncio.client import connect

from lobby.models import Answer
from lobby.realtime import rebalance
from tests.support.hosts import (
    HAPROXY,
    Host,
    Phone,
    free_port_on,
    haproxy_servers,
    own_hostname,
    start_haproxy,
    start_host,
)
from tests.support.proxy import OutageProxy
from tests.support.servers import database_url, start_redis

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        not settings.REDIS_URL or settings.DATABASES["default"]["ENGINE"].endswith("sqlite3"),
        reason="hosts share one game through PostgreSQL and Redis: set DATABASE_URL and REDIS_URL",
    ),
    pytest.mark.skipif(HAPROXY is None, reason="needs Debian's haproxy (make test installs it when run as root)"),
]

PLAYERS = 60
SCHOOLS = 3
BACK_WITHIN = 5.0  # seconds, on this test's own clock, from the kill


def is_state(phase: str):
    return lambda m: m["type"] == "state" and m["phase"] == phase


async def display_connect(display: Phone, token: str):
    """The room's big screen, through the load balancer too."""
    ws = await connect(display.url, origin=display.origin, local_addr=(display.address, 0))
    await ws.send(json.dumps({"type": "host", "token": token}))
    while (json.loads(await ws.recv()))["type"] != "state":
        pass
    return ws


async def held_by(client, layer_prefix: str, hosts: list[Host]) -> list[int]:
    """The sockets each host holds, from the registry its processes write (lobby/realtime/rebalance.py)."""
    entries = await rebalance.registry(client, f"{layer_prefix}:rebalance:")
    pids = [set(h.pids()) for h in hosts]
    return [sum(n for name, n in entries.items() if rebalance.registry_pid(name) in p) for p in pids]


async def keep(phone: Phone) -> None:
    """A page left open: whenever its socket closes (4012: moved to another host), it comes back."""
    while True:
        with contextlib.suppress(Exception):
            await phone.ws.wait_closed()
        await phone.open()


async def test_a_host_killed_behind_haproxy_costs_its_players_seconds_and_a_new_host_takes_a_share(make_room, tmp_path):
    shards = [start_redis(), start_redis()]
    layer_prefix = f"qg-lb-{uuid.uuid4().hex[:8]}"
    env = {
        "CHANNEL_LAYER_REDIS_URLS": ",".join(f"redis://127.0.0.1:{s.port}/0" for s in shards),
        "CHANNEL_LAYER_PREFIX": layer_prefix,
        "RATELIMIT_KEY_PREFIX": f"rl-{uuid.uuid4().hex[:8]}",  # the per-address counters outlive a run
        "TRUST_X_FORWARDED_FOR": "1",
        "ROOM_MAX_PLAYERS": str(PLAYERS),
        "REBALANCE_INTERVAL_SECONDS": "0.5",
        # The default 10 is sized for rooms of hundreds: with 60 players the survivors hold about 10 over the mean.
        "REBALANCE_MIN_EXCESS": "4",
    }
    logs = {a: tmp_path / f"host-{a}.log" for a in ("11", "12", "13", "14")}
    hosts, haproxy, phones, display = [], None, [], None
    client = redis.Redis.from_url(settings.REDIS_URL)
    try:
        hosts = [
            start_host(f"127.0.0.{a}", env=env, log_path=logs[a], hostname=own_hostname(f"quizgate-host-{a}"))
            for a in ("11", "12", "13")
        ]
        fourth_port = free_port_on("127.0.0.14")  # HAProxy's fourth line: down until the host is started
        haproxy, lb = start_haproxy([h.target for h in hosts] + [f"127.0.0.14:{fourth_port}"], log_path=tmp_path / "lb")
        created = await sync_to_async(make_room)(timer_seconds=25)
        code = created.room.code
        refusals: Counter = Counter()

        display = Phone(lb, code, "host", "127.0.1.9", refusals)
        await asyncio.sleep(1.5)  # HAProxy's checks mark the three hosts up (rise 2, every 0.5 s)
        display.ws = await display_connect(display, created.host_token)
        for n in range(PLAYERS):
            phone = Phone(lb, code, f"P{n}", f"127.0.1.{1 + n % SCHOOLS}", refusals)
            await phone.open()
            phones.append(phone)
        per_host = await held_by(client, layer_prefix, hosts)
        assert all(per_host), f"HAProxy did not spread the room over the three hosts: {per_host}"

        await display.ws.send(json.dumps({"type": "start", "phase": "lobby", "index": -1}))
        for phone in phones:
            await phone.until(is_state("question"))
        early = phones[: PLAYERS // 2]
        for n, phone in enumerate(early):
            await phone.ws.send(json.dumps({"type": "answer", "question": 0, "option": n % 3}))
        for phone in early:
            assert (await phone.until(lambda m: m["type"] in ("answered", "error")))["type"] == "answered"

        await asyncio.sleep(1)  # every host's beat names the room it holds players of
        hosts[0].kill_group()
        killed = time.monotonic()
        await asyncio.sleep(0.2)
        dropped = [p for p in phones if p.ws.state.name != "OPEN"]
        assert dropped, "HAProxy left the dead host's sockets open"

        async def back(phone: Phone) -> tuple[float, dict]:
            picture = await phone.open()
            return time.monotonic() - killed, picture

        returns = await asyncio.gather(*(back(p) for p in dropped))
        took = sorted(t for t, _ in returns)
        assert took[-1] < BACK_WITHIN, f"{len(dropped)} dropped, back in {took}; refusals {dict(refusals)}"
        for phone, (_, picture) in zip(dropped, returns, strict=True):
            assert (picture["phase"], picture["question_index"]) == ("question", 0), f"{phone.nickname} too late"
            assert picture["you"]["answered"] is (phone in early), f"{phone.nickname} lost the acked answer"

        late = phones[PLAYERS // 2 :]
        for n, phone in enumerate(late):
            await phone.ws.send(json.dumps({"type": "answer", "question": 0, "option": n % 3}))
        replies = [await phone.until(lambda m: m["type"] in ("answered", "error")) for phone in late]
        assert [r["type"] for r in replies] == ["answered"] * len(late), replies
        stored = await sync_to_async(Answer.objects.filter(room_id=created.room.pk).count)()
        assert stored == PLAYERS
        app_refusals = {k: v for k, v in refusals.items() if not k.startswith("http ")}
        assert not app_refusals, f"players refused (too late, or by the socket cap): {app_refusals}"
        for phone in phones:
            await phone.until(is_state("reveal"), timeout=40)

        # Between questions a fourth host starts: HAProxy takes it in, the others shed sockets toward it.
        fourth = start_host(
            "127.0.0.14", env=env, log_path=logs["14"], port=fourth_port, hostname=own_hostname("quizgate-host-14")
        )
        hosts.append(fourth)
        keepers = [asyncio.create_task(keep(p)) for p in phones]
        try:
            share = 0
            async with asyncio.timeout(40):
                while share < PLAYERS // 8:
                    await asyncio.sleep(0.5)
                    share = (await held_by(client, layer_prefix, [fourth]))[0]
        finally:
            for task in keepers:
                task.cancel()
        print(f"{len(dropped)} of {PLAYERS} dropped; back in p50 {took[len(took) // 2]:.2f} s, max {took[-1]:.2f} s")
        print(f"the fourth host holds {share} sockets; refusals {dict(refusals) or 'none'}")
    except BaseException:
        for a, log in logs.items():
            if log.exists():
                print(f"host {a}", log.read_text(errors="replace")[-2000:])
        raise
    finally:
        await client.aclose()
        for phone in [display, *phones]:
            if phone is not None and phone.ws is not None:
                await phone.ws.close()
        if haproxy is not None:
            haproxy.kill()
            haproxy.wait(10)
        for host in hosts:
            host.stop()
        for shard in shards:
            shard.kill()


def acked_or_refused(message: dict) -> bool:
    """The answer's reply: acknowledged, or refused (an error other than the "paused" notice of an outage)."""
    return message["type"] == "answered" or (message["type"] == "error" and message.get("code") != "paused")


async def answer_all(phones: list[Phone], question: int) -> list[dict]:
    for n, phone in enumerate(phones):
        await phone.ws.send(json.dumps({"type": "answer", "question": question, "option": n % 3}))
    return list(await asyncio.gather(*(phone.until(acked_or_refused, timeout=40) for phone in phones)))


async def all_up(stats_url: str, names: list[str]) -> dict[str, dict]:
    async with asyncio.timeout(30):
        while True:
            servers = await asyncio.to_thread(haproxy_servers, stats_url)
            if all(servers[name]["status"] == "UP" for name in names):
                return servers
            await asyncio.sleep(0.25)


async def test_a_database_blip_and_a_stalled_host_close_no_socket_and_every_answer_sent_into_them_is_acked(
    make_room, tmp_path
):
    """PostgreSQL refuses every host for 3 s, and one host stops (SIGSTOP) for 2.5 s: HAProxy, checking /livez
    as deploy/haproxy.cfg says, takes no host out, so no socket is shut; the answers sent into either are
    acknowledged once it is over, and stored."""
    players = 30
    db = settings.DATABASES["default"]
    postgres = OutageProxy(db.get("HOST") or "127.0.0.1", int(db.get("PORT") or 5432))
    shards = [start_redis(), start_redis()]
    layer_prefix = f"qg-lb-{uuid.uuid4().hex[:8]}"
    env = {
        "DATABASE_URL": database_url().replace(f":{db.get('PORT') or 5432}/", f":{postgres.port}/"),
        "CHANNEL_LAYER_REDIS_URLS": ",".join(f"redis://127.0.0.1:{s.port}/0" for s in shards),
        "CHANNEL_LAYER_PREFIX": layer_prefix,
        "RATELIMIT_KEY_PREFIX": f"rl-{uuid.uuid4().hex[:8]}",
        "TRUST_X_FORWARDED_FOR": "1",
        "ROOM_MAX_PLAYERS": str(players),
    }
    logs = {a: tmp_path / f"host-{a}.log" for a in ("11", "12", "13")}
    hosts, haproxy, phones, display = [], None, [], None
    client = redis.Redis.from_url(settings.REDIS_URL)
    try:
        hosts = [
            start_host(f"127.0.0.{a}", env=env, log_path=logs[a], hostname=own_hostname(f"quizgate-host-{a}"))
            for a in ("11", "12", "13")
        ]
        haproxy, lb = start_haproxy([h.target for h in hosts], log_path=tmp_path / "lb")
        await all_up(haproxy.stats_url, ["host1", "host2", "host3"])
        created = await sync_to_async(make_room)(timer_seconds=60)
        display = Phone(lb, created.room.code, "host", "127.0.1.9")
        refusals: Counter = Counter()
        async with asyncio.timeout(60):
            display.ws = await display_connect(display, created.host_token)
            for n in range(players):
                phone = Phone(lb, created.room.code, f"P{n}", f"127.0.1.{1 + n % SCHOOLS}", refusals)
                await phone.open()
                phones.append(phone)
        servers = await asyncio.to_thread(haproxy_servers, haproxy.stats_url)
        per_host = [int(servers[h]["scur"]) for h in ("host1", "host2", "host3")]
        assert per_host[0], f"nobody on the host to be stalled: {per_host}"
        sockets = [phone.ws for phone in [display, *phones]]
        await display.ws.send(json.dumps({"type": "start", "phase": "lobby", "index": -1}))
        for phone in phones:
            await phone.until(is_state("question"))

        # Host 1 stops for 2.5 s; a third of the room answers meanwhile (those on host 1 wait for it).
        os.killpg(hosts[0].popen.pid, signal.SIGSTOP)
        try:
            into_stall = asyncio.create_task(answer_all(phones[: players // 3], 0))
            await asyncio.sleep(2.5)
        finally:
            os.killpg(hosts[0].popen.pid, signal.SIGCONT)
        replies = await into_stall

        # PostgreSQL refuses every host for 3 s; the rest of the room answers into it.
        postgres.cut_off()
        try:
            into_outage = asyncio.create_task(answer_all(phones[players // 3 :], 0))
            await asyncio.sleep(3)
        finally:
            postgres.restore()
        replies += await into_outage
        assert [r["type"] for r in replies] == ["answered"] * players, replies
        stored = await sync_to_async(Answer.objects.filter(room_id=created.room.pk).count)()
        assert stored == players
        await display.until(is_state("reveal"), timeout=40)

        # Longer than HAProxy's slowest verdict (three checks of 2 s): a host it were to take out is out by now.
        await asyncio.sleep(4)
        servers = await all_up(haproxy.stats_url, ["host1", "host2", "host3"])
        closed = [n for n, (ws, phone) in enumerate(zip(sockets, [display, *phones], strict=True))
                  if ws is not phone.ws or ws.state.name != "OPEN"]  # fmt: skip
        assert not closed, f"{len(closed)} sockets closed: {closed}"
        lb_log = (tmp_path / "lb").read_text(errors="replace")
        assert not re.search(r"hosts/host[123] is DOWN", lb_log), lb_log  # host4's line has nobody behind it
        print(f"on the stalled host {per_host[0]} of {players}; sockets closed 0 of {len(sockets)}; "
              f"failed checks {[servers[h]['chkfail'] for h in ('host1', 'host2', 'host3')]}")  # fmt: skip
    except BaseException:
        for a, log in logs.items():
            if log.exists():
                print(f"host {a}", log.read_text(errors="replace")[-2000:])
        raise
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(hosts[0].popen.pid, signal.SIGCONT) if hosts else None
        await client.aclose()
        for phone in [display, *phones]:
            if phone is not None and phone.ws is not None:
                await phone.ws.close()
        if haproxy is not None:
            haproxy.kill()
            haproxy.wait(10)
        for host in hosts:
            host.stop()
        for shard in shards:
            shard.kill()
        postgres.close()
