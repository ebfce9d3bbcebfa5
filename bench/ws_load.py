"""Load: N rooms x 20 players on the production setup (uvicorn processes + PostgreSQL + Redis layer).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/quizgate_bench REDIS_URL=redis://127.0.0.1:6379/5 \\
        .venv/bin/python bench/ws_load.py --rooms 10,25,50 [--layer pubsub|core] [--workers 2] [--no-baseline]

Big rooms: one room of 200, 500, ... players (`--players-per-room`; the servers get ROOM_MAX_PLAYERS to
match), the bare relay under the same load after each:

    ... bench/ws_load.py --rooms 1 --players-per-room 200,500,1000,2000

For each N it prints: connect rate, question fan-out latency p50/p95/p99 (server send time to client
receive), answer-to-acknowledgement latency, messages per second, server RSS per connection, dropped
sends (a player who never saw a question), and the same fan-out against a bare Channels relay
(bench/baseline_app.py) as a ratio. Goal: p95 <= 150 ms, p99 <= 300 ms, ratio <= 2x.
"""

import argparse
import asyncio
import json
import multiprocessing
import os
import random
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("DJANGO_DEBUG", "1")
os.environ["LOG_LEVEL"] = "WARNING"

import django  # noqa: E402

django.setup()

import aiohttp  # noqa: E402
from django.core.management import call_command  # noqa: E402

from config import serve  # noqa: E402
from lobby.services import room_create  # noqa: E402
from quiz.models import CheckStatus, Provenance  # noqa: E402
from quiz.services import question_create, round_create  # noqa: E402
from quiz.validation import QuestionData, clean_question  # noqa: E402
from tests.support.servers import free_port, server_env  # noqa: E402

PLAYERS_PER_ROOM = 20
BASELINES = {"relay": "bare Channels relay", "peer": "bare in-memory peer, one process"}
# `--baseline-frame question`: the baseline's question is a frame of the shape and size of a Quizgate phone's (the
# question, its options, the top places, the player's own part), as a real peer's question carries its question and
# answers; by default it is a few bytes, so the load generator's own work per frame is less than for Quizgate's.
QUESTION_LIKE = {
    "type": "state", "seq": 41, "code": "B0", "title": "Bench round", "check_status": "unchecked",
    "question_count": 6, "question_index": 2, "timer_seconds": 20, "locked": False, "player_count": 2000,
    "top": [{"id": 10 + n, "nickname": f"p{n:04d}", "score": 900 - n, "rank": n + 1} for n in range(3)],
    "voided": [], "no_speed_bonus": False, "accuracy_only": False, "reading_seconds": 0,
    "question": {"index": 2, "kind": "single", "text": "Question 3?", "options": ["A", "B", "C", "D"]},
    "numbering": {"number": 3, "of": 6}, "answered_count": 0, "reading_ms": 0, "remaining_ms": 19996,
    "you": {"id": 1234, "nickname": "p01234", "score": 0, "rank": 1, "answered": False, "option": None,
            "time_percent": 100, "asks_more_time": False, "remaining_ms": 19996},
}  # fmt: skip


# How long a host shows the reveal, then the leaderboard, before moving on (quizgate_host).
REVEAL_SECONDS = LEADERBOARD_SECONDS = 2.0

SESSION: aiohttp.ClientSession | None = None
TEXT = aiohttp.WSMsgType.TEXT


def drive(coroutine):
    """Run the load generator's loop on uvloop, as uvicorn runs the server's (it comes with uvicorn[standard]): the
    generator shares the two cores with the server, and the same sockets on asyncio's own loop cost it more CPU."""

    async def with_session():
        # One client session for all the sockets, without its pool's limit of 100 connections at a time.
        global SESSION
        timeout = aiohttp.ClientTimeout(total=None, sock_connect=30, sock_read=30)  # the handshake's, as before
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0), timeout=timeout) as SESSION:
            return await coroutine

    try:
        import uvloop
    except ImportError:
        return asyncio.run(with_session())
    return uvloop.run(with_session())


async def connect(url: str, origin: str | None = None) -> aiohttp.ClientWebSocketResponse:
    """A player's or host's socket, on aiohttp's client rather than `websockets`': its frame reader is compiled. The
    generator shares the two cores with the server it measures, and its own backlog is part of the latencies it
    reads; with `websockets` it spent 0.56-0.66 ms of CPU per player and question in a room of 10,000, aiohttp 0.37-0.40
    (docs/benchmarks.md, "Ten thousand in one room"). No compression, as the server is run; no pings of its own
    (the server's are answered)."""
    return await SESSION.ws_connect(url, origin=origin, compress=0, autoping=True)


async def recv(ws: aiohttp.ClientWebSocketResponse, timeout: float | None = None) -> str:
    """The next text frame; a closed socket raises, as `websockets`' recv() did (TimeoutError after `timeout`)."""
    message = await ws.receive(timeout)
    if message.type is not TEXT:
        raise ConnectionError(f"socket closed: {message.type.name} {message.data}")
    return message.data


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q / 100 * (len(values) - 1))))]


def rss_kb(pid: int) -> int:
    total = 0
    pids = [pid] + [
        int(p) for p in subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout.split()
    ]
    for p in pids:
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except FileNotFoundError:
            pass
    return total


TICK_MS = 1000 / os.sysconf("SC_CLK_TCK")


def cpu_ms(pid: int) -> float:
    """CPU time (user + system) of the server and its workers so far, from /proc: what the work cost the
    machine, whatever the latencies did."""
    total = 0
    pids = [pid] + [
        int(p) for p in subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout.split()
    ]
    for p in pids:
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
        except FileNotFoundError:
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15 of stat)
    return total * TICK_MS


async def idle_cpu(pid: int, seconds: float = 2.0) -> tuple[float, float, float]:
    """The server's CPU once the joins' work is done, after `seconds` more of nothing happening, and its rate
    then (the game clock, the layer's keep-alives): taken out of the play's CPU, so that a figure per player and
    question is the work they caused."""
    # First let the joins' last coalesced lobby pictures go out (the phones' at most a second later): they are the
    # joins' work, not the idle server's.
    await asyncio.sleep(1.5)
    before = cpu_ms(pid)
    await asyncio.sleep(seconds)
    after = cpu_ms(pid)
    return before, after, (after - before) / seconds


METRICS_TOKEN = "ws-load-bench"


def server_histograms(port: int) -> dict[str, list[tuple[float, float]]]:
    """The server's own latency histograms (core/metrics.py, every worker's together): name -> [(le, count)]."""
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/metrics", headers={"Authorization": f"Bearer {METRICS_TOKEN}"}
    )
    found: dict[str, list[tuple[float, float]]] = {}
    try:
        text = urllib.request.urlopen(request, timeout=10).read().decode()
    except OSError:
        return found
    for line in text.splitlines():
        if "_bucket{" in line and not line.startswith("#"):
            name, rest = line.split("_bucket{", 1)
            le = rest.split('le="', 1)[1].split('"', 1)[0]
            if 'generation="' in rest:  # the collector's pauses, one histogram per generation
                generation = rest.split('generation="', 1)[1].split('"', 1)[0]
                name += f"[{generation}]"
            found.setdefault(name, []).append((float(le), float(line.rsplit(" ", 1)[1])))
    return found


def collector_pauses(histograms: dict[str, list[tuple[float, float]]]) -> str:
    """The server's garbage collections over the run, from its own histogram (core/collector.py): how many of each
    generation (2: the whole heap) and the bucket of the longest."""
    if not any(name.startswith("quizgate_gc_pause_seconds[") for name in histograms):
        return "the server's garbage collections: n/a (no quizgate_gc_pause_seconds)"

    def of(generation: int) -> str:
        buckets = sorted(histograms.get(f"quizgate_gc_pause_seconds[{generation}]", []))
        total = buckets[-1][1] if buckets else 0
        if not total:
            return "none"
        longest = next(le for le, count in buckets if count >= total)
        return f"{total:.0f}, the longest {f'<= {longest * 1000:.0f} ms' if longest != float('inf') else '> 2.5 s'}"

    return (
        f"the server's garbage collections over the run: of the whole heap {of(2)}; of the middle generation "
        f"{of(1)}; of the youngest {of(0)}"
    )


def bucket_pct(buckets: list[tuple[float, float]], q: float) -> str:
    """The upper bound of the histogram bucket holding the q-th percentile, in ms ("<= 25 ms")."""
    if not buckets or buckets[-1][1] == 0:
        return "n/a"
    total = buckets[-1][1]
    for le, count in sorted(buckets):
        if count >= total * q / 100:
            return f"<= {le * 1000:.0f} ms" if le != float("inf") else "> 10 s"
    return "n/a"


def server_command(app: str) -> list[str]:
    """Quizgate as `make serve` starts it (config/serve.py: the server's limits from settings); the baseline
    app under plain uvicorn with the same frame limit."""
    if app == serve.APP:
        return [sys.executable, "-m", "config.serve"]
    return [sys.executable, "-m", "uvicorn", app, "--ws-max-size", str(serve.server_options()["ws_max_size"])]


def start_server(app: str, workers: int, env: dict) -> tuple[subprocess.Popen, int]:
    port = free_port()
    popen = subprocess.Popen(
        [*server_command(app), "--host", "127.0.0.1", "--port", str(port), "--workers", str(workers),
         "--log-level", "warning", "--ws-max-queue", "64", "--ws-per-message-deflate", "false"],
        cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=open("/tmp/ws_load_server.log", "ab"),  # noqa: SIM115
    )  # fmt: skip
    # The supervisor binds the port before its workers have imported the app (many seconds on a loaded machine):
    # sockets opened then wait in the listen queue and time out their handshakes. A load balancer sends nobody
    # until the liveness check says 200 (deploy/haproxy.cfg); so does the bench, several times in a row so that
    # every worker has answered (the kernel hands each connection to one of them).
    answered, deadline = 0, time.monotonic() + 300
    while answered < (6 * workers if app == serve.APP else 1):
        if time.monotonic() > deadline or popen.poll() is not None:
            raise RuntimeError("server did not start")
        try:
            if app != serve.APP:  # the bare relay has no check: its port open is enough
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                time.sleep(1.0 if workers > 1 else 0.2)  # let every worker come up
                answered = 1
            elif urllib.request.urlopen(f"http://127.0.0.1:{port}/livez", timeout=5).status == 200:
                answered += 1
        except OSError:
            answered = 0
            time.sleep(0.2)
    return popen, port


def create_database() -> None:
    """The database DATABASE_URL names, created if it does not exist yet (an existing one is kept)."""
    from django.conf import settings

    db = settings.DATABASES["default"]
    if db["ENGINE"].endswith("postgresql"):
        command = [
            "createdb",
            "-h",
            db["HOST"] or "127.0.0.1",
            "-p",
            str(db["PORT"] or 5432),
            "-U",
            db["USER"] or "postgres",
        ]
        subprocess.run([*command, db["NAME"]], capture_output=True)


def start_peer(env: dict) -> tuple[subprocess.Popen, int]:
    """The bare in-memory peer (bench/peer_relay.py): one process, as the peers it stands for run."""
    port = free_port()
    popen = subprocess.Popen(
        [sys.executable, str(REPO / "bench" / "peer_relay.py"), "--host", "127.0.0.1", "--port", str(port)],
        cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=open("/tmp/ws_load_server.log", "ab"),  # noqa: SIM115
    )  # fmt: skip
    for _ in range(300):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return popen, port
        except OSError:
            time.sleep(0.1)
    raise RuntimeError("peer did not start")


def analyze() -> None:
    """Table statistics, as autovacuum keeps them on a production PostgreSQL. It is off on this machine; without
    statistics the planner scanned whole tables for the game's queries (see the answer count in lobby.services)."""
    from django.db import connection

    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")


# `--kinds mixed`: the round cycles through one question of each kind (quiz/kinds), as a teacher's mixed quiz.
MIXED = [
    {"options": ["one", "two", "three", "four"], "correct_index": 1},
    {"kind": "true_false", "answer": True},
    {"kind": "multi", "options": ["one", "two", "three", "four"], "correct_indexes": [0, 2]},
    {"kind": "typed", "answers": ["Canberra"]},
    {"kind": "order", "items": ["one", "two", "three", "four"]},
    {"kind": "number", "answer": 1969, "tolerance": 2, "min": 1900, "max": 2000},
    {"kind": "poll", "options": ["one", "two", "three"]},
]


def make_rooms(n: int, questions: int, kinds: str = "single") -> list:
    if kinds == "mixed":
        data = [clean_question({"text": f"Bench question {i}?", **MIXED[i % len(MIXED)]}) for i in range(questions)]
    else:
        data = [
            QuestionData(text=f"Bench question {i}?", options=("one", "two", "three", "four"), correct_index=i % 4)
            for i in range(questions)
        ]
    rooms = []
    for _ in range(n):
        created = [question_create(data=d, provenance=Provenance.HOST) for d in data]
        round_ = round_create(title="bench", questions=created, provenance=Provenance.HOST,
                              check_status=CheckStatus.UNCHECKED)  # fmt: skip
        rooms.append(room_create(round_id=round_.pk, timer_seconds=20))
    return rooms


class Stats:
    def __init__(self):
        self.fanout: list[float] = []
        self.reveal: list[float] = []  # the reveal's fan-out (Quizgate only: the relay has one kind of event)
        # (room, question) -> the last answer's send time, and each player's reveal arrival: last answer -> reveal
        self.last_answer: dict[tuple[str, int], float] = {}
        self.reveal_seen: list[tuple[str, int, float]] = []
        self.player_bytes: list[int] = []
        self.host_bytes: list[int] = []
        self.ack: list[float] = []
        self.messages = 0
        self.frames = 0  # every frame to a player or a host but the acknowledgements, for the CPU per frame
        self.dropped = 0
        self.connect_failures: list[str] = []


def answer_for(question: dict) -> dict:
    """A random answer of the shape the question's kind takes (right, partly right or wrong by chance)."""
    kind = question.get("kind", "single")
    if kind == "multi":
        return {"options": sorted(random.sample(range(len(question["options"])), random.randint(1, 3)))}
    if kind == "typed":
        return {"text": random.choice(["Canberra", "canbera", "Sydney"])}
    if kind == "order":
        return {"order": random.sample(range(len(question["items"])), len(question["items"]))}
    if kind == "number":
        return {"value": random.randint(question["min"], question["max"])}
    if kind == "true_false":
        return {"option": random.randrange(2)}
    return {"option": random.randrange(len(question.get("options") or [0, 1, 2, 3]))}


async def quizgate_player(
    port, code, nickname, stats: Stats, questions: int, joined: asyncio.Event, ready, silent: int = 0
):
    url, origin = f"ws://127.0.0.1:{port}/ws/room/{code}/", f"http://127.0.0.1:{port}"
    try:
        ws = await connect(url, origin=origin)
        await ws.send_str(json.dumps({"type": "join", "nickname": nickname}))
        # In place = joined and holding the room's snapshot (a join snapshot that came after the game started
        # would show the first question without a send time). A join never answered is a failure, not a hang.
        async with asyncio.timeout(120):
            while (reply := json.loads(await recv(ws)))["type"] != "state":
                if reply["type"] == "error":
                    raise RuntimeError(reply["code"])
    except Exception as error:  # noqa: BLE001 - a bench counts failures, it does not stop at them
        stats.connect_failures.append(f"{type(error).__name__}:{error}"[:60])
        ready()
        return
    ready()
    await joined.wait()
    seen: set[int] = set()
    revealed: set[int] = set()
    answered_at: dict[int, float] = {}
    try:
        async with asyncio.timeout((silent + questions) * 30 + 60):
            async for frame in ws:
                now = time.time()
                if frame.type is not TEXT:
                    break  # the socket failed: the questions it did not see count as dropped
                raw = frame.data
                stats.messages += 1
                stats.player_bytes.append(len(raw))
                message = json.loads(raw)
                stats.frames += message["type"] != "answered"  # an acknowledgement is its answer's cost
                if message["type"] == "answered":
                    stats.ack.append((now - answered_at[message["question"]]) * 1000)
                elif message["type"] == "state":
                    index = message["question_index"]
                    if index < silent:
                        continue  # a question played to measure the fan-out alone: nobody answers it
                    if message["phase"] == "question" and index not in seen:
                        seen.add(index)
                        if "sent_at" in message:
                            stats.fanout.append((now - message["sent_at"]) * 1000)
                        await asyncio.sleep(random.uniform(0.2, 1.5))
                        answered_at[index] = time.time()
                        key = (code, index)
                        stats.last_answer[key] = max(stats.last_answer.get(key, 0.0), answered_at[index])
                        answer = answer_for(message.get("question") or {})
                        await ws.send_str(json.dumps({"type": "answer", "question": index, **answer}))
                    elif message["phase"] == "reveal" and index in answered_at and "sent_at" in message:
                        if index not in revealed:
                            revealed.add(index)
                            stats.reveal_seen.append((code, index, now))
                            stats.reveal.append((now - message["sent_at"]) * 1000)
                    elif message["phase"] == "finished":
                        break
    except TimeoutError:
        pass
    stats.dropped += questions - len(seen)
    await ws.close()


async def quizgate_host(
    port,
    code,
    token,
    questions,
    joined: asyncio.Event,
    stats: Stats,
    silent: int = 0,
    silent_done=None,
    go: asyncio.Event | None = None,
):
    ws = await connect(f"ws://127.0.0.1:{port}/ws/room/{code}/", origin=f"http://127.0.0.1:{port}")
    await ws.send_str(json.dumps({"type": "host", "token": token}))
    await joined.wait()
    # The host's frames while the room filled (the lobby's coalesced updates) count as its frames too.
    while True:
        try:
            raw = await recv(ws, 0.01)
        except TimeoutError:
            break
        stats.host_bytes.append(len(raw))
        stats.frames += 1
    await asyncio.sleep(random.uniform(0, 2))  # rooms are not in lockstep

    async def wait_phase(phase, index):
        while True:
            raw = await recv(ws)
            stats.host_bytes.append(len(raw))
            stats.frames += 1
            m = json.loads(raw)
            if m.get("type") == "state" and m["phase"] == phase and m["question_index"] == index:
                return

    await ws.send_str(json.dumps({"type": "start"}))
    # The fan-out alone: `silent` questions nobody answers, each closed by the host, revealed and ranked.
    for index in range(silent):
        await wait_phase("question", index)
        await ws.send_str(json.dumps({"type": "close", "phase": "question", "index": index}))
        await wait_phase("reveal", index)
        await ws.send_str(json.dumps({"type": "next", "phase": "reveal", "index": index}))
        await wait_phase("leaderboard", index)
        if index + 1 < silent:
            await ws.send_str(json.dumps({"type": "next", "phase": "leaderboard", "index": index}))
    if silent:
        silent_done()
        await go.wait()
        await asyncio.sleep(random.uniform(0, 2))  # not in lockstep after the wait either
        await ws.send_str(json.dumps({"type": "next", "phase": "leaderboard", "index": silent - 1}))
    for index in range(silent, silent + questions):
        await wait_phase("reveal", index)
        await asyncio.sleep(REVEAL_SECONDS)
        await ws.send_str(json.dumps({"type": "next", "phase": "reveal", "index": index}))
        await wait_phase("leaderboard", index)
        # The board is shown a while, as a host shows it. Sent on the host's own leaderboard frame, the next question
        # reached the load generator while it was still reading the room's leaderboard frames, and that backlog of
        # the generator's (70-170 ms at 2,000 phones; the server had sent them all within 50 ms) was read as the
        # question's fan-out. The peer's questions have nothing before them.
        await asyncio.sleep(LEADERBOARD_SECONDS)
        await ws.send_str(json.dumps({"type": "next", "phase": "leaderboard", "index": index}))
    await ws.close()


class Barrier:
    """Every room's host has played its silent questions: the CPU of the fan-out alone is read, then `go`."""

    def __init__(self, rooms: int):
        self.waiting, self.all_done, self.go = rooms, asyncio.Event(), asyncio.Event()

    def done(self) -> None:
        self.waiting -= 1
        if self.waiting == 0:
            self.all_done.set()


def split_cpu(*, silent_cpu: float, silent_frames: int, played_cpu: float, played_frames: int, answers: int) -> dict:
    """The CPU per frame, from the silent questions (every frame's fan-out, the host's action and the picture it
    took included), and the CPU per answer: the answered questions' CPU less their frames at that cost."""
    per_frame = silent_cpu / silent_frames if silent_frames else float("nan")
    return {
        "cpu_per_frame": per_frame,
        "cpu_per_answer": (played_cpu - played_frames * per_frame) / max(answers, 1),
    }


class Shards:
    """The players of the generator's other processes (`--generator-processes`): each process plays every Nth player
    of every room on a loop of its own, as this one does its share. A 10,000-socket generator on one loop needed a
    core-second to read one question's 10,000 frames, and its own backlog was most of the fan-out it measured."""

    def __init__(self, processes: int, target=None, *args):
        """`target(pipe, share, processes, *args)` in each other process: `shard_main` (Quizgate's players) unless
        another is given (`baseline_shard_main`)."""
        context = multiprocessing.get_context("spawn")
        self.pipes = []
        for share in range(1, processes):
            mine, theirs = context.Pipe()
            context.Process(target=target or shard_main, args=(theirs, share, processes, *args), daemon=True).start()
            self.pipes.append(mine)

    async def each(self) -> list:
        """Each process's next word."""
        return await asyncio.gather(*(asyncio.to_thread(pipe.recv) for pipe in self.pipes))

    def tell(self, message: str) -> None:
        for pipe in self.pipes:
            pipe.send(message)

    async def ask(self, message: str) -> list:
        """Send each process `message` and wait for each one's reply."""
        for pipe in self.pipes:
            pipe.send(message)
        return [await asyncio.to_thread(pipe.recv) for pipe in self.pipes]

    async def merge_into(self, stats: Stats) -> float:
        """Their figures into `stats`; the CPU seconds they spent playing the answered questions."""
        cpu = 0.0
        for theirs, their_cpu in await self.ask("done"):
            cpu += their_cpu
            for name in ("fanout", "reveal", "reveal_seen", "player_bytes", "ack", "connect_failures"):
                getattr(stats, name).extend(theirs[name])
            for key, at in theirs["last_answer"].items():
                stats.last_answer[key] = max(stats.last_answer.get(key, 0.0), at)
            stats.messages += theirs["messages"]
            stats.frames += theirs["frames"]
            stats.dropped += theirs["dropped"]
        return cpu


def shard_main(pipe, share, shares, port, codes, players_per_room, questions, silent) -> None:
    """One of the generator's other processes: its players connect and join, say so, wait for the word, play."""

    async def play():
        pipe.send("up")  # imported and on its loop: the parent's clock of the joins starts once every process is
        assert await asyncio.to_thread(pipe.recv) == "connect"
        stats = Stats()
        joined = asyncio.Event()
        mine = [(code, i) for code in codes for i in range(players_per_room) if i % shares == share]
        left = len(mine)
        connected = asyncio.Event()

        def ready():
            nonlocal left
            left -= 1
            if left == 0:
                connected.set()

        tasks = [
            asyncio.create_task(quizgate_player(port, code, f"p{i}", stats, questions, joined, ready, silent))
            for code, i in mine
        ]
        await connected.wait()
        pipe.send("connected")
        assert await asyncio.to_thread(pipe.recv) == "go"
        joined.set()
        while (word := await asyncio.to_thread(pipe.recv)) == "frames":  # the silent questions are over
            pipe.send(stats.frames)
            stats.messages = 0
        assert word == "answering"
        cpu = time.process_time()
        pipe.send("ok")
        await asyncio.gather(*tasks, return_exceptions=True)
        cpu = time.process_time() - cpu
        assert await asyncio.to_thread(pipe.recv) == "done"
        pipe.send((vars(stats), cpu * 1000))  # plain data: this module is __mp_main__ here

    drive(play())


async def run_quizgate(port, server_pid, rooms, questions, silent: int = 0, processes: int = 1) -> dict:
    stats = Stats()
    joined = asyncio.Event()
    codes = [r.room.code for r in rooms]
    shards = Shards(processes, None, port, codes, PLAYERS_PER_ROOM, questions, silent) if processes > 1 else None
    total = sum(1 for _ in rooms for i in range(PLAYERS_PER_ROOM) if i % processes == 0)
    done = 0
    connected = asyncio.Event()

    def ready():
        nonlocal done
        done += 1
        if done == total:
            connected.set()

    if shards:
        await asyncio.gather(*(asyncio.to_thread(pipe.recv) for pipe in shards.pipes))  # each is up
    rss_before = rss_kb(server_pid)
    cpu_start = cpu_ms(server_pid)
    started = time.monotonic()
    if shards:
        for pipe in shards.pipes:
            pipe.send("connect")
    tasks = [
        asyncio.create_task(quizgate_player(port, r.room.code, f"p{i}", stats, questions, joined, ready, silent))
        for r in rooms for i in range(PLAYERS_PER_ROOM) if i % processes == 0
    ]  # fmt: skip
    await connected.wait()
    if shards:
        await asyncio.gather(*(asyncio.to_thread(pipe.recv) for pipe in shards.pipes))
    total = len(rooms) * PLAYERS_PER_ROOM
    connect_seconds = time.monotonic() - started
    rss_after = rss_kb(server_pid)
    cpu_joined, cpu_idle_end, idle_per_s = await idle_cpu(server_pid)
    barrier = Barrier(len(rooms))
    hosts = [
        asyncio.create_task(
            quizgate_host(port, r.room.code, r.host_token, questions, joined, stats, silent, barrier.done, barrier.go)
        )
        for r in rooms
    ]
    await asyncio.sleep(0.5)
    play_started = time.monotonic()
    joined.set()
    if shards:
        for pipe in shards.pipes:
            pipe.send("go")
    silent_cpu, silent_frames = 0.0, 0
    if silent:
        await barrier.all_done.wait()
        await asyncio.sleep(0.5)  # the last leaderboards' frames
        silent_cpu = cpu_ms(server_pid) - idle_per_s * (time.monotonic() - play_started + 0.5) - cpu_idle_end
        silent_frames = stats.frames + (sum(await shards.ask("frames")) if shards else 0)
        stats.messages = 0
    if shards:
        await shards.ask("answering")
    answering = time.monotonic()
    cpu_answering = cpu_ms(server_pid)
    driver_answering = time.process_time()
    barrier.go.set()
    await asyncio.gather(*tasks, *hosts, return_exceptions=True)
    shards_cpu = await shards.merge_into(stats) if shards else 0.0
    play_seconds = time.monotonic() - answering
    # The answered questions' CPU, the server's (all of it, idle included) and the load generator's own: on two
    # shared cores the generator's part is CPU the server could not have.
    server_play_cpu = cpu_ms(server_pid) - cpu_answering
    driver_play_cpu = (time.process_time() - driver_answering) * 1000 + shards_cpu
    cpu_played = cpu_ms(server_pid) - idle_per_s * play_seconds - cpu_answering
    connected_n = total - len(stats.connect_failures)
    return {
        "players": total,
        "connected": connected_n,
        "connect_rate": connected_n / connect_seconds,
        "connect_seconds": connect_seconds,
        "fanout": stats.fanout,
        "reveal": stats.reveal,
        "last_answer_to_reveal": [
            (at - stats.last_answer[(code, index)]) * 1000 for code, index, at in stats.reveal_seen
        ],
        "player_bytes": stats.player_bytes,
        "host_bytes": stats.host_bytes,
        "ack": stats.ack,
        "msgs_per_s": stats.messages / play_seconds,
        "rss_per_conn_kb": (rss_after - rss_before) / max(connected_n, 1),
        "dropped": stats.dropped,
        "failures": sorted(set(stats.connect_failures)),
        # Per join (connect + join + its lobby frames), and per player and question played (its question,
        # reveal and leaderboard frames and its answer; the hosts' frames and actions included).
        "cpu_per_join": (cpu_joined - cpu_start) / max(connected_n, 1),
        "cpu_per_player_question": cpu_played / max(len(stats.ack), 1),
        "idle_cpu_per_s": idle_per_s,
        "play_cpu": (play_seconds, server_play_cpu, driver_play_cpu),
        **split_cpu(silent_cpu=silent_cpu, silent_frames=silent_frames, played_cpu=cpu_played,
                    played_frames=stats.frames - silent_frames, answers=len(stats.ack)),
    }  # fmt: skip


class BaselinePlayers:
    """The baselines' players of one generator process: each answers every question (not the silent ones) after
    the same think time as in Quizgate, and the frames' fan-out, the acknowledgements and the frame sizes are kept."""

    def __init__(self, port: int, questions: int, silent: int) -> None:
        self.port, self.questions, self.silent = port, questions, silent
        self.fanout: list[float] = []
        self.ack: list[float] = []
        self.sizes: list[int] = []
        self.frames = 0

    def start(self, codes: list[str]) -> tuple[list[asyncio.Task], list[asyncio.Event]]:
        """A player in each room of `codes` (a code once per player): their tasks, and an event each once connected."""
        readies = [asyncio.Event() for _ in codes]
        return [
            asyncio.create_task(self.player(code, ready)) for code, ready in zip(codes, readies, strict=True)
        ], readies

    async def player(self, code: str, ready: asyncio.Event) -> None:
        ws = await connect(f"ws://127.0.0.1:{self.port}/ws/room/{code}/")
        ready.set()
        seen = 0
        answered_at: list[float] = []
        try:
            async with asyncio.timeout((self.silent + self.questions) * 4 + 60):
                async for frame in ws:
                    now = time.time()
                    if frame.type is not TEXT:
                        break
                    raw = frame.data
                    self.sizes.append(len(raw))
                    message = json.loads(raw)
                    if message.get("type") == "ack":
                        self.ack.append((now - answered_at.pop(0)) * 1000)
                        if seen == self.questions and not answered_at:
                            break
                        continue
                    self.frames += 1
                    if message.get("silent"):
                        continue  # the fan-out alone: nobody answers it
                    self.fanout.append((now - message["sent_at"]) * 1000)
                    seen += 1
                    await asyncio.sleep(random.uniform(0.2, 1.5))
                    answered_at.append(time.time())
                    await ws.send_str(json.dumps({"type": "answer", "option": random.randrange(4)}))
        except TimeoutError:
            pass
        await ws.close()


def baseline_shard_main(pipe, share, shares, port, codes, players_per_room, questions, silent) -> None:
    """One of the generator's other processes for a baseline: every Nth player of each room, as shard_main plays
    Quizgate's."""

    async def play():
        pipe.send("up")
        assert await asyncio.to_thread(pipe.recv) == "connect"
        players = BaselinePlayers(port, questions, silent)
        tasks, readies = players.start([code for code in codes for i in range(players_per_room) if i % shares == share])
        await asyncio.gather(*(ready.wait() for ready in readies))
        pipe.send("connected")
        while (word := await asyncio.to_thread(pipe.recv)) == "frames":  # the silent questions are over
            pipe.send(players.frames)
        assert word == "done"
        await asyncio.gather(*tasks, return_exceptions=True)
        pipe.send((players.fanout, players.ack, players.sizes))

    drive(play())


async def run_baseline(
    port, server_pid, n_rooms, questions, silent: int = 0, frame: str = "small", processes: int = 1
) -> tuple[list[float], list[float], list[int], dict]:
    """The same load on the bare relay: a broadcast per room every 2 s, and every player answering each one
    after the same think time as in Quizgate (the relay acknowledges each answer). `frame`: "small" (a few bytes)
    or "question" (QUESTION_LIKE). `processes`: the load generator's, as for Quizgate's players."""
    question = {**(QUESTION_LIKE if frame == "question" else {}), "phase": "question"}
    codes = [f"B{r}" for r in range(n_rooms)]
    shards = (
        Shards(processes, baseline_shard_main, port, codes, PLAYERS_PER_ROOM, questions, silent)
        if processes > 1
        else None
    )
    if shards:
        await shards.each()  # each is up
        shards.tell("connect")
    players = BaselinePlayers(port, questions, silent)
    tasks, readies = players.start([code for code in codes for i in range(PLAYERS_PER_ROOM) if i % processes == 0])

    async def host(code, start):
        ws = await connect(f"ws://127.0.0.1:{port}/ws/room/{code}/")
        await start.wait()
        await asyncio.sleep(random.uniform(0, 2))
        for _ in range(silent):
            await ws.send_str(json.dumps({"type": "broadcast", "payload": {**question, "silent": True}}))
            await asyncio.sleep(2)
        if silent:
            barrier.done()
            await barrier.go.wait()
            await asyncio.sleep(random.uniform(0, 2))
        for _ in range(questions):
            await ws.send_str(json.dumps({"type": "broadcast", "payload": question}))
            await asyncio.sleep(2)
        await ws.close()

    start = asyncio.Event()
    await asyncio.gather(*(r.wait() for r in readies))
    if shards:
        await shards.each()  # each one's players are connected
    _joined, cpu_idle_end, idle_per_s = await idle_cpu(server_pid)
    barrier = Barrier(len(codes))
    hosts = [asyncio.create_task(host(code, start)) for code in codes]
    await asyncio.sleep(0.5)
    start.set()
    play_started = time.monotonic()
    silent_cpu, silent_frames = 0.0, 0
    if silent:
        await barrier.all_done.wait()
        await asyncio.sleep(0.5)
        silent_cpu = cpu_ms(server_pid) - idle_per_s * (time.monotonic() - play_started + 0.5) - cpu_idle_end
        silent_frames = players.frames + (sum(await shards.ask("frames")) if shards else 0)
    answering = time.monotonic()
    cpu_answering = cpu_ms(server_pid)
    barrier.go.set()
    await asyncio.gather(*tasks, *hosts, return_exceptions=True)
    fanout, ack, sizes, frames = players.fanout, players.ack, players.sizes, players.frames
    if shards:
        for their_fanout, their_ack, their_sizes in await shards.ask("done"):
            fanout, ack, sizes = fanout + their_fanout, ack + their_ack, sizes + their_sizes
        frames = silent_frames + len(fanout)  # the answered questions' frames, one a player who saw it
    played = cpu_ms(server_pid) - idle_per_s * (time.monotonic() - answering) - cpu_answering
    cpu = {
        "cpu_per_player_question": played / max(len(ack), 1),
        "idle_cpu_per_s": idle_per_s,
        **split_cpu(silent_cpu=silent_cpu, silent_frames=silent_frames, played_cpu=played,
                    played_frames=frames - silent_frames, answers=len(ack)),
    }  # fmt: skip
    return fanout, ack, sizes, cpu


def big_room_goals(result: dict, load_start: tuple, load_end: tuple) -> str:
    """One room's figures against the big room's goals, each with its ratio to the bound (<= 1: met)."""
    f, a, r = result["fanout"], result["ack"], result["last_answer_to_reveal"]
    lines = [
        ("joins a second", result["connect_rate"], 400, "min"),
        ("question fan-out p95 ms", pct(f, 95), 1000, "max"),
        ("answer ack p95 ms", pct(a, 95), 1000, "max"),
        ("last answer -> reveal p95 ms", pct(r, 95), 2000, "max"),
        ("RSS a socket KiB", result["rss_per_conn_kb"], 40, "max"),
    ]
    out = [
        f"   goals, one room of {result['players']} (load average {load_start[0]:.2f} at start, "
        f"{load_end[0]:.2f} at end): connected {result['connected']}/{result['players']}; "
        f"dropped {result['dropped']} (goal 0)"
    ]
    for name, value, bound, kind in lines:
        ratio = bound / value if kind == "min" else value / bound
        goal = f">= {bound}" if kind == "min" else f"<= {bound}"
        out.append(f"     {name} {value:.0f} (goal {goal} -> ratio {ratio:.2f}{'' if ratio <= 1 else ' MISSED'})")
    return "\n".join(out)


def mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else float("nan")


def main() -> None:
    global PLAYERS_PER_ROOM
    parser = argparse.ArgumentParser()
    parser.add_argument("--rooms", default="10,25,50")
    parser.add_argument("--questions", type=int, default=3)
    parser.add_argument("--players-per-room", default=str(PLAYERS_PER_ROOM), help="one size or several: 200,500")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--layer", default=os.environ.get("CHANNEL_LAYER", "pubsub"))
    parser.add_argument("--no-baseline", action="store_true")
    parser.add_argument(
        "--baseline", default="relay", choices=["relay", "peer"],
        help="relay: a bare Channels consumer (bench/baseline_app.py) under the same server and layer; peer: a bare "
        "in-memory socket server in one process (bench/peer_relay.py), as the in-memory peers are built",
    )  # fmt: skip
    parser.add_argument(
        "--baseline-frame", default="small", choices=["small", "question"],
        help="the baseline's question frame: small (a few bytes) or question (the shape and size of a Quizgate "
        "phone's question frame, as a real peer's question carries its question and answers)",
    )  # fmt: skip
    parser.add_argument(
        "--embedded", action="store_true",
        help="Quizgate as `make run` serves it: one process, SQLite (DATABASE_URL=sqlite:///...), the in-memory "
        "channel layer (no REDIS_URL)",
    )  # fmt: skip
    parser.add_argument(
        "--silent", type=int, default=1,
        help="questions played first with nobody answering, to read the CPU of the fan-out alone (0: none)",
    )  # fmt: skip
    parser.add_argument(
        "--kinds", default="single", help="single, mixed (every question kind in turn) or both: single,mixed"
    )
    parser.add_argument(
        "--generator-processes", type=int, default=1,
        help="the load generator's processes, for Quizgate's players and the baseline's alike: with one, a room of "
        "10,000 is read by one loop, whose backlog is part of the fan-out it measures",
    )  # fmt: skip
    parser.add_argument(
        "--analyze", action="store_true", help="ANALYZE after migrating (a fresh database has no statistics)"
    )
    args = parser.parse_args()
    if args.embedded:
        if os.environ.get("REDIS_URL") or not os.environ.get("DATABASE_URL", "").startswith("sqlite:///"):
            sys.exit("--embedded: set DATABASE_URL=sqlite:///<a file of the bench's own> and no REDIS_URL")
        args.workers, args.layer = 1, "memory"  # the in-memory layer lives in one process
    elif not os.environ.get("REDIS_URL") or not os.environ.get("DATABASE_URL"):
        sys.exit("set DATABASE_URL (PostgreSQL) and REDIS_URL: this measures the production setup")
    create_database()
    call_command("migrate", verbosity=0)
    if args.analyze:
        analyze()
    # Every simulated player comes from 127.0.0.1: lift the per-IP join and socket limits meant for real clients.
    sizes = [int(x) for x in args.players_per_room.split(",")]
    print(
        f"ws_load: layer={args.layer} workers={args.workers} questions={args.questions} cores={os.cpu_count()} "
        f"database={django.conf.settings.DATABASES['default']['ENGINE'].rsplit('.', 1)[1]} "
        f"baseline={'none' if args.no_baseline else args.baseline} "
        f"generator_processes={args.generator_processes}; load average {os.getloadavg()[0]:.2f}"
    )
    p95_by_kinds: dict[tuple[int, int], dict[str, tuple[float, float]]] = {}
    runs = [(int(x), size, kinds) for size in sizes for x in args.rooms.split(",") for kinds in args.kinds.split(",")]
    for n, size, kinds in runs:
        PLAYERS_PER_ROOM = size
        env = server_env(
            CHANNEL_LAYER=args.layer,
            GAME_CLOCK_INTERVAL="0.25",
            RATELIMIT_ROOMS_PER_10_MINUTES="1000000",
            WS_MAX_PER_IP="1000000",
            ROOM_MAX_PLAYERS=str(max(size, 20)),
            METRICS_TOKEN=METRICS_TOKEN,
        )
        if not args.embedded:
            subprocess.run(["redis-cli", "-u", os.environ["REDIS_URL"], "flushdb"], capture_output=True)
        rooms = make_rooms(n, args.silent + args.questions, kinds)
        django.db.connections.close_all()
        load_start = os.getloadavg()
        server, port = start_server(serve.APP, args.workers, env)
        try:
            result = drive(run_quizgate(port, server.pid, rooms, args.questions, args.silent, args.generator_processes))
            histograms = server_histograms(port)
        finally:
            server.terminate()
            server.wait(10)
        load_end = os.getloadavg()
        base_p95 = base_ack_p95 = float("nan")
        base_bytes = []
        nan = float("nan")
        base_cpu = {"cpu_per_player_question": nan, "idle_cpu_per_s": nan, "cpu_per_frame": nan, "cpu_per_answer": nan}
        if not args.no_baseline:
            base_env = {**env, "PYTHONPATH": str(REPO / "bench")}
            if args.baseline == "peer":
                server, port = start_peer(base_env)
            else:
                server, port = start_server("baseline_app:application", args.workers, base_env)
            try:
                base, base_ack, base_bytes, base_cpu = drive(
                    run_baseline(
                        port, server.pid, n, args.questions, args.silent, args.baseline_frame, args.generator_processes
                    )
                )
            finally:
                server.terminate()
                server.wait(10)
            base_p95, base_ack_p95 = pct(base, 95), pct(base_ack, 95)
            # Too little CPU to read from /proc's ticks (a small run on the peer) is no figure to divide by.
            base_cpu = {key: value if value > 0 else nan for key, value in base_cpu.items()}
        f, a, r = result["fanout"], result["ack"], result["reveal"]
        p95 = pct(f, 95)
        pb, hb = result["player_bytes"], result["host_bytes"]
        p95_by_kinds.setdefault((n, size), {})[kinds] = (p95, pct(a, 95))
        frame_ratio = result["cpu_per_frame"] / base_cpu["cpu_per_frame"]
        print(
            f"N={n:3d} rooms x {size} [{kinds} questions] ({result['players']} players): "
            f"connected {result['connected']}/"
            f"{result['players']} at {result['connect_rate']:.0f}/s in {result['connect_seconds']:.1f} s "
            f"{' '.join(result['failures'])}\n"
            f"   reveal fan-out ms p50 {pct(r, 50):.0f} p95 {pct(r, 95):.0f} p99 {pct(r, 99):.0f} (n={len(r)}) -> "
            f"{pct(r, 95) / base_p95:.2f}x the relay's p95\n"
            f"   bytes/frame player mean {mean(pb):.0f} max {max(pb, default=0)}; host mean {mean(hb):.0f} "
            f"max {max(hb, default=0)} ({len(hb)} frames); relay mean {mean(base_bytes):.0f}\n"
            f"   host's largest frame {max(hb, default=0) / 1024:.1f} KiB (goal <= 64 KiB at any room size -> "
            f"ratio {max(hb, default=0) / 65536:.2f}); {sum(hb) / 1024:.0f} KiB to the host in all\n"
            f"   fan-out ms p50 {pct(f, 50):.0f} p95 {p95:.0f} p99 {pct(f, 99):.0f} (n={len(f)}); "
            f"bound p95 150 -> ratio {p95 / 150:.2f}; p99 bound 300 -> ratio {pct(f, 99) / 300:.2f}\n"
            f"   answer ack ms p50 {pct(a, 50):.0f} p95 {pct(a, 95):.0f} p99 {pct(a, 99):.0f}; "
            f"{result['msgs_per_s']:.0f} msgs/s; RSS/conn {result['rss_per_conn_kb']:.0f} KiB; "
            f"dropped {result['dropped']}\n"
            f"   baseline ({BASELINES[args.baseline]}, same load) fan-out p95 {base_p95:.0f} ms -> "
            f"Quizgate/baseline {p95 / base_p95:.2f}x; answer ack p95 {base_ack_p95:.0f} ms -> "
            f"{pct(a, 95) / base_ack_p95:.2f}x\n"
            f"   server CPU ms per player and question (its frames and its answer) "
            f"{result['cpu_per_player_question']:.2f}, relay {base_cpu['cpu_per_player_question']:.2f} -> "
            f"{result['cpu_per_player_question'] / base_cpu['cpu_per_player_question']:.2f}x; "
            f"per join {result['cpu_per_join']:.2f}; idle CPU ms/s taken out {result['idle_cpu_per_s']:.0f}, "
            f"relay {base_cpu['idle_cpu_per_s']:.0f}; load average {os.getloadavg()[0]:.1f}\n"
            f"   server CPU ms per fan-out per socket (from {args.silent} question(s) nobody answered) "
            f"{result['cpu_per_frame']:.3f}, relay {base_cpu['cpu_per_frame']:.3f} -> "
            f"{frame_ratio:.2f}x (bound 2x -> ratio {frame_ratio / 2:.2f}); "
            f"per answer {result['cpu_per_answer']:.2f}, relay {base_cpu['cpu_per_answer']:.2f} -> "
            f"{result['cpu_per_answer'] / base_cpu['cpu_per_answer']:.2f}x; "
            f"per join {result['cpu_per_join']:.2f}\n"
            f"   inside the server (its own histograms, every question): answer arrived -> acknowledgement sent "
            f"p50 {bucket_pct(histograms.get('quizgate_answer_ack_seconds', []), 50)}, "
            f"p95 {bucket_pct(histograms.get('quizgate_answer_ack_seconds', []), 95)}; "
            f"state sent -> frame left p95 {bucket_pct(histograms.get('quizgate_fanout_seconds', []), 95)}"
        )
        print(f"   {collector_pauses(histograms)}")
        seconds, server_cpu, driver_cpu = result["play_cpu"]
        print(
            f"   the answered questions: {seconds:.1f} s, server CPU {server_cpu / 1000:.1f} s, load generator CPU "
            f"{driver_cpu / 1000:.1f} s ({(server_cpu + driver_cpu) / 10 / seconds / os.cpu_count():.0f}% of "
            f"{os.cpu_count()} cores)"
        )
        if n == 1:
            print(big_room_goals(result, load_start, load_end))
    for (n, size), by_kinds in p95_by_kinds.items():
        if "single" in by_kinds and "mixed" in by_kinds:
            (fs, acks), (fm, ackm) = by_kinds["single"], by_kinds["mixed"]
            print(
                f"N={n} rooms x {size}: mixed kinds against single choice, same run: fan-out p95 {fm:.0f} vs "
                f"{fs:.0f} ms -> {fm / fs:.2f}x; answer ack p95 {ackm:.0f} vs {acks:.0f} ms -> {ackm / acks:.2f}x"
            )


if __name__ == "__main__":
    main()
