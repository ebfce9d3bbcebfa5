"""Homework under load: many players of one assignment, each joining and answering every question on their own
clock, spread over a window of wall time, against the server as `make serve` runs it (PostgreSQL + Redis).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/quizgate_bench REDIS_URL=redis://127.0.0.1:6379/5 \\
        .venv/bin/python bench/homework_load.py --players 2000 --questions 10 --window 600

Prints the answer's acknowledgement latency (POST sent -> reply read) p50/p95/p99, the opening's, the answers
per second and the server's CPU time per answer (its processes' user + system time from /proc over the run,
divided by the answers; joins and openings are in it too, so it is an upper bound).
"""

import argparse
import asyncio
import json
import os
import random
import ssl
import subprocess
import sys
import time
from datetime import timedelta
from json import dumps
from pathlib import Path

import httpx
from django.core.management import call_command
from django.utils import timezone
from ws_load import analyze, cpu_ms, create_database, pct, start_server  # noqa: I001 - sets Django up first

from config import serve
from lobby.homework import services as homework
from quiz.models import CheckStatus, Provenance
from quiz.services import question_create, round_create
from quiz.validation import QuestionData
from tests.support.servers import server_env


def postgres_cpu() -> dict[int, float]:
    """CPU time (user + system, ms) of each PostgreSQL process on this machine so far, from /proc."""
    seen = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        name, fields = text[text.index("(") + 1 : text.rindex(")")], text.rsplit(")", 1)[1].split()
        if name.startswith("postgres"):
            seen[int(stat.parent.name)] = (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")
    return seen


class PostgresCPU:
    """PostgreSQL's CPU over the run, read every half second: a backend that ends during the run (the server's
    connections are replaced every CONN_MAX_AGE) is counted to its last reading. Read once at each end, those
    backends' time was lost: it showed a fifth of what top shows."""

    def __init__(self) -> None:
        self.first = postgres_cpu()
        self.last = dict(self.first)
        self.task = asyncio.ensure_future(self._watch())

    async def _watch(self) -> None:
        while True:
            await asyncio.sleep(0.5)
            self.last.update(await asyncio.to_thread(postgres_cpu))

    def stop(self) -> float:
        self.task.cancel()
        self.last.update(postgres_cpu())
        return sum(ms - self.first.get(pid, 0.0) for pid, ms in self.last.items())


def make_assignment(questions: int, timer: int) -> str:
    data = [
        QuestionData(text=f"Homework question {i}?", options=("one", "two", "three", "four"), correct_index=i % 4)
        for i in range(questions)
    ]
    created = [question_create(data=d, provenance=Provenance.HOST) for d in data]
    round_ = round_create(
        title="homework bench", questions=created, provenance=Provenance.HOST, check_status=CheckStatus.UNCHECKED
    )
    return homework.assignment_create(
        round_id=round_.pk, deadline=timezone.now() + timedelta(days=1), reveal="each", timer_seconds=timer
    ).room.code


TLS = ssl.create_default_context()


class Reply:
    """A response as the bench reads it: its status, its JSON."""

    def __init__(self, status_code: int, body: bytes) -> None:
        self.status_code, self.body = status_code, body

    def json(self):
        return json.loads(self.body)

    def raise_for_status(self) -> None:
        if self.status_code >= 400:
            raise RuntimeError(f"HTTP {self.status_code}: {self.body[:200]!r}")


class LightClient:
    """Real HTTP/1.1 over one kept-alive connection, as a browser tab holds one: a request line, headers, the
    cookies the server set (the csrftoken cookie), a JSON body; the reply read by its Content-Length. httpx costs
    the bench's own loop a few times as much CPU a request, on the same two cores as the server: with 2,000
    players the bench, not the server, was what requests waited for. An idle connection is let go before
    uvicorn closes it (its keep-alive is 5 s): no request on a dead one. `--client httpx` keeps the old client."""

    def __init__(self, host: str, port: int, keepalive: float = 3.0) -> None:
        self.host, self.port, self.keepalive = host, port, keepalive
        self.cookies: dict[str, str] = {}
        self.reader = self.writer = None
        self.used = 0.0

    async def _connection(self):
        if self.writer is not None and time.monotonic() - self.used > self.keepalive:
            await self.aclose()
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        return self.reader, self.writer

    async def request(self, method: str, path: str, body: bytes = b"", headers: dict | None = None) -> Reply:
        reader, writer = await self._connection()
        lines = [f"{method} {path} HTTP/1.1", f"Host: {self.host}:{self.port}", "Accept: */*"]
        if self.cookies:
            lines.append("Cookie: " + "; ".join(f"{name}={value}" for name, value in self.cookies.items()))
        if method == "POST":
            lines += ["Content-Type: application/json", f"Content-Length: {len(body)}"]
        lines += [f"{name}: {value}" for name, value in (headers or {}).items()]
        writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body)
        head = await reader.readuntil(b"\r\n\r\n")
        status_line, *header_lines = head.decode("latin-1").split("\r\n")
        length, close = 0, False
        for line in header_lines:
            name, _, value = line.partition(":")
            name, value = name.strip().lower(), value.strip()
            if name == "content-length":
                length = int(value)
            elif name == "connection" and value.lower() == "close":
                close = True
            elif name == "set-cookie":
                cookie = value.split(";", 1)[0]
                self.cookies[cookie.split("=", 1)[0]] = cookie.split("=", 1)[1]
        data = await reader.readexactly(length)
        self.used = time.monotonic()
        if close:
            await self.aclose()
        return Reply(int(status_line.split(" ", 2)[1]), data)

    async def get(self, path: str) -> Reply:
        return await self.request("GET", path)

    async def post(self, path: str, json: dict, headers: dict) -> Reply:
        return await self.request("POST", path, dumps(json).encode(), headers)

    async def aclose(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.reader = self.writer = None

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc) -> None:
        await self.aclose()


def refused(stats: dict, reply, prefix: str = "") -> None:
    """Count a refused request by the error code its reply names."""
    stats["errors"] += 1
    why = prefix + str(reply.json().get("code", reply.status_code))
    stats["refused"][why] = stats["refused"].get(why, 0) + 1


# A player's schedule, for `player` and `players_pace` alike: arrival over the first fifth of the window, each
# question opened after up to its share of the rest, answered after reading and thinking.
ARRIVING_SHARE = 0.2
THINKING_SECONDS = (0.2, 2.0)


def question_gap(args) -> float:
    """The longest wait before a player opens their next question."""
    return args.window * (1 - ARRIVING_SHARE) / args.questions


def players_pace(args, seed: int = 0) -> tuple[int, float]:
    """The requests a second the players would send on their own clocks if no request ever waited (the schedule of
    `player` below, drawn again with a seed of its own): the busiest second, and the mean of the busiest 30. A
    player whose request waits sends the next one later, so a run that falls behind asks for less than this."""
    draw = random.Random(seed)
    gap, per_second = question_gap(args), {}
    for _ in range(args.players):
        at = draw.uniform(0, args.window * ARRIVING_SHARE)
        moments = [at, at]  # the page and the join
        for _question in range(args.questions):
            at += draw.uniform(0, gap)
            moments.append(at)  # opening it
            at += draw.uniform(*THINKING_SECONDS)
            moments.append(at)  # answering it
        for moment in moments:
            per_second[int(moment)] = per_second.get(int(moment), 0) + 1
    busiest = sorted(per_second.values(), reverse=True)
    return busiest[0], sum(busiest[:30]) / len(busiest[:30])


async def player(number: int, base: str, code: str, args, limits: asyncio.Semaphore, stats: dict) -> None:
    await asyncio.sleep(random.uniform(0, args.window * ARRIVING_SHARE))  # players come over the window's first part
    gap = question_gap(args)
    # Idle connections let go before uvicorn closes them (its keep-alive is 5 s): no request on a dead one.
    # One TLS context for every player (unused on plain http, but each client otherwise builds its own, loading the
    # system's certificates: 2,000 of them held the bench's loop for most of the arrival window).
    if args.client == "httpx":
        client = httpx.AsyncClient(base_url=base, timeout=60, limits=httpx.Limits(keepalive_expiry=3), verify=TLS)
    else:
        client = LightClient(*base.removeprefix("http://").split(":"))
    async with client as http:
        queued = time.perf_counter()
        async with limits:
            started = time.perf_counter()
            stats["queued"].append((started - queued) * 1000)
            stats["waits"].append((queued, (started - queued) * 1000))
            stats["requests"] += 1
            (await http.get(f"/hw/{code}/")).raise_for_status()
            stats["page"].append((time.perf_counter() - started) * 1000)
        headers = {"X-CSRFToken": http.cookies["csrftoken"]}

        async def post(path, body):
            queued = time.perf_counter()
            async with limits:
                started = time.perf_counter()
                stats["queued"].append((started - queued) * 1000)
                stats["waits"].append((queued, (started - queued) * 1000))
                stats["requests"] += 1
                reply = await http.post(f"/hw/{code}/api/{path}", json=body, headers=headers)
                return reply, (time.perf_counter() - started) * 1000

        joined, _ms = await post("join", {"nickname": f"P{number}"})
        token = joined.json()["token"]
        for index in range(args.questions):
            await asyncio.sleep(random.uniform(0, gap))
            opened, ms = await post("start", {"token": token, "question": index})
            if opened.status_code != 200:  # counted with the refused answers, by its code
                refused(stats, opened, prefix="open:")
                continue
            stats["open"].append(ms)
            options = opened.json()["options"]
            await asyncio.sleep(random.uniform(*THINKING_SECONDS))  # reading and thinking
            reply, ms = await post(
                "answer", {"token": token, "question": index, "option": random.randrange(len(options))}
            )
            if reply.status_code == 200:
                stats["ack"].append(ms)
            else:
                refused(stats, reply)


async def run(args, code: str) -> None:
    popen, port = start_server(serve.APP, args.workers, server_env(DJANGO_DEBUG="0"))
    behind: set = set()
    try:
        stats = {
            "ack": [],
            "open": [],
            "page": [],
            "errors": 0,
            "refused": {},
            "queued": [],
            "requests": 0,
            "waits": [],
        }
        limits = asyncio.Semaphore(args.concurrency)
        load_start = os.getloadavg()
        before, wall, own = cpu_ms(popen.pid), time.perf_counter(), time.process_time()
        database = PostgresCPU()
        base = f"http://127.0.0.1:{port}"
        players = [asyncio.ensure_future(player(n, base, code, args, limits, stats)) for n in range(args.players)]
        # A server far behind would keep the bench going for ever: after --give-up seconds, what was done is counted.
        _done, behind = await asyncio.wait(players, timeout=args.give_up or args.window * 4)
        for late in behind:
            late.cancel()
        await asyncio.gather(*behind, return_exceptions=True)
        seconds, cpu = time.perf_counter() - wall, cpu_ms(popen.pid) - before
        own = (time.process_time() - own) * 1000
        database = database.stop()
        load_end = os.getloadavg()
    finally:
        popen.terminate()
        try:
            popen.wait(20)
        except subprocess.TimeoutExpired:
            popen.kill()
            popen.wait(10)
    answers, requests = len(stats["ack"]), stats["requests"]
    print(f"load average at start {load_start[0]:.2f} {load_start[1]:.2f}, at end {load_end[0]:.2f} {load_end[1]:.2f}")
    print(
        f"players {args.players} x {args.questions} questions over {seconds:.0f} s ({args.workers} worker(s)): "
        f"{answers} answers, {stats['errors']} refused {stats['refused']}, {answers / seconds:.1f} answers/s; "
        f"{len(behind)} player(s) still going when the bench gave up"
    )
    # A request waits here for one of the bench's --concurrency slots before it is sent: the time a player's
    # own clock runs on while the server is behind (not in the ack latency, which starts at the send).
    queued = stats["queued"]
    waited = max(queued, default=0.0)
    print(
        f"waited for a request slot ms p50 {pct(queued, 50):.1f}  p95 {pct(queued, 95):.1f}  max {waited:.0f} "
        f"(goal: none >= 1000 -> ratio {waited / 1000:.2f}; {sum(q >= 1000 for q in queued)} waited a second)"
    )
    ack, opened = stats["ack"], stats["open"]
    print(
        f"answer ack ms p50 {pct(ack, 50):.1f}  p95 {pct(ack, 95):.1f}  p99 {pct(ack, 99):.1f} "
        f"(goal p95 <= 200 -> ratio {pct(ack, 95) / 200:.2f})"
    )
    print(f"open question ms p50 {pct(opened, 50):.1f}  p95 {pct(opened, 95):.1f}")
    page = stats["page"]
    print(f"the page (GET, every player once) ms p50 {pct(page, 50):.1f}  p95 {pct(page, 95):.1f}")
    # When requests waited: the players arrive (page, join) over the first fifth of the window.
    spans = {}
    for queued_at, ms in stats["waits"]:
        spans.setdefault(int((queued_at - wall) // 10) * 10, []).append(ms)
    print(
        "slot wait p95 ms by 10 s of the run: "
        + ", ".join(f"{at}s {pct(waits, 95):.0f}" for at, waits in sorted(spans.items()))
    )
    peak, busy = players_pace(args)
    sent: dict[int, int] = {}  # requests sent (a slot had) in each second of the run
    for queued_at, ms in stats["waits"]:
        second = int(queued_at - wall + ms / 1000)
        sent[second] = sent.get(second, 0) + 1
    busiest_sent = sorted(sent.values(), reverse=True)[:30]
    served = sum(busiest_sent) / max(len(busiest_sent), 1)
    print(
        f"the players' own pace, had no request waited: {peak} requests/s at the busiest second, {busy:.0f}/s over "
        f"the busiest 30 s; this run sent {served:.0f}/s over its busiest 30 s ({served / busy:.2f} of the pace)"
    )
    print(f"server CPU per answer {cpu / max(answers, 1):.2f} ms (all requests of the run: {cpu:.0f} ms CPU)")
    print(
        f"requests {requests} ({requests / seconds:.0f}/s): server CPU per request {cpu / max(requests, 1):.2f} ms, "
        f"{cpu / seconds / 1000:.2f} cores; the bench's own ({args.client}) {own / max(requests, 1):.2f} ms, "
        f"{own / seconds / 1000:.2f} cores; PostgreSQL (all its processes) {database / max(requests, 1):.2f} "
        f"ms, {database / seconds / 1000:.2f} cores"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", type=int, default=200)
    parser.add_argument("--questions", type=int, default=10)
    parser.add_argument("--window", type=float, default=60, help="seconds of wall time the players spread over")
    parser.add_argument("--timer", type=int, default=30)
    parser.add_argument(
        "--give-up", type=float, default=0, help="seconds after which unfinished players are stopped (4 windows)"
    )
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument(
        "--client", choices=("light", "httpx"), default="light", help="the players' HTTP client (see LightClient)"
    )
    parser.add_argument(
        "--concurrency", type=int, default=8, help="requests in flight at most (each a database connection)"
    )
    args = parser.parse_args()
    if not os.environ.get("DATABASE_URL"):
        sys.exit("set DATABASE_URL (PostgreSQL) and REDIS_URL: this measures the production setup")
    create_database()
    call_command("migrate", verbosity=0)
    code = make_assignment(args.questions, args.timer)
    analyze()
    asyncio.run(run(args, code))


if __name__ == "__main__":
    sys.exit(main())
