"""Hosts behind HAProxy, 1, 2, 3 of them: fan-out latency and the hosts' CPU per unit of work.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/quizgate_bench REDIS_URL=redis://127.0.0.1:6379/5 \\
        .venv/bin/python bench/hosts_scale.py --hosts 1,2,3 --rooms 5 --runs 3

For each number of hosts it starts that many hosts (tests/support/hosts.py: config.serve with one uvicorn worker,
each in a process group of its own on 127.0.0.11, .12 ...), two channel layer shards of its own
(CHANNEL_LAYER_REDIS_URLS) and HAProxy with deploy/haproxy.cfg in front; then, --runs times, --rooms rooms of 20
players (each room from an address of its own, 127.0.1.<room>, through X-Forwarded-For; the default caps) play
--questions questions, every player answering each. It prints the question's fan-out p50/p95 (the server's
sent_at to the phone's receipt), the answers acknowledged, and the hosts' CPU time over the game (utime + stime
of each host's processes, from /proc/<pid>/stat, less each host's idle cost measured over 5 s just
before): per host, per answer and per room's question
(its fan-out to the room's 20 phones, and their 20 answers).
"""

import argparse
import asyncio
import json
import random
import statistics
import tempfile
import time
import uuid
from pathlib import Path

from asgiref.sync import sync_to_async
from django.conf import settings
from websockets.asyncio.client import connect
from ws_load import call_command, make_rooms, pct  # noqa: I001 - sets Django up first

from tests.support.hosts import start_haproxy, start_host
from tests.support.servers import start_redis

PLAYERS = 20


async def player(lb, code, n, address, out, questions, ready: asyncio.Event):
    url, origin = f"{lb}/ws/room/{code}/", lb.replace("ws://", "http://")
    ws = await connect(url, origin=origin, open_timeout=30, max_queue=None, local_addr=(address, 0))
    await ws.send(json.dumps({"type": "join", "nickname": f"P{n}"}))
    while (reply := json.loads(await ws.recv()))["type"] != "state":
        if reply["type"] == "error":
            raise RuntimeError(reply["code"])
    ready.set()
    seen = set()
    async with asyncio.timeout(questions * 40 + 60):
        async for raw in ws:
            now = time.time()
            message = json.loads(raw)
            if message["type"] == "answered":
                out["answers"] += 1
            elif message["type"] == "state":
                index = message["question_index"]
                if message["phase"] == "question" and index not in seen:
                    seen.add(index)
                    out["frames"] += 1
                    if "sent_at" in message:
                        out["fanout"].append((now - message["sent_at"]) * 1000)
                    await asyncio.sleep(random.uniform(0.2, 1.0))
                    await ws.send(json.dumps({"type": "answer", "question": index, "option": random.randrange(4)}))
                elif message["phase"] == "finished":
                    break
    await ws.close()


async def display(lb, code, token, address, questions, go: asyncio.Event):
    ws = await connect(f"{lb}/ws/room/{code}/", origin=lb.replace("ws://", "http://"), max_queue=None,
                       local_addr=(address, 0))  # fmt: skip
    await ws.send(json.dumps({"type": "host", "token": token}))
    await go.wait()

    async def until(phase, index):
        while True:
            m = json.loads(await ws.recv())
            if m.get("type") == "state" and m["phase"] == phase and m["question_index"] == index:
                return

    await ws.send(json.dumps({"type": "start"}))
    for index in range(questions):
        await until("reveal", index)
        await asyncio.sleep(1)
        await ws.send(json.dumps({"type": "next", "phase": "reveal", "index": index}))
        await until("leaderboard", index)
        await ws.send(json.dumps({"type": "next", "phase": "leaderboard", "index": index}))
    await ws.close()


async def one_run(lb, hosts, rooms, questions) -> dict:
    made = await sync_to_async(make_rooms)(rooms, questions)
    out = {"answers": 0, "frames": 0, "fanout": []}
    go = asyncio.Event()
    tasks, displays = [], []
    for r, created in enumerate(made):
        address = f"127.0.1.{r + 1}"
        displays.append(asyncio.create_task(display(lb, created.room.code, created.host_token, address, questions, go)))
        for n in range(PLAYERS):
            ready = asyncio.Event()
            tasks.append(asyncio.create_task(player(lb, created.room.code, n, address, out, questions, ready)))
            await ready.wait()
    await asyncio.sleep(1)
    # Each host's idle cost (its clock, heal, beats) over 5 s with every player in place, taken off the game's.
    idle_from = [h.cpu_seconds() for h in hosts]
    await asyncio.sleep(5)
    before = [h.cpu_seconds() for h in hosts]
    idle = [(b - i) / 5 for b, i in zip(before, idle_from, strict=True)]
    started = time.monotonic()
    go.set()
    await asyncio.gather(*displays, *tasks)
    took = time.monotonic() - started
    cpu = [h.cpu_seconds() - b - r * took for h, b, r in zip(hosts, before, idle, strict=True)]
    return {**out, "cpu": cpu, "idle": idle}


async def configuration(count: int, rooms: int, questions: int, runs: int, logs: Path) -> list[dict]:
    shards = [start_redis(), start_redis()]
    env = {
        "CHANNEL_LAYER_REDIS_URLS": ",".join(f"redis://127.0.0.1:{s.port}/0" for s in shards),
        "CHANNEL_LAYER_PREFIX": f"qg-scale-{uuid.uuid4().hex[:8]}",
        "RATELIMIT_KEY_PREFIX": f"rl-{uuid.uuid4().hex[:8]}",
        "TRUST_X_FORWARDED_FOR": "1",
        "REBALANCE_INTERVAL_SECONDS": "0",
        "GAME_CLOCK_INTERVAL": str(settings.GAME_CLOCK_INTERVAL),  # the deployment's, not the tests' 0.1 s
    }
    hosts = [start_host(f"127.0.0.{11 + n}", env=env, log_path=logs / f"host-{n}.log") for n in range(count)]
    haproxy, lb = start_haproxy([h.target for h in hosts], log_path=logs / "haproxy.log")
    results = []
    try:
        await asyncio.sleep(2)  # HAProxy marks the hosts up
        for run in range(runs):
            result = await one_run(lb, hosts, rooms, questions)
            results.append(result)
            total, idle = sum(result["cpu"]) * 1000, result["idle"]
            print(
                f"{count} host(s), run {run + 1}: fan-out p50 {pct(result['fanout'], 50):.0f} ms, "
                f"p95 {pct(result['fanout'], 95):.0f} ms; {result['answers']} answers acked of "
                f"{rooms * PLAYERS * questions}; idle CPU per host {', '.join(f'{i * 1000:.0f}' for i in idle)} ms/s; "
                f"game CPU per host over idle {', '.join(f'{c:.2f} s' for c in result['cpu'])}; "
                f"{total / max(result['answers'], 1):.1f} ms per answer, "
                f"{total / (rooms * questions):.0f} ms per room's question (fan-out to {PLAYERS} and their answers)",
                flush=True,
            )
    finally:
        haproxy.kill()
        for host in hosts:
            host.stop()
        for shard in shards:
            shard.kill()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hosts", default="1,2,3")
    parser.add_argument("--rooms", type=int, default=5)
    parser.add_argument("--questions", type=int, default=3)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    call_command("migrate", verbosity=0)
    logs = Path(tempfile.mkdtemp(prefix="hosts-scale-"))
    for count in (int(c) for c in args.hosts.split(",")):
        results = asyncio.run(configuration(count, args.rooms, args.questions, args.runs, logs))
        p95 = statistics.median(pct(r["fanout"], 95) for r in results)
        per_answer = statistics.median(sum(r["cpu"]) * 1000 / max(r["answers"], 1) for r in results)
        per_room = statistics.median(sum(r["cpu"]) * 1000 / (args.rooms * args.questions) for r in results)
        print(f"{count} host(s), median of {len(results)}: fan-out p95 {p95:.0f} ms; {per_answer:.1f} ms CPU per "
              f"answer, {per_room:.0f} ms per room's question (logs in {logs})", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
