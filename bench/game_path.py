"""The game's database path, call by call: CPU and wall time per snapshot, per batch of answers, per close.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/quizgate_bench .venv/bin/python bench/game_path.py

ws_load.py's latencies move 2-3x from run to run on this 2-core machine; these figures do not, so they show
what a change to the game's queries saves. CPU time (the calling thread's) is what holds the GIL while the
server's event loop waits to fan out; wall time adds the waits on PostgreSQL.
"""

import argparse
import asyncio
import itertools
import json
import statistics
import time

from asgiref.sync import sync_to_async
from django.conf import settings
from django.core.management import call_command
from django.db import connection
from ws_load import analyze, make_rooms  # noqa: I001 - sets Django up first

from lobby import services
from lobby.models import Answer
from lobby.reads.selectors import player_frame, player_you, room_picture, room_snapshot
from lobby.realtime import frames
from lobby.rules.machine import Action
from lobby.services.progress import question_close

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


_broadcasts = itertools.count(1)


def fanout_encoding(label: str, room_ids: list[int], players: dict[int, list[int]]) -> None:
    """CPU per socket to turn one broadcast into every player's frame text: the whole frame encoded per socket
    (as before) against the common part once per broadcast and process plus each player's `you`
    (lobby/realtime/frames.py). Each room's broadcast is fresh (a new sent_at), so the once-per-broadcast encoding is
    counted every time."""
    pictures = {room_id: room_picture(room_id=room_id) for room_id in room_ids}

    def whole(room_id: int) -> None:
        picture = pictures[room_id]
        common = {**picture.snapshot, "sent_at": float(next(_broadcasts))}
        for player_id in players[room_id]:
            json.dumps(player_frame(common, picture.standings, player_id=player_id, answered={}))

    def once(room_id: int) -> None:
        picture = pictures[room_id]
        common = {**picture.snapshot, "sent_at": float(next(_broadcasts))}
        for player_id in players[room_id]:
            frames.player_text(common, player_you(common, picture.standings, player_id=player_id, answered={}))

    results = {}
    for name, encode in (("whole frame per socket", whole), ("common once + you", once)):
        per_socket = []
        for room_id in room_ids * 3:
            cpu, _wall = _timed(lambda r=room_id, e=encode: e(r))
            per_socket.append(cpu * 1000 / len(players[room_id]))
        results[name] = statistics.median(per_socket)
    before, after = results["whole frame per socket"], results["common once + you"]
    print(
        f"{label:<38} CPU us per socket: whole frame {before:6.1f}, common once + you {after:6.1f}  "
        f"(ratio {after / before:.2f})"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rooms", type=int, default=40)
    parser.add_argument("--big", type=int, default=500, help="players in one big room for the frame encoding")
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
    fanout_encoding(f"player frames of a reveal, {PLAYERS} a room", ids, players)
    # One big room (joined as players do, through the service), its question frames. A free room holds 20: the
    # operator's ROOM_MAX_PLAYERS is lifted to --big here, as a deployment that allows big rooms sets it.
    settings.ROOM_MAX_PLAYERS = max(settings.ROOM_MAX_PLAYERS, args.big)
    print(f"(ROOM_MAX_PLAYERS lifted to {settings.ROOM_MAX_PLAYERS} for the big room; the default is 20)")
    big = make_rooms(1, 2)[0]
    players[big.room.pk] = [
        services.player_join(code=big.room.code, nickname=f"b{i}").player.pk for i in range(args.big)
    ]
    services.game_act(room_id=big.room.pk, action=Action.START)
    fanout_encoding(f"player frames of a question, {args.big} a room", [big.room.pk] * 5, players)
    # A big room's answers arrive together: the server's group commit stores them in batches of up to 200.
    batch = 200
    chunks = [players[big.room.pk][i : i + batch] for i in range(1, len(players[big.room.pk]) - batch + 1, batch)]
    measure(
        f"answers, batch of {batch}, stored + counted",
        [
            lambda c=c: services.answers_submit([services.AnswerIn(p, 0, i % 4) for i, p in enumerate(c)])
            for c in chunks
        ],
        f"in the room of {args.big}",
    )
    measure(
        f"close: score the room of {args.big} and send its reveal",
        [lambda: question_close(room_id=big.room.pk, question_index=0)],
        "once a question; the reveal's picture is built on commit",
    )


if __name__ == "__main__":
    main()
