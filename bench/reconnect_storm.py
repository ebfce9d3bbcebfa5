"""Reconnect storm: every player of N rooms drops at once and comes back with jittered backoff.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/quizgate_bench REDIS_URL=redis://127.0.0.1:6379/5 \\
        .venv/bin/python bench/reconnect_storm.py --rooms 25

Prints: time until every player is back in place (with its snapshot), scores lost (must be 0), and the
Redis client count before and after (must be flat).
"""

import argparse
import asyncio
import json
import os
import random
import subprocess
import sys
import time

import django
from websockets.asyncio.client import connect
from ws_load import PLAYERS_PER_ROOM, make_rooms, start_server  # noqa: I001 - sets Django up first

from lobby.models import Player
from tests.support.servers import server_env


def redis_clients() -> int:
    out = subprocess.run(
        ["redis-cli", "-u", os.environ["REDIS_URL"], "info", "clients"], capture_output=True, text=True
    )
    return int(next(line.split(":")[1] for line in out.stdout.splitlines() if line.startswith("connected_clients")))


async def until(ws, predicate, timeout=30):
    async with asyncio.timeout(timeout):
        while True:
            message = json.loads(await ws.recv())
            if predicate(message):
                return message


async def storm(port: int, rooms) -> dict:
    url = lambda code: f"ws://127.0.0.1:{port}/ws/room/{code}/"  # noqa: E731
    origin = f"http://127.0.0.1:{port}"
    players = []  # (code, token, ws)

    async def join(code, nickname):
        ws = await connect(url(code), origin=origin, open_timeout=30, max_queue=None)
        await ws.send(json.dumps({"type": "join", "nickname": nickname}))
        joined = await until(ws, lambda m: m["type"] == "joined")
        players.append([code, joined["token"], ws])

    await asyncio.gather(*(join(r.room.code, f"p{i}") for r in rooms for i in range(PLAYERS_PER_ROOM)))
    hosts = []
    for r in rooms:
        host = await connect(url(r.room.code), origin=origin, max_queue=None)
        await host.send(json.dumps({"type": "host", "token": r.host_token}))
        await host.send(json.dumps({"type": "start"}))
        hosts.append(host)

    async def answer(player):
        ws = player[2]
        await until(ws, lambda m: m["type"] == "state" and m["phase"] == "question")
        await ws.send(json.dumps({"type": "answer", "question": 0, "option": random.randrange(4)}))
        await until(ws, lambda m: m["type"] == "state" and m["phase"] == "reveal")

    await asyncio.gather(*(answer(p) for p in players))
    codes = [r.room.code for r in rooms]
    before_scores = await asyncio.to_thread(
        lambda: dict(Player.objects.filter(room__code__in=codes).values_list("pk", "score"))
    )
    await asyncio.sleep(2)
    clients_before = redis_clients()

    # Everyone drops at once (a venue's Wi-Fi blinks) ...
    await asyncio.gather(*(p[2].close() for p in players))
    started = time.monotonic()
    back_scores: dict[str, int] = {}

    # ... and comes back with jittered exponential backoff, as static/js/room.js does.
    async def come_back(player):
        code, token, _ = player
        attempt = 0
        while True:
            await asyncio.sleep(min(0.5 * 2**attempt, 8) * random.uniform(0.5, 1.0))
            try:
                ws = await connect(url(code), origin=origin, open_timeout=10, max_queue=None)
                await ws.send(json.dumps({"type": "resume", "token": token}))
                snapshot = await until(ws, lambda m: m["type"] == "state", timeout=10)
                back_scores[token] = snapshot["you"]["score"]
                player[2] = ws
                return time.monotonic() - started
            except Exception:  # noqa: BLE001 - the storm retries, as a phone would
                attempt += 1

    times = await asyncio.gather(*(come_back(p) for p in players))
    await asyncio.sleep(2)
    clients_after = redis_clients()
    after_scores = await asyncio.to_thread(
        lambda: dict(Player.objects.filter(room__code__in=codes).values_list("pk", "score"))
    )
    for p in players:
        await p[2].close()
    for host in hosts:
        await host.close()
    return {
        "players": len(players),
        "all_back_s": max(times),
        "p50_back_s": sorted(times)[len(times) // 2],
        "scores_lost": sum(1 for pk, score in before_scores.items() if after_scores.get(pk) != score),
        "snapshot_score_total": sum(back_scores.values()),
        "db_score_total": sum(after_scores.values()),
        "redis_clients": (clients_before, clients_after),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rooms", type=int, default=25)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--layer", default=os.environ.get("CHANNEL_LAYER", "pubsub"))
    args = parser.parse_args()
    if not os.environ.get("REDIS_URL") or not os.environ.get("DATABASE_URL"):
        sys.exit("set DATABASE_URL (PostgreSQL) and REDIS_URL")
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    rooms = make_rooms(args.rooms, 1)
    django.db.connections.close_all()
    env = server_env(CHANNEL_LAYER=args.layer, RATELIMIT_ROOMS_PER_10_MINUTES="1000000", WS_MAX_PER_IP="1000000")
    server, port = start_server("config.asgi:application", args.workers, env)
    try:
        result = asyncio.run(storm(port, rooms))
    finally:
        server.terminate()
        server.wait(10)
    print(
        f"reconnect storm: {args.rooms} rooms, {result['players']} players, layer={args.layer}, "
        f"workers={args.workers}\n"
        f"   all back in {result['all_back_s']:.1f} s (p50 {result['p50_back_s']:.1f} s); "
        f"scores lost {result['scores_lost']} (snapshot total {result['snapshot_score_total']} "
        f"= database total {result['db_score_total']}); "
        f"Redis clients before {result['redis_clients'][0]}, after {result['redis_clients'][1]}"
    )


if __name__ == "__main__":
    main()
