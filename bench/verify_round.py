"""A round of 12 asked as 18 candidates, checked against the scripted server with a fixed latency per call.

    DJANGO_DEBUG=1 .venv/bin/python bench/verify_round.py [--latency 0.3] [--concurrency 4] [--candidates 18]

Prints the wall time, the bound ceil(calls / concurrency) x L and their ratio, per backend. No database.
"""

import argparse
import asyncio
import logging
import math
import os
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

from tests.fakes.model_server import ModelServer  # noqa: E402
from verifier.services import Gate, GateItem  # noqa: E402


def candidates(count: int) -> list[GateItem]:
    return [
        GateItem(
            key=f"c{n}",
            text=f"Candidate question {n}: which option is right?",
            options=("Right", "Wrong", "Also wrong", "Nope"),
            correct_index=0,
            explanation=f"Explanation {n}.",
        )
        for n in range(1, count + 1)
    ]


async def run_round(count: int) -> tuple[float, int, int]:
    async with Gate.from_settings(threshold=0.6) as gate:
        started = time.monotonic()
        decisions = await gate.check_all(candidates(count))
        wall = time.monotonic() - started
    assert all(decision.outcome == "passed" for decision in decisions), decisions
    return wall, gate.budget.calls, gate.budget.max_in_flight


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--latency", type=float, default=0.3)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--candidates", type=int, default=18)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    logging.getLogger("httpx").setLevel(logging.WARNING)
    logging.getLogger("httpx2").setLevel(logging.WARNING)
    logging.getLogger("verifier").setLevel(logging.WARNING)

    server = ModelServer().start()
    server.script.latency = args.latency
    settings.VERIFIER_BASE_URL = server.url
    settings.VERIFIER_API_KEY = "bench"
    settings.VERIFIER_MODEL = "jev-1.13.0"
    settings.VERIFIER_TIMEOUT = 6.0
    settings.VERIFIER_CONCURRENCY = args.concurrency
    print(f"latency L={args.latency * 1000:.0f} ms per call, concurrency {args.concurrency}, best of {args.repeat}")
    print(f"{'backend':<10} {'questions':>9} {'calls':>6} {'in flight':>9} {'wall ms':>8} {'bound ms':>8} {'ratio':>6}")
    try:
        for backend, base_url in (("systemone", server.url), ("llm", f"{server.url}/v1")):
            settings.VERIFIER_BACKEND = backend
            settings.VERIFIER_BASE_URL = base_url
            for count in (args.candidates, 12):
                best = min(asyncio.run(run_round(count)) for _ in range(args.repeat))
                wall, calls, in_flight = best
                bound = math.ceil(calls / args.concurrency) * args.latency
                print(
                    f"{backend:<10} {count:>9} {calls:>6} {in_flight:>9} {wall * 1000:>8.0f} {bound * 1000:>8.0f} "
                    f"{wall / bound:>6.2f}"
                )
    finally:
        server.stop()
    print(f"server saw at most {server.max_in_flight} requests in flight; schema errors: {len(server.schema_errors)}")


if __name__ == "__main__":
    main()
