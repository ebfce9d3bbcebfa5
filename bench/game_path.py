"""The game's database path, call by call: CPU and wall time per snapshot, per batch of answers, per close.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/quizgate_bench .venv/bin/python bench/game_path.py

ws_load.py's latencies move 2-3x from run to run on this 2-core machine; these figures do not, so they show
what a change to the game's queries saves. CPU time (the calling thread's) is what holds the GIL while the
server's event loop waits to fan out; wall time adds the waits on PostgreSQL.
"""

import argparse
import asyncio
import statistics
import time

from asgiref.sync import sync_to_async
from django.core.management import call_command
from django.db import connection
from ws_load import analyze, make_rooms  # noqa: I001 - sets Django up first

from lobby import services
from lobby.machine import Action
from lobby.models import Answer
from lobby.selectors import room_snapshot

PLAYERS = 20


def _timed(call) -> tuple[float, float]:
    c0, w0 = time.thread_time(), time.perf_counter()
    call()
    return (time.thread_time() - c0) * 1000, (time.perf_counter() - w0) * 1000


def measure(label: str, calls: list, expected: str) -> None:
    """Each call on a worker thread under a running event loop, as in the server: the events it sends after
    commit are handed to the loop, so their cost is not the thread's."""
    timed = sync_to_async(_timed, thread_sensitive=False)

    async def run() -> list[tuple[float, float]]:
        return [await timed(call) for call in calls]

    cpu, wall = zip(*asyncio.run(run()), strict=True)
    print(
        f"{label:<38} CPU ms median {statistics.median(cpu):6.2f}  wall ms median {statistics.median(wall):6.2f}  "
        f"(n={len(calls)}; {expected})"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rooms", type=int, default=40)
    args = parser.parse_args()
    call_command("migrate", verbosity=0)
    analyze()
    print(
        f"game_path: {connection.vendor}, {args.rooms} rooms x {PLAYERS} players, one question each; "
        f"{Answer.objects.count():,} answers already stored (a query that scans them all shows here)"
    )
    rooms = make_rooms(args.rooms, 2)
    players = {}
    for created in rooms:
        joined = [services.player_join(code=created.room.code, nickname=f"p{i}") for i in range(PLAYERS)]
        players[created.room.pk] = [j.player.pk for j in joined]
        services.game_act(room_id=created.room.pk, action=Action.START)
    ids = list(players)
    # Warm: the question cache and the connection, as in a running server.
    for room_id in ids:
        room_snapshot(room_id=room_id)

    measure("snapshot, question open", [lambda r=r: room_snapshot(room_id=r) for r in ids], "per broadcast or join")
    # All but one player answer (19 per batch: the server's group commit), then the last one closes the question.
    measure(
        "answers, batch of 19, stored + counted",
        [
            lambda r=r: services.answers_submit([services.AnswerIn(p, 0, i % 4) for i, p in enumerate(players[r][1:])])
            for r in ids
        ],
        "one batch per room",
    )
    measure(
        "last answer: stored, counted, closed",
        [lambda r=r: services.answers_submit([services.AnswerIn(players[r][0], 0, 1)]) for r in ids],
        "scores 20 players, reveal broadcast built on commit, crowd check",
    )
    measure("snapshot, reveal", [lambda r=r: room_snapshot(room_id=r) for r in ids], "per broadcast or join")


if __name__ == "__main__":
    main()
