"""A round of 12 asked as 18 candidates, checked against the scripted server with a fixed latency per call.

    DJANGO_DEBUG=1 .venv/bin/python bench/verify_round.py [--latency 0.3] [--concurrency 4] [--candidates 18]
        [--hang-timeout 6]

Prints the wall time, the bound ceil(calls / concurrency) x L and their ratio, per backend. No database.
Then "checker hangs": the same 18 candidates with every call hanging, checked at once (nothing left to write, so
the unchecked round takes 0 s): the wall time and its ratio to one VERIFIER_TIMEOUT; then the next round, with
the circuit breaker open: the calls made and the wall time.
Then "second opinion on": every question borderline (the first checker scores 0.65 against 0.6), the judge (an
`llm` backend on a second scripted server, same latency) asked about each: calls to each, and the wall time
against ceil(first calls / concurrency) x L + ceil(judge calls / concurrency) x L (the judge's calls follow each
question's first answer, on their own semaphore).
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
from verifier.breaker import breaker_for  # noqa: E402
from verifier.conf import gate_config  # noqa: E402
from verifier.gate import Gate, GateItem  # noqa: E402


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


async def run_round(count: int) -> tuple[float, int, int, int]:
    async with Gate.from_settings(threshold=0.6) as gate:
        started = time.monotonic()
        decisions = await gate.check_all(candidates(count))
        wall = time.monotonic() - started
    # A round checked at once has one VERIFIER_TIMEOUT: on a slow machine the last questions pass unverified.
    passed = sum(1 for decision in decisions if decision.outcome == "passed")
    return wall, gate.budget.calls, gate.budget.max_in_flight, passed


async def hanging_round(count: int) -> tuple[float, int, set[str]]:
    async with Gate.from_settings(threshold=0.6) as gate:
        started = time.monotonic()
        decisions = await gate.check_all(candidates(count))
        wall = time.monotonic() - started
    assert all(decision.outcome == "unverified" for decision in decisions), decisions
    return wall, gate.budget.calls, {decision.reason for decision in decisions}


def hang_rows(server: ModelServer, *, count: int, timeout: float) -> None:
    settings.VERIFIER_TIMEOUT = timeout
    server.script.latency = 3600.0
    print(
        f"checker hangs: every call, VERIFIER_TIMEOUT T={timeout:g} s, breaker after "
        f"{settings.VERIFIER_BREAKER_FAILURES} failures"
    )
    print(f"{'backend':<10} {'round':<13} {'questions':>9} {'calls':>6} {'wall ms':>8} {'wall/T':>7}  reasons")
    for backend, base_url in (("systemone", server.url), ("llm", f"{server.url}/v1"), ("judge", f"{server.url}/v1")):
        settings.VERIFIER_BACKEND = backend
        settings.VERIFIER_BASE_URL = base_url
        config = gate_config()
        breaker = breaker_for(backend=backend, model_id=config.model_id, config=config)
        breaker.reset()
        for label in ("first", "breaker open"):
            before = len(server.requests)
            wall, calls, reasons = asyncio.run(hanging_round(count))
            sent = len(server.requests) - before
            print(
                f"{backend:<10} {label:<13} {count:>9} {sent:>6} {wall * 1000:>8.0f} {wall / timeout:>7.2f}  "
                f"{','.join(sorted(reasons))}"
            )
        breaker.reset()
    server.script.latency = 0.0


async def second_opinion_round(count: int) -> tuple[float, int, int, int]:
    async with Gate.from_settings(threshold=0.6) as gate:
        started = time.monotonic()
        decisions = await gate.check_all(candidates(count))
        wall = time.monotonic() - started
    reached = sum(1 for decision in decisions if "second_opinion" in decision.details)
    assert gate.second_budget is not None
    return wall, gate.budget.calls, gate.second_budget.calls, reached


def second_opinion_rows(server: ModelServer, *, count: int, latency: float, concurrency: int, repeat: int) -> None:
    judge = ModelServer().start()
    judge.script.latency = latency
    server.script.default_probability = 0.65  # borderline against 0.6 with the band 0.1
    settings.VERIFIER_SECOND_OPINION_MODEL = "judge-70b-2025-06"
    settings.VERIFIER_SECOND_OPINION_BASE_URL = f"{judge.url}/v1"
    settings.VERIFIER_SECOND_OPINION_BAND = 0.1
    print(f"second opinion on: every question borderline, judge latency {latency * 1000:.0f} ms")
    print(
        f"{'backend':<10} {'questions':>9} {'reached':>7} {'calls':>6} {'judge':>6} {'wall ms':>8} {'bound ms':>8} "
        f"{'ratio':>6}"
    )
    try:
        for backend, base_url in (("systemone", server.url), ("llm", f"{server.url}/v1")):
            settings.VERIFIER_BACKEND = backend
            settings.VERIFIER_BASE_URL = base_url
            for size in (count, 12):
                wall, calls, judged, reached = min(asyncio.run(second_opinion_round(size)) for _ in range(repeat))
                bound = (math.ceil(calls / concurrency) + math.ceil(judged / concurrency)) * latency
                print(
                    f"{backend:<10} {size:>9} {reached:>7} {calls:>6} {judged:>6} {wall * 1000:>8.0f} "
                    f"{bound * 1000:>8.0f} {wall / bound:>6.2f}"
                )
    finally:
        settings.VERIFIER_SECOND_OPINION_MODEL = ""
        server.script.default_probability = 0.9
        judge.stop()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--latency", type=float, default=0.3)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--candidates", type=int, default=18)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--hang-timeout", type=float, default=6.0)
    args = parser.parse_args()
    logging.getLogger("httpx").setLevel(logging.WARNING)
    logging.getLogger("httpx2").setLevel(logging.WARNING)
    # Every hanging question logs its fail-open line; the table says it all.
    logging.getLogger("verifier").setLevel(logging.ERROR)

    server = ModelServer().start()
    server.script.latency = args.latency
    settings.VERIFIER_BASE_URL = server.url
    settings.VERIFIER_API_KEY = "bench"
    settings.VERIFIER_MODEL = "jev-1.13.0"
    settings.VERIFIER_TIMEOUT = 6.0
    settings.VERIFIER_CONCURRENCY = args.concurrency
    print(f"latency L={args.latency * 1000:.0f} ms per call, concurrency {args.concurrency}, best of {args.repeat}")
    print(
        f"{'backend':<10} {'questions':>9} {'calls':>6} {'in flight':>9} {'wall ms':>8} {'bound ms':>8} {'ratio':>6} "
        f"{'passed':>6}"
    )
    try:
        for backend, base_url in (
            ("systemone", server.url),
            ("llm", f"{server.url}/v1"),
            ("judge", f"{server.url}/v1"),
        ):
            settings.VERIFIER_BACKEND = backend
            settings.VERIFIER_BASE_URL = base_url
            for count in (args.candidates, 12):
                best = min(asyncio.run(run_round(count)) for _ in range(args.repeat))
                wall, calls, in_flight, passed = best
                bound = math.ceil(calls / args.concurrency) * args.latency
                print(
                    f"{backend:<10} {count:>9} {calls:>6} {in_flight:>9} {wall * 1000:>8.0f} {bound * 1000:>8.0f} "
                    f"{wall / bound:>6.2f} {passed:>6}"
                )
        second_opinion_rows(
            server,
            count=args.candidates,
            latency=args.latency,
            concurrency=args.concurrency,
            repeat=args.repeat,
        )
        hang_rows(server, count=args.candidates, timeout=args.hang_timeout)
    finally:
        server.stop()
    print(f"server saw at most {server.max_in_flight} requests in flight; schema errors: {len(server.schema_errors)}")


if __name__ == "__main__":
    main()
