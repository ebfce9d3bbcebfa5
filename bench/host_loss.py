"""Host loss behind the load balancer: reconnect times when one host's whole process group is killed mid-question.

    set -a; . ./quizgate.env; set +a           # the hosts' environment (deploy/quizgate.env.example)
    .venv/bin/python bench/host_loss.py --lb ws://127.0.0.1:8000 --kill-group "$(cat host-11.pid)" --rooms 5

Runs against the deploy/ set already up (HAProxy in front of the hosts, each started by deploy/host.sh in a
process group of its own). N rooms of --players (20), each room's players from one address of its own (127.0.1.<room>,
through HAProxy's X-Forwarded-For: a school each), every player and host through the load balancer. Once every
player sees question 0, the process group --kill-group is killed (SIGKILL); each player whose socket closed
reconnects with its token as static/js/live.js does (0.5 s doubling backoff, jittered, never sooner than a
refusal's retry_after). Prints the reconnect times (p50, p95, max, from the kill), the refusals by code, then the
answers: everyone answers question 0 and every answer is acknowledged or refused, and the stored ones are counted.
With --start-host ADDRESS it then starts one more host (deploy/host.sh ADDRESS) and prints its share of the
sockets each second while the room is between questions (the others shed toward it: lobby/realtime/rebalance.py).
"""

import argparse
import asyncio
import contextlib
import json
import os
import signal
import time
from collections import Counter

import redis.asyncio as redis
from asgiref.sync import sync_to_async
from django.conf import settings
from websockets.asyncio.client import connect
from ws_load import REPO, make_rooms  # noqa: I001 - sets Django up first

from lobby.models import Answer
from lobby.realtime import rebalance
from tests.support.hosts import Phone

refusals: Counter[str] = Counter()  # every phone's, shared


async def run(lb: str, rooms: int, players: int, group: int, start_host: str) -> None:
    made = await sync_to_async(make_rooms)(rooms, 3)
    hosts, phones = [], []
    for r, created in enumerate(made):
        host = Phone(lb, created.room.code, "host", f"127.0.1.{r + 1}", refusals)
        host.ws = await connect(host.url, origin=host.origin, local_addr=(host.address, 0))
        await host.ws.send(json.dumps({"type": "host", "token": created.host_token}))
        hosts.append(host)
        for n in range(players):
            phone = Phone(lb, created.room.code, f"P{n}", f"127.0.1.{r + 1}", refusals)
            await phone.open()
            phones.append(phone)
    for host in hosts:
        await host.ws.send(json.dumps({"type": "start", "phase": "lobby", "index": -1}))
    for phone in phones:
        await phone.until(lambda m: m["type"] == "state" and m["phase"] == "question")
    await asyncio.sleep(1)
    os.killpg(group, signal.SIGKILL)
    killed = time.monotonic()
    await asyncio.sleep(0.2)
    dropped = [p for p in phones if p.ws.close_code is not None or p.ws.state.name != "OPEN"]

    async def back(phone: Phone) -> float:
        await phone.open()
        return time.monotonic() - killed

    took = sorted(await asyncio.gather(*(back(p) for p in dropped))) or [0.0]
    print(f"{len(dropped)} of {len(phones)} players dropped by the kill")
    print(
        f"reconnect from the kill: p50 {took[len(took) // 2]:.2f} s, p95 {took[int(len(took) * 0.95)]:.2f} s, "
        f"max {took[-1]:.2f} s; refusals: {dict(refusals) or 'none'}"
    )
    replies = Counter()
    for n, phone in enumerate(phones):
        await phone.ws.send(json.dumps({"type": "answer", "question": 0, "option": n % 3}))
    for phone in phones:
        reply = await phone.until(lambda m: m["type"] in ("answered", "error"))
        replies[reply["type"] if reply["type"] == "answered" else reply["code"]] += 1
    stored = await sync_to_async(Answer.objects.filter(room_id__in=[c.room.pk for c in made]).count)()
    print(f"answers: {dict(replies)}; stored {stored} of {len(phones)}")
    if start_host:
        await fourth_host(phones, start_host)


async def fourth_host(phones: list[Phone], address: str, seconds: float = 40) -> None:
    """Start another host (deploy/host.sh ADDRESS) with every room between questions, every player reconnecting
    when its socket closes (4012: moved), and print its share of the sockets each second, from the registry."""
    client = redis.Redis.from_url(settings.REDIS_URL)
    before = set(await rebalance.registry(client, rebalance._key_prefix()))
    started = time.monotonic()
    host = await asyncio.create_subprocess_exec(
        "setsid", "deploy/host.sh", address, cwd=REPO, stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
    )  # fmt: skip
    moved = 0

    async def keep(phone: Phone) -> None:
        nonlocal moved
        while True:
            with contextlib.suppress(Exception):
                await phone.ws.wait_closed()
            moved += 1
            await phone.open()

    keepers = [asyncio.create_task(keep(p)) for p in phones]
    reached = None
    try:
        while time.monotonic() - started < seconds:
            await asyncio.sleep(1)
            entries = await rebalance.registry(client, rebalance._key_prefix())
            new = sum(count for name, count in entries.items() if name not in before)
            total = sum(entries.values()) or 1
            if reached is None and new >= 0.2 * total:
                reached = time.monotonic() - started
            print(f"{time.monotonic() - started:5.1f} s: the new host holds {new} of {total} sockets")
    finally:
        for task in keepers:
            task.cancel()
        await client.aclose()
    print(f"the new host reached 20 % of the sockets {reached} s after it was started; {moved} players moved")
    print(f"(left running: process group {host.pid})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lb", default="ws://127.0.0.1:8000")
    parser.add_argument("--rooms", type=int, default=5)
    parser.add_argument("--players", type=int, default=20, help="per room (the hosts' ROOM_MAX_PLAYERS must allow it)")
    parser.add_argument("--kill-group", type=int, required=True, help="the process group of the host to kill")
    parser.add_argument("--start-host", default="", help="then start a host on this address and watch it fill")
    args = parser.parse_args()
    asyncio.run(run(args.lb, args.rooms, args.players, args.kill_group, args.start_host))


if __name__ == "__main__":
    main()
