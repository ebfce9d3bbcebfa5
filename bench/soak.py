"""Soak: games back to back for M minutes at N rooms x 20 players on one server set; RSS at start and end.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/quizgate_bench REDIS_URL=redis://127.0.0.1:6379/5 \\
        .venv/bin/python bench/soak.py --rooms 37 --minutes 30

--rooms: half of the largest N that held in ws_load.py. --baseline: the same churn against the bare relay.
"""

import argparse
import asyncio
import os
import sys
import time

import django
from ws_load import REPO, analyze, make_rooms, pct, rss_kb, run_baseline, run_quizgate, start_server  # noqa: I001 - sets Django up

from tests.support.servers import server_env


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rooms", type=int, default=25)
    parser.add_argument("--minutes", type=float, default=10)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--questions", type=int, default=3)
    parser.add_argument(
        "--baseline", action="store_true", help="the same churn against the bare Channels relay (bench/baseline_app.py)"
    )
    args = parser.parse_args()
    if not os.environ.get("REDIS_URL") or not os.environ.get("DATABASE_URL"):
        sys.exit("set DATABASE_URL (PostgreSQL) and REDIS_URL")
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    analyze()
    env = server_env(GAME_CLOCK_INTERVAL="0.25", RATELIMIT_ROOMS_PER_10_MINUTES="1000000", WS_MAX_PER_IP="1000000")
    if args.baseline:
        relay_env = {**env, "PYTHONPATH": str(REPO / "bench")}
        server, port = start_server("baseline_app:application", args.workers, relay_env)
    else:
        server, port = start_server("config.asgi:application", args.workers, env)
    rss_start = None
    games = errors = dropped = 0
    fanout: list[float] = []
    series: list[tuple[float, int]] = []  # (minutes since start, RSS KiB) after each round
    started = time.monotonic()
    deadline = started + args.minutes * 60
    try:
        while time.monotonic() < deadline:
            if args.baseline:
                fanout_ms, _ = asyncio.run(run_baseline(port, args.rooms, args.questions))
                result = {"failures": [], "players": 0, "connected": 0, "dropped": 0, "fanout": fanout_ms}
            else:
                rooms = make_rooms(args.rooms, args.questions)
                django.db.connections.close_all()
                result = asyncio.run(run_quizgate(port, server.pid, rooms, args.questions))
            if rss_start is None:
                rss_start = rss_kb(server.pid)  # after the first game: warm caches, loaded code
            games += 1
            errors += len(result["failures"]) + (result["players"] - result["connected"])
            dropped += result["dropped"]
            fanout += result["fanout"]
            series.append(((time.monotonic() - started) / 60, rss_kb(server.pid)))
        rss_end = rss_kb(server.pid)
    finally:
        server.terminate()
        server.wait(10)
    print(
        f"soak{' (bare relay)' if args.baseline else ''}: {args.minutes:g} min, {games} rounds"
        f" of {args.rooms} rooms x 20 players; "
        + ("errors and drops not counted for the relay; " if args.baseline else f"errors {errors}, dropped {dropped}; ")
        + f"fan-out p95 {pct(fanout, 95):.0f} ms; "
        f"server RSS after the first round {rss_start / 1024:.0f} MiB, at the end {rss_end / 1024:.0f} MiB "
        f"({(rss_end - rss_start) / max(rss_start, 1) * 100:+.1f} %)"
    )
    # Flat means it levels off: the RSS after the rounds ending nearest each whole minute.
    marks = {}
    for minute, rss in series:
        marks.setdefault(int(minute), rss)
    print("   RSS MiB by minute: " + ", ".join(f"{m}: {rss / 1024:.0f}" for m, rss in sorted(marks.items())))
    half = next((rss for minute, rss in series if minute >= args.minutes / 2), series[-1][1])
    growth = (rss_end - half) / half * 100
    print(f"   over the second half: {half / 1024:.0f} -> {rss_end / 1024:.0f} MiB ({growth:+.1f} %)")


if __name__ == "__main__":
    main()
