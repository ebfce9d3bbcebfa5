"""Worker restart: the sockets per worker over time after one of two uvicorn workers is killed
(lobby/realtime/rebalance.py).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/quizgate_bench REDIS_URL=redis://127.0.0.1:6379/5 \\
        .venv/bin/python bench/worker_restart.py --rooms 10

N rooms of 20 players in their lobby on one server of two workers. Every player reconnects with its token when
its socket closes, as static/js/live.js does: at once on 4012 (rebalance), after 0.25-0.5 s otherwise. The worker
holding the most sockets is killed; uvicorn restarts it. Prints the joined sockets of each worker (from the
workers' own registry in Redis) every second for --seconds, when the restarted worker registered, the time until
it holds 40 % of them, and the players moved (4012 closes).

Two servers in the same run: the baseline registers but never sheds (REBALANCE_MIN_EXCESS out of reach: the
restarted worker stays near 0), then the settings as they are.
"""

import argparse
import asyncio
import json
import os
import random
import signal
import sys
import time

import django
import redis.asyncio as redis
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed
from ws_load import PLAYERS_PER_ROOM, make_rooms, start_server  # noqa: I001 - sets Django up first

from lobby.realtime import rebalance
from tests.support.servers import server_env


async def registry(client) -> dict[int, int]:
    entries = await rebalance.registry(client, rebalance._key_prefix())
    return {rebalance.registry_pid(name): count for name, count in entries.items()}


errors: list[str] = []


class Player:
    def __init__(self, url, origin, code, nickname, moved):
        self.url, self.origin, self.code, self.nickname, self.moved = url, origin, code, nickname, moved
        self.token = None
        self.joined = asyncio.Event()

    async def run(self):
        while True:
            try:
                async with connect(self.url, origin=self.origin, open_timeout=30, max_queue=None) as ws:
                    hello = {"type": "resume", "token": self.token} if self.token else {"type": "join"}
                    await ws.send(json.dumps({**hello, "nickname": self.nickname}))
                    async for raw in ws:
                        message = json.loads(raw)
                        if message["type"] == "joined":
                            self.token = message["token"]
                            self.joined.set()
                        elif message["type"] == "error":
                            errors.append(message["code"])
                code = ws.close_code
            except ConnectionClosed as closed:
                code = closed.rcvd.code if closed.rcvd else None
            except Exception as exc:  # refused, timed out or broken: try again, as the page does
                code = None
                errors.append(repr(exc)[:120])
            if code == rebalance.REBALANCE_CLOSE_CODE:
                self.moved.append(time.monotonic())
                continue
            await asyncio.sleep(random.uniform(0.25, 0.5))


async def run(port, rooms, seconds) -> dict:
    url = lambda code: f"ws://127.0.0.1:{port}/ws/room/{code}/"  # noqa: E731
    origin = f"http://127.0.0.1:{port}"
    client = redis.Redis.from_url(os.environ["REDIS_URL"])
    moved: list[float] = []
    players = [
        Player(url(r.room.code), origin, r.room.code, f"p{i}", moved) for r in rooms for i in range(PLAYERS_PER_ROOM)
    ]
    tasks = [asyncio.create_task(p.run()) for p in players]
    try:
        async with asyncio.timeout(120):
            await asyncio.gather(*(p.joined.wait() for p in players))
    except TimeoutError:
        sys.exit(f"{sum(p.joined.is_set() for p in players)} of {len(players)} joined; errors {set(errors)}")
    await asyncio.sleep(3)  # the registry settles (the lobby may already move a few)
    before = await registry(client)
    workers = sorted(before)
    victim = max(workers, key=lambda pid: before[pid])
    moved.clear()
    killed = time.monotonic()
    os.kill(victim, signal.SIGKILL)
    rows, spread_at, total = [], None, len(players)
    replacement, registered_at = None, None
    while (now := time.monotonic() - killed) < seconds:
        counts = await registry(client)
        new = [pid for pid in counts if pid not in workers]
        if replacement is None and new:
            replacement, registered_at = new[0], now
        survivor = next(pid for pid in workers if pid != victim)
        rows.append((now, counts.get(survivor, 0), counts.get(replacement, 0) if replacement else 0))
        if spread_at is None and replacement and counts.get(replacement, 0) >= 0.4 * total:
            spread_at = now
        await asyncio.sleep(1 - (time.monotonic() - killed) % 1)
    for task in tasks:
        task.cancel()
    await client.aclose()
    return {
        "before": before,
        "victim": victim,
        "rows": rows,
        "spread_at": spread_at,
        "registered_at": registered_at,
        "moved": len(moved),
        "total": total,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rooms", type=int, default=10)
    parser.add_argument("--seconds", type=float, default=30)
    args = parser.parse_args()
    if not os.environ.get("REDIS_URL") or not os.environ.get("DATABASE_URL"):
        sys.exit("set DATABASE_URL (PostgreSQL) and REDIS_URL")
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    results = {}
    baseline = {"REBALANCE_MIN_EXCESS": "1000000"}
    for name, extra in (("baseline, never sheds", baseline), ("rebalancing", {})):
        env = server_env(
            REBALANCE_INTERVAL_SECONDS=os.environ.get("REBALANCE_INTERVAL_SECONDS", "1"),
            RATELIMIT_ROOMS_PER_10_MINUTES="1000000",
            WS_MAX_PER_IP="1000000",
            LOG_LEVEL="WARNING",
            **extra,
        )
        rooms = make_rooms(args.rooms, 1)
        django.db.connections.close_all()
        server, port = start_server("config.asgi:application", 2, env)
        try:
            results[name] = asyncio.run(run(port, rooms, args.seconds))
        finally:
            server.terminate()
            server.wait(10)
    for name, result in results.items():
        print(f"worker restart ({name}): {args.rooms} rooms, {result['total']} players, 2 workers; "
              f"before the kill {result['before']}")  # fmt: skip
        print("   t(s) survivor/restarted: " + "  ".join(f"{t:.0f}:{a}/{b}" for t, a, b in result["rows"]))
        registered = result["registered_at"]
        registered_text = f"{registered:.1f} s" if registered is not None else "not within the run"
        if result["spread_at"] is not None:
            spread = f"{result['spread_at']:.1f} s ({result['spread_at'] - registered:.1f} s after it registered)"
        else:
            spread = "not within the run"
        last = result["rows"][-1]
        print(f"   restarted worker registered after {registered_text}; at 40 % after {spread}; "
              f"at the end {last[1]}/{last[2]}; players moved (4012): {result['moved']}")  # fmt: skip


if __name__ == "__main__":
    main()
