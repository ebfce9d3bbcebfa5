"""Redis outage: N rooms of 20 on two server processes; Redis is stopped for 2 s while every host opens the next
question, then started again. Measures how long after Redis is back every player sees that question, and
whether the answers then given within the question's time are all accepted.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/quizgate_bench REDIS_URL=redis://127.0.0.1:6379/5 \\
        .venv/bin/python bench/redis_outage.py --rooms 10

The servers use a Redis of the bench's own (redis-server on a free port), so the outage touches nothing else.
"""

import argparse
import asyncio
import json
import os
import random
import sys
import time
from pathlib import Path

from ws_load import PLAYERS_PER_ROOM, make_rooms, pct  # noqa: I001 - sets Django up first

from lobby.models import Answer
from tests.support.servers import start_asgi, start_redis

TIMER = 10


class Peer:
    def __init__(self, base, code):
        self.url, self.origin = f"{base}/ws/room/{code}/", base.replace("ws://", "http://")
        self.inbox: asyncio.Queue = asyncio.Queue()

    async def open(self):
        from websockets.asyncio.client import connect

        self.ws = await connect(self.url, origin=self.origin, open_timeout=30, max_queue=None)
        self.reader = asyncio.get_running_loop().create_task(self._read())
        return self

    async def _read(self):
        async for raw in self.ws:
            await self.inbox.put((time.monotonic(), json.loads(raw)))

    async def send(self, **message):
        await self.ws.send(json.dumps(message))

    async def until(self, predicate, timeout=30):
        async with asyncio.timeout(timeout):
            while True:
                at, message = await self.inbox.get()
                if predicate(message):
                    return at, message


async def run(bases, rooms, redis) -> dict:
    hosts, players = [], []
    for r in rooms:
        host = await Peer(bases[0], r.room.code).open()
        await host.send(type="host", token=r.host_token)
        hosts.append(host)

    async def join(base, code, nickname):
        peer = await Peer(base, code).open()
        await peer.send(type="join", nickname=nickname)
        await peer.until(lambda m: m["type"] == "joined")
        players.append(peer)

    await asyncio.gather(*(join(bases[i % 2], r.room.code, f"p{i}") for r in rooms for i in range(PLAYERS_PER_ROOM)))
    for host in hosts:
        await host.send(type="start")
    acked = 0

    async def answer(peer, index):
        nonlocal acked
        await peer.until(lambda m: m["type"] == "state" and m["phase"] == "question" and m["question_index"] == index)
        await peer.send(type="answer", question=index, option=random.randrange(4))
        _, reply = await peer.until(lambda m: m["type"] in ("answered", "error"))
        acked += reply["type"] == "answered"

    await asyncio.gather(*(answer(p, 0) for p in players))
    for host in hosts:
        await host.until(lambda m: m["type"] == "state" and m["phase"] == "reveal")
        await host.send(type="next", phase="reveal", index=0)
        await host.until(lambda m: m["type"] == "state" and m["phase"] == "leaderboard")

    redis.kill()
    await asyncio.sleep(0.3)
    for host in hosts:  # question 1 opens in every room while no broadcast can go out
        await host.send(type="next", phase="leaderboard", index=0)
    await asyncio.sleep(1.7)
    redis = start_redis(redis.port)
    back = time.monotonic()
    print(f"Redis back at {time.strftime('%H:%M:%S')}.{int(time.time() * 1000) % 1000:03d}")
    refused = []

    async def see_and_answer(peer):
        nonlocal acked
        at, state = await peer.until(lambda m: m["type"] == "state" and m.get("question_index") == 1, timeout=30)
        # A player answers at some moment of the question's time, counted from when they were shown it.
        await asyncio.sleep(random.uniform(0, TIMER - 1.0))
        await peer.send(type="answer", question=1, option=random.randrange(4))
        _, reply = await peer.until(lambda m: m["type"] in ("answered", "error"))
        if reply["type"] == "answered":
            acked += 1
        else:
            refused.append(reply["code"])
        return at - back

    delays = await asyncio.gather(*(see_and_answer(p) for p in players))
    stored = await asyncio.to_thread(lambda: Answer.objects.filter(room__code__in=[r.room.code for r in rooms]).count())
    for peer in [*hosts, *players]:
        await peer.ws.close()
    return {"redis": redis, "delays": delays, "refused": refused, "acked": acked, "stored": stored}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rooms", type=int, default=10)
    args = parser.parse_args()
    if not os.environ.get("REDIS_URL") or not os.environ.get("DATABASE_URL"):
        sys.exit("set DATABASE_URL (PostgreSQL) and REDIS_URL")
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    rooms = make_rooms(args.rooms, 2)
    for r in rooms:
        r.room.timer_seconds = TIMER
        r.room.save(update_fields=["timer_seconds"])
    redis = start_redis()
    env = {
        "REDIS_URL": f"redis://127.0.0.1:{redis.port}/0",
        "RATELIMIT_JOINS_PER_MINUTE": "1000000",
        "WS_MAX_PER_IP": "1000000",
        "LOG_LEVEL": "WARNING",
    }
    logs = [Path(f"/tmp/redis_outage_asgi-{n}.log") for n in (1, 2)]
    servers = [start_asgi(f"asgi-{n}", env=env, log_path=log) for n, log in zip((1, 2), logs, strict=True)]
    try:
        result = asyncio.run(run([s.ws_base for s in servers], rooms, redis))
        redis = result["redis"]
    finally:
        for server in servers:
            server.stop()
        redis.stop()
    delays = result["delays"]
    print(
        f"redis outage (2 s): {args.rooms} rooms, {len(delays)} players, 2 processes\n"
        f"   question seen after Redis was back: p50 {pct(delays, 50):.2f} s, p95 {pct(delays, 95):.2f} s, "
        f"all {max(delays):.2f} s; answers acknowledged {result['acked']}, stored {result['stored']}, "
        f"refused {len(result['refused'])} {sorted(set(result['refused']))}"
    )


if __name__ == "__main__":
    main()
