"""Faults behind the load balancer: what players notice when a host, a worker, a layer shard or PostgreSQL goes.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/quizgate_bench REDIS_URL=redis://127.0.0.1:6379/5 \\
        .venv/bin/python bench/host_loss.py --fault host --runs 3 --burners 2

Each run starts its own set as deploy/ describes it (tests/support/hosts.py): PostgreSQL, the primary Redis, two
channel layer shards of its own (CHANNEL_LAYER_REDIS_URLS), three hosts (127.0.0.11-13, --workers uvicorn
workers each, 1 by default; 2 with --fault worker, as deploy/host.sh runs them) and HAProxy with deploy/haproxy.cfg
in front, the default caps. --rooms (10) rooms of 20 players, each room's phones and big screen from an address of
its own (127.0.1.<room>, through X-Forwarded-For: a school each), all through HAProxy, each phone reconnecting as
static/js/live.js does and keeping an unacknowledged answer until it is acknowledged (player.js). Once every phone
sees question 0, the fault:

    host    one host's process group killed (SIGKILL), as a machine losing power
    worker  one uvicorn worker of a host killed (its supervisor starts another)
    shard   one channel layer shard killed for 3 s, while a fifth of the phones reconnect, then started again
    pg      PostgreSQL refusing every host for 3 s (a TCP proxy between the hosts and it cuts them off)
    stall   one host stopped (SIGSTOP) for 2.5 s
    restart one host killed, started again 3 s later, during a game of questions; its share over time
    newhost a fourth host started during a game of questions; its share over time

Half the phones answer question 0 just after the fault starts, the others once it is over. Each run prints the
sockets the fault closed, the reconnect times (from the fault's start: p50, p95, max), the refusals by code, the
HTTP 5xx answered to a reconnect, the answers acknowledged but not stored (lost), the answers neither acknowledged
nor stored, and the load average at its start and end; then each goal with its bound and the ratio. restart and
newhost print each host's share of the sockets every 2 s (from the registry lobby/realtime/rebalance.py keeps), when
every host first held its fair share within +-10 %, the moves (closes with 4012) per moved player, and the moves that
reached a page showing an open question it had not answered (none may). --burners N runs N CPU-burning processes
beside the run.
--own-hostnames runs each host in a UTS namespace of its own (unshare --uts, root only), so a survivor finds a dead
host by its beat, as on separate machines, not by its process id.

The older form runs against a set already up (deploy/README.md): --lb ws://127.0.0.1:18000 --kill-group PGID.
"""

import argparse
import asyncio
import contextlib
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from pathlib import Path

import redis.asyncio as redis
from asgiref.sync import sync_to_async
from django.conf import settings
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed
from ws_load import REPO, call_command, make_rooms, pct  # noqa: I001 - sets Django up first

from lobby.models import Answer
from lobby.realtime import rebalance
from tests.support.hosts import Host, Phone, free_port_on, haproxy_servers, start_haproxy, start_host
from tests.support.proxy import OutageProxy
from tests.support.servers import database_url, start_redis

PLAYERS = 20
FAULTS = ("host", "worker", "shard", "pg", "stall", "restart", "newhost")
WINDOW = {"pg": 3.0, "stall": 2.5, "shard": 3.0}  # how long the fault lasts; a kill is over at once


class Screen(Phone):
    """The room's big screen: comes back with the host's token."""

    def __init__(self, lb, code, token, address, refusals):
        super().__init__(lb, code, "host", address, refusals)
        self.host_token = token

    async def open(self) -> dict:
        attempt = 0
        while True:
            try:
                self.ws = await connect(self.url, origin=self.origin, open_timeout=10, max_queue=None,
                                        local_addr=(self.address, 0))  # fmt: skip
                await self.ws.send(json.dumps({"type": "host", "token": self.host_token}))
                async for raw in self.ws:
                    message = json.loads(raw)
                    if message["type"] == "state":
                        return message
            except Exception:  # noqa: BLE001 - a refusal or a dead host: back off and try again, as the page does
                self.refusals["screen"] += 0
            attempt += 1
            await asyncio.sleep(min(0.5 * 2**attempt, 8) * (0.5 + random.random() / 2))


class Page:
    """One open page: reads its socket, comes back whenever it closes (recording when and with which code), keeps
    its answer until the server acknowledges it (an "answered", or a picture saying it answered) or refuses it."""

    def __init__(self, phone: Phone, room: int, auto_answer: bool = False):
        self.phone, self.room, self.auto = phone, room, auto_answer
        self.phase: tuple[str, int] = ("lobby", -1)
        # closed at, back at, code, and whether the page showed an open question it had no acknowledgement for
        self.closes: list[tuple[float, float, int | None, bool]] = []
        self.acked: set[int] = set()
        self.replies: asyncio.Queue = asyncio.Queue()
        self.back = asyncio.Event()
        self.answered: set[int] = set()
        self.task: asyncio.Task | None = None

    def seen(self, message: dict) -> None:
        if message["type"] == "state":
            self.phase = (message["phase"], message["question_index"])
            you = message.get("you") or {}
            if message["phase"] == "question" and you.get("answered"):
                self.acked.add(message["question_index"])
                self.replies.put_nowait(("answered", message["question_index"]))
            elif self.auto and message["phase"] == "question" and message["question_index"] not in self.answered:
                self.answered.add(message["question_index"])
                asyncio.get_running_loop().create_task(self.answer_later(message["question_index"]))
        elif message["type"] == "answered":
            self.acked.add(message.get("question"))
            self.replies.put_nowait(("answered", message.get("question")))
        elif message["type"] == "error" and message.get("code") != "paused":
            self.replies.put_nowait((message.get("code", "?"), None))

    async def run(self) -> None:
        while True:
            ws = self.phone.ws
            with contextlib.suppress(ConnectionClosed):
                async for raw in ws:
                    self.seen(json.loads(raw))
            closed = time.monotonic()
            phase = self.phase[0] == "question" and self.phase[1] not in self.acked
            self.seen(await self.phone.open())
            self.closes.append((closed, time.monotonic(), ws.close_code, phase))
            self.back.set()

    async def answer(self, question: int, limit: float = 40) -> str | None:
        """Sends the answer and again each time the socket comes back, until acknowledged or refused."""
        message = json.dumps({"type": "answer", "question": question, "option": random.randrange(4)})
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            self.back.clear()
            with contextlib.suppress(ConnectionClosed):
                await self.phone.ws.send(message)
            reply = asyncio.create_task(self.replies.get())
            again = asyncio.create_task(self.back.wait())
            await asyncio.wait({reply, again}, timeout=deadline - time.monotonic(), return_when=asyncio.FIRST_COMPLETED)
            again.cancel()
            if reply.done():
                return reply.result()[0]
            reply.cancel()
        return None

    async def answer_later(self, question: int) -> None:
        await asyncio.sleep(random.uniform(0.5, 3.0))
        await self.answer(question, limit=15)


def burn() -> None:
    while True:
        pass


async def wait_up(client, prefix: str, hosts: list[Host], seconds: float = 60) -> None:
    """Every host's processes in the registry (each has started)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        entries = await rebalance.registry(client, prefix)
        pids = {rebalance.registry_pid(name) for name in entries}
        if all(pids & set(h.pids()) for h in hosts):
            return
        await asyncio.sleep(0.25)


async def held_by(client, prefix: str, hosts: list[Host]) -> list[int]:
    entries = await rebalance.registry(client, prefix)
    pids = [set(h.pids()) for h in hosts]
    return [sum(n for name, n in entries.items() if rebalance.registry_pid(name) in p) for p in pids]


async def one_fault_run(fault: str, rooms: int, logs: Path, own_hostnames: bool, workers: int) -> dict:
    db = settings.DATABASES["default"]
    postgres = OutageProxy(db.get("HOST") or "127.0.0.1", int(db.get("PORT") or 5432)) if fault == "pg" else None
    shards = [start_redis(), start_redis()]
    layer_prefix = f"qg-bench-{uuid.uuid4().hex[:8]}"
    env = {
        "CHANNEL_LAYER_REDIS_URLS": ",".join(f"redis://127.0.0.1:{s.port}/0" for s in shards),
        "CHANNEL_LAYER_PREFIX": layer_prefix,
        "RATELIMIT_KEY_PREFIX": f"rl-{uuid.uuid4().hex[:8]}",
        "TRUST_X_FORWARDED_FOR": "1",
        "GAME_CLOCK_INTERVAL": str(settings.GAME_CLOCK_INTERVAL),  # the deployment's, not the tests' 0.1 s
        "REBALANCE_INTERVAL_SECONDS": str(settings.REBALANCE_INTERVAL_SECONDS),  # on, as deployed
    }
    if postgres:
        env["DATABASE_URL"] = database_url().replace(f":{db.get('PORT') or 5432}/", f":{postgres.port}/")
    workers = 2 if fault == "worker" else workers
    addresses = ["127.0.0.11", "127.0.0.12", "127.0.0.13"]

    def host(n: int, port: int = 0) -> Host:
        name = f"qg-bench-{n + 1}" if own_hostnames else ""
        log = logs / f"{fault}-host-{n + 1}.log"
        return start_host(addresses[n], env=env, log_path=log, port=port, workers=workers, hostname=name)

    if fault == "newhost":
        addresses.append("127.0.0.14")
    hosts = [host(n) for n in range(3)]
    targets = [h.target for h in hosts]
    fourth_port = 0
    if fault == "newhost":
        fourth_port = free_port_on("127.0.0.14")
        targets.append(f"127.0.0.14:{fourth_port}")
    haproxy, lb = start_haproxy(targets, log_path=logs / f"{fault}-haproxy.log")
    client = redis.Redis.from_url(settings.REDIS_URL)
    registry = f"{layer_prefix}:rebalance:"
    refusals: Counter = Counter()
    pages: list[Page] = []
    screens: list[Page] = []
    out: dict = {"load_start": os.getloadavg()[0]}
    game = fault in ("restart", "newhost")
    try:
        await wait_up(client, registry, hosts)
        await asyncio.sleep(1.5)  # HAProxy's checks mark them up (rise 2)
        made = await sync_to_async(make_rooms)(rooms, 12 if game else 3)
        for r, created in enumerate(made):
            address = f"127.0.1.{r + 1}"
            screen = Screen(lb, created.room.code, created.host_token, address, refusals)
            await screen.open()
            screens.append(Page(screen, r))
            phones = [Phone(lb, created.room.code, f"P{n}", address, refusals) for n in range(PLAYERS)]
            await asyncio.gather(*(p.open() for p in phones))
            pages += [Page(p, r, auto_answer=game) for p in phones]
        for page in [*screens, *pages]:
            page.task = asyncio.create_task(page.run())
        for page in screens:
            await page.phone.ws.send(json.dumps({"type": "start", "phase": "lobby", "index": -1}))
        async with asyncio.timeout(60):
            while not all(p.phase == ("question", 0) for p in pages):  # noqa: ASYNC110 - the pages' own reads
                await asyncio.sleep(0.1)
        out["players"] = len(pages)
        if game:
            out.update(await spreading(fault, client, registry, hosts, host, screens, pages, fourth_port))
            if fault == "newhost":
                hosts.append(out.pop("fourth"))
            elif fault == "restart":
                hosts[0] = out.pop("restarted")
            return out
        refusals.clear()
        servers = await asyncio.to_thread(haproxy_servers, haproxy.stats_url)
        out["on_faulted_host"] = int(servers["host1"]["scur"])  # HAProxy's count of its sockets
        into = pages[::2]
        started = time.monotonic()
        answers = {}
        if fault == "host":
            hosts[0].kill_group()
        elif fault == "worker":
            counts = await rebalance.registry(client, registry)
            mine = {rebalance.registry_pid(n): c for n, c in counts.items()}
            victim = max((pid for pid in hosts[0].pids() if pid in mine), key=lambda pid: mine[pid])
            out["on_faulted_host"] = mine[victim]
            os.kill(victim, signal.SIGKILL)
        elif fault == "stall":
            os.killpg(hosts[0].popen.pid, signal.SIGSTOP)
        elif fault == "pg":
            postgres.cut_off()
        elif fault == "shard":
            shards[1].kill()
        if fault == "shard":  # a fifth of the phones reconnect meanwhile (a page reloaded, a phone woken)
            for page in pages[1::5]:
                await page.phone.ws.close()
        await asyncio.sleep(0.3)
        first = [asyncio.create_task(p.answer(0)) for p in into]
        try:
            await asyncio.sleep(max(WINDOW.get(fault, 0) - 0.3, 0))
        finally:
            if fault == "stall":
                os.killpg(hosts[0].popen.pid, signal.SIGCONT)
            elif fault == "pg":
                postgres.restore()
            elif fault == "shard":
                shards[1] = start_redis(shards[1].port)
        rest = [p for p in pages if p not in into]
        second = [asyncio.create_task(p.answer(0)) for p in rest]
        for page, reply in zip(into + rest, await asyncio.gather(*first, *second), strict=True):
            answers[id(page)] = reply
        # Longer than HAProxy's slowest verdict (three checks of 2 s): a host it were to take out is out by now.
        await asyncio.sleep(max(0.0, 8 - (time.monotonic() - started)))
        # A close by the fault: any but a move (4012, lobby/realtime/rebalance.py spreading the sockets again), counted
        # separately. The shard's deliberate reconnects are timed apart: they are the handshakes into the fault.
        deliberate = set(map(id, pages[1::5])) if fault == "shard" else set()
        everyone = [*screens, *pages]
        faulted = {id(p): [c for c in p.closes if c[0] >= started and c[2] != rebalance.REBALANCE_CLOSE_CODE]
                   for p in everyone}  # fmt: skip
        closed = [
            p for p in everyone if id(p) not in deliberate and (faulted[id(p)] or p.phone.ws.state.name != "OPEN")
        ]
        timed = closed if fault != "shard" else [p for p in everyone if id(p) in deliberate]
        took = sorted(faulted[id(p)][0][1] - started for p in timed if faulted[id(p)]) or [0.0]
        out["moves"] = sum(1 for p in everyone for c in p.closes if c[0] >= started and c[2] == 4012)
        rows = await sync_to_async(list)(
            Answer.objects.filter(room_id__in=[c.room.pk for c in made], question_index=0).values_list(
                "room_id", "player__nickname"
            )
        )
        stored = set(rows)
        room_pk = [c.room.pk for c in made]
        acked = lost = neither = refused = 0
        for page in pages:
            reply, key = answers[id(page)], (room_pk[page.room], page.phone.nickname)
            acked += reply == "answered"
            lost += reply == "answered" and key not in stored
            refused += reply not in (None, "answered")
            neither += reply is None and key not in stored
        out.update(
            closed=len(closed), sockets=len(pages) + len(screens), p50=pct(took, 50), p95=pct(took, 95), max=took[-1],
            refusals=sum(v for k, v in refusals.items() if not k.startswith("http ")),
            refusal_codes=dict(refusals),
            http5xx=sum(v for k, v in refusals.items() if k.startswith("http 5")),
            acked=acked, stored=len(stored), lost=lost, neither=neither, refused=refused,
        )  # fmt: skip
        return out
    finally:
        out["load_end"] = os.getloadavg()[0]
        for page in [*screens, *pages]:
            if page.task:
                page.task.cancel()
        for page in [*screens, *pages]:
            if page.phone.ws is not None:
                with contextlib.suppress(Exception):
                    await page.phone.ws.close()
        await client.aclose()
        with contextlib.suppress(ProcessLookupError):
            os.killpg(hosts[0].popen.pid, signal.SIGCONT)
        haproxy.kill()
        haproxy.wait(10)
        for h in hosts:
            h.stop()
        for shard in shards:
            shard.kill()
        if postgres:
            postgres.close()


async def spreading(fault, client, registry, hosts, host, screens, pages, fourth_port) -> dict:
    """A game of questions runs (every screen moves on 2 s into each reveal and at once from the leaderboard);
    a host is restarted, or a fourth one started; each host's share every 2 s for 60 s."""
    stop = asyncio.Event()

    async def drive(page: Page) -> None:
        done = -1
        while not stop.is_set():
            phase, index = page.phase
            if phase == "reveal" and index > done:
                await asyncio.sleep(2)
                with contextlib.suppress(ConnectionClosed):
                    await page.phone.ws.send(json.dumps({"type": "next", "phase": "reveal", "index": index}))
            elif phase == "leaderboard" and index > done:
                done = index
                with contextlib.suppress(ConnectionClosed):
                    await page.phone.ws.send(json.dumps({"type": "next", "phase": "leaderboard", "index": index}))
            elif phase == "finished":
                return
            await asyncio.sleep(0.1)

    drivers = [asyncio.create_task(drive(s)) for s in screens]
    out: dict = {}
    try:
        await asyncio.sleep(4)
        if fault == "restart":
            port = hosts[0].port
            hosts[0].kill_group()
            await asyncio.sleep(3)
            started = time.monotonic()
            hosts[0] = out["restarted"] = host(0, port)
            watched = hosts
        else:
            started = time.monotonic()
            out["fourth"] = host(3, fourth_port)
            watched = [*hosts, out["fourth"]]
        shares, fair_at = [], None
        while time.monotonic() - started < 60:
            await asyncio.sleep(2)
            held = await held_by(client, registry, watched)
            total = sum(held) or 1
            fair = total / len(watched)
            shares.append((time.monotonic() - started, held))
            if fair_at is None and all(abs(h - fair) <= 0.1 * fair for h in held):
                fair_at = time.monotonic() - started
            print(f"    {time.monotonic() - started:5.1f} s: " + ", ".join(f"{100 * h / total:4.1f} %" for h in held),
                  flush=True)  # fmt: skip
        moves = [c for p in pages for c in p.closes if c[0] >= started and c[2] == rebalance.REBALANCE_CLOSE_CODE]
        moved = {id(p) for p in pages for c in p.closes if c[0] >= started and c[2] == rebalance.REBALANCE_CLOSE_CODE}
        out.update(
            shares=shares, fair_at=fair_at, moves=len(moves), moved=len(moved),
            per_moved=len(moves) / len(moved) if moved else 0.0,
            in_question=sum(1 for c in moves if c[3]),
            final=[round(100 * h / (sum(shares[-1][1]) or 1), 1) for h in shares[-1][1]],
        )  # fmt: skip
        return out
    finally:
        stop.set()
        for task in drivers:
            task.cancel()


GOALS = {
    "pg": [("sockets closed", "closed", 0)],
    "stall": [("sockets closed", "closed", 0)],
    "host": [("reconnect p95 s", "p95", 3.0), ("refusals", "refusals", 0), ("HTTP 5xx", "http5xx", 0)],
    "worker": [("HTTP 5xx", "http5xx", 0)],
    "shard": [("HTTP 5xx", "http5xx", 0)],
    "restart": [("fair +-10 % after s", "fair_at", 30.0), ("moves per moved player", "per_moved", 1.5),
                ("moves in an open question unanswered", "in_question", 0)],
}  # fmt: skip
GOALS["newhost"] = GOALS["restart"]
ALWAYS = [("acked answers lost", "lost", 0), ("answers neither acked nor stored", "neither", 0)]


def goal_line(result: dict, fault: str) -> str:
    parts = []
    for label, key, bound in GOALS[fault] + ([] if fault in ("restart", "newhost") else ALWAYS):
        value = result.get(key)
        if value is None:
            parts.append(f"{label}: never (bound {bound}) FAIL")
            continue
        ok = value <= bound
        ratio = f"{value / bound:.2f} x bound" if bound else f"{value} vs 0"
        parts.append(f"{label}: {value if isinstance(value, int) else round(value, 2)} <= {bound} ({ratio}) "
                     f"{'ok' if ok else 'FAIL'}")  # fmt: skip
    return "; ".join(parts)


def report(fault: str, run: int, r: dict) -> None:
    head = f"{fault} run {run}: load {r['load_start']:.2f} -> {r['load_end']:.2f}"
    if fault in ("restart", "newhost"):
        print(f"{head}; fair +-10 % after {r['fair_at'] if r['fair_at'] is None else round(r['fair_at'], 1)} s; "
              f"final shares {r['final']} %; {r['moves']} moves of {r['moved']} players "
              f"({r['per_moved']:.2f} per moved player), {r['in_question']} to a page in a question unanswered",
              flush=True)  # fmt: skip
    else:
        timed = " of the fifth reconnecting" if fault == "shard" else ""
        print(f"{head}; on the faulted host/worker {r['on_faulted_host']}; sockets closed {r['closed']} of "
              f"{r['sockets']} (moved {r['moves']}); reconnect{timed} "
              f"p50 {r['p50']:.2f} s, p95 {r['p95']:.2f} s, max {r['max']:.2f} s; "
              f"refusals {r['refusals']} {r['refusal_codes'] or ''}; HTTP 5xx {r['http5xx']}; answers acked "
              f"{r['acked']}, refused {r['refused']}, stored {r['stored']} of {r['players']}; acked lost {r['lost']}; "
              f"neither acked nor stored {r['neither']}", flush=True)  # fmt: skip
    print(f"  goals: {goal_line(r, fault)}", flush=True)


def faults(args) -> None:
    call_command("migrate", verbosity=0)
    logs = Path(tempfile.mkdtemp(prefix="host-loss-"))
    burners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.burners)]
    began = time.monotonic()
    try:
        for fault in args.fault.split(","):
            results = []
            for run in range(1, args.runs + 1):
                result = asyncio.run(one_fault_run(fault, args.rooms, logs, args.own_hostnames, args.workers))
                results.append(result)
                report(fault, run, result)
            keys = ["fair_at", "per_moved", "moves"] if fault in ("restart", "newhost") else [
                "closed", "p95", "refusals", "http5xx", "lost", "neither"]  # fmt: skip
            medians = {k: statistics.median(r[k] if r[k] is not None else float("inf") for r in results) for k in keys}
            print(f"{fault}, median of {len(results)}: " + ", ".join(f"{k} {v:.2f}" for k, v in medians.items())
                  + f" (logs in {logs})", flush=True)  # fmt: skip
        log_errors(logs, time.monotonic() - began)
    finally:
        for burner in burners:
            burner.kill()
            burner.wait()


# What the ASGI server logs when a socket is sent to before its accept or after its close, and any unhandled error.
ASGI_ERRORS = ("Unexpected ASGI message", "Expected 'websocket.accept'", "Exception in ASGI application", "Traceback")


def log_errors(logs: Path, seconds: float) -> None:
    """After every fault's runs: the ASGI protocol errors and tracebacks in all the hosts' logs (goal: none)."""
    found = Counter()
    for path in sorted(logs.glob("*-host-*.log")):
        for line in path.read_text(errors="replace").splitlines():
            for words in ASGI_ERRORS:
                if words in line:
                    found[(path.name, words)] += 1
    total = sum(found.values())
    lines = "".join(f"\n  {name}: {words!r} x{n}" for (name, words), n in sorted(found.items()))
    print(f"hosts' logs after {seconds / 60:.1f} minutes of faults: {total} ASGI errors or tracebacks (goal 0){lines}")


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
    parser.add_argument("--fault", default="", help=f"one or more of {','.join(FAULTS)}, comma-separated")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--burners", type=int, default=0, help="CPU-burning processes beside the run")
    parser.add_argument("--own-hostnames", action="store_true", help="each host under unshare --uts (root)")
    parser.add_argument("--rooms", type=int, default=10)
    parser.add_argument("--workers", type=int, default=1, help="uvicorn workers a host (--fault worker: 2)")
    parser.add_argument("--lb", default="ws://127.0.0.1:8000", help="the older form: a set already up")
    parser.add_argument("--players", type=int, default=20, help="the older form: per room")
    parser.add_argument("--kill-group", type=int, default=0, help="the older form: the host's process group to kill")
    parser.add_argument("--start-host", default="", help="the older form: then start a host on this address")
    args = parser.parse_args()
    if args.kill_group:
        asyncio.run(run(args.lb, args.rooms, args.players, args.kill_group, args.start_host))
        return
    unknown = set(args.fault.split(",")) - set(FAULTS)
    if not args.fault or unknown:
        parser.error(f"--fault takes {', '.join(FAULTS)} (comma-separated), or give --kill-group")
    faults(args)


if __name__ == "__main__":
    main()
