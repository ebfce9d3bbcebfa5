"""Time to a playable round of 10, gate on and off, against the scripted writer server with a per-token delay.

    .venv/bin/python bench/generate_round.py [--token-delay 0.004] [--check-latency 0.3] [--runs 3]

The writer streams; each question goes to the gate as soon as it is complete. Printed: wall time to a
playable round, the writing time, and the share of checking time that overlapped writing; with the gate on, also
when the first question was playable (it passed the gate, every question written before it decided: a game can
start then while the rest is still being written), every run's figures and their median.
"""

import argparse
import asyncio
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.test_settings")
os.environ.setdefault("LOG_LEVEL", "WARNING")

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402

from quiz.generation.writer import RoundSpec, RoundWriter  # noqa: E402
from quiz.jobs.conf import writer_config  # noqa: E402
from tests.fakes.writer_server import WriterServer  # noqa: E402
from verifier.conf import gate_config  # noqa: E402
from verifier.gate import Gate  # noqa: E402


async def one_round(count: int) -> tuple[float, float, float, int, float]:
    gate = Gate(config=gate_config(), threshold=0.6, calibrated=False)
    started = time.monotonic()
    async with gate:
        outcome = await RoundWriter(spec=RoundSpec(count=count, topic="Birds"), config=writer_config(), gate=gate).run()
    wall = time.monotonic() - started
    assert outcome.playable and len(outcome.played) == count, outcome.message
    writing = sum(end - start for start, end in outcome.timeline.writing)
    first = outcome.timeline.first_ready - started
    return wall, writing, outcome.timeline.overlap_share(), outcome.progress.asked, first


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--count", type=int, default=10)
    parser.add_argument("--token-delay", type=float, default=0.004, help="seconds per streamed token (4 chars)")
    parser.add_argument("--check-latency", type=float, default=0.3, help="seconds per checker call")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()

    server = WriterServer().start()
    server.writer.token_delay = args.token_delay
    server.writer.chars_per_token = 4
    server.script.latency = args.check_latency
    settings.OPENAI_BASE_URL = f"{server.url}/v1"
    settings.OPENAI_API_KEY = "bench"
    settings.QUIZ_WRITER_MODEL = "writer-bench-2025-01-01"
    settings.VERIFIER_BASE_URL = server.url
    settings.VERIFIER_API_KEY = "bench"
    settings.VERIFIER_MODEL = "jev-bench-1"
    settings.VERIFIER_TIMEOUT = max(2.0, args.check_latency * 4)
    settings.VERIFIER_CONCURRENCY = 4
    print(
        f"round of {args.count}; {args.token_delay * 1000:.1f} ms per 4-char token; "
        f"checker {args.check_latency * 1000:.0f} ms per call, 4 in flight; median of {args.runs} runs"
    )
    try:
        for backend in ("off", "systemone"):
            settings.VERIFIER_BACKEND = backend
            results = [asyncio.run(one_round(args.count)) for _ in range(args.runs)]
            wall = statistics.median(r[0] for r in results)
            writing = statistics.median(r[1] for r in results)
            overlap = statistics.median(r[2] for r in results)
            label = "gate on " if backend != "off" else "gate off"
            line = f"{label}: asked {results[0][3]:>2}, playable round in {wall:5.2f} s (writing {writing:5.2f} s)"
            if backend != "off":
                serial = writing + -(-results[0][3] // 4) * args.check_latency
                line += f", checking overlapped writing {overlap:.0%}; check-after-write would take ~{serial:5.2f} s"
                first = statistics.median(r[4] for r in results)
                line += f"; first question playable in {first:5.2f} s (whole round {wall:5.2f} s)"
                runs = ", ".join(f"{r[4]:.2f}/{r[0]:.2f}" for r in results)
                line += f"\n  runs (first question / whole round, s): {runs}"
            print(line)
    finally:
        server.stop()


if __name__ == "__main__":
    main()
