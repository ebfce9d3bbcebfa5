"""Joins into a room with friendly names against a room without, in the same run: a friendly room reads every
name already in it once per batch of joins (a generated name may be any name), a plain room only the nicknames
asked for. Fills each room to --players in batches of --batch joins (as the server's group commit does), the two
rooms taking turns batch by batch so both see the same machine.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/quizgate_bench \\
        .venv/bin/python bench/friendly_joins.py --players 2000 --batch 50

Prints each room's time per batch (p50, p95, the last one: the fullest room) and the friendly room's p50 over the
plain one's.
"""

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("DJANGO_DEBUG", "1")

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from django.core.management import call_command  # noqa: E402

from lobby.services import JoinIn, players_join, room_create  # noqa: E402
from quiz.models import CheckStatus, Provenance  # noqa: E402
from quiz.services import question_create, round_create  # noqa: E402
from quiz.validation import QuestionData  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", type=int, default=2000)
    parser.add_argument("--batch", type=int, default=50)
    args = parser.parse_args()
    call_command("migrate", verbosity=0)
    settings.ROOM_MAX_PLAYERS = args.players
    question = question_create(
        data=QuestionData(text="Bench question?", options=("one", "two"), correct_index=0), provenance=Provenance.HOST
    )
    round_ = round_create(
        title="friendly joins bench", questions=[question], provenance=Provenance.HOST,
        check_status=CheckStatus.UNCHECKED,
    )  # fmt: skip
    rooms = {
        "plain": room_create(round_id=round_.pk, timer_seconds=20).room,
        "friendly": room_create(round_id=round_.pk, timer_seconds=20, friendly_names=True).room,
    }
    times: dict[str, list[float]] = {name: [] for name in rooms}
    languages = ("en", "de", "es")
    for start in range(0, args.players, args.batch):
        for name, room in rooms.items():
            joins = [
                JoinIn(code=room.code, nickname=f"Player {n}", language=languages[n % 3])
                for n in range(start, min(start + args.batch, args.players))
            ]
            began = time.perf_counter()
            results = players_join(joins)
            times[name].append(time.perf_counter() - began)
            refused = [result for result in results if isinstance(result, Exception)]
            assert not refused, refused[:3]
    for name, each in times.items():
        ms = sorted(t * 1000 for t in each)
        p95 = ms[min(len(ms) - 1, int(len(ms) * 0.95))]
        p50, last = statistics.median(ms), each[-1] * 1000
        print(f"{name:8} {len(ms)} batches: p50 {p50:.1f} ms, p95 {p95:.1f} ms, last {last:.1f} ms")
    ratio = statistics.median(times["friendly"]) / statistics.median(times["plain"])
    print(f"friendly / plain p50: {ratio:.2f}")


if __name__ == "__main__":
    main()
