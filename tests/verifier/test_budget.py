import pytest

from tests.verifier.helpers import budget_seconds, items, stopwatch
from verifier.services import Gate

LATENCY = 0.1
SLACK = 0.3
ROOMY_TIMEOUT = 5.0


@pytest.mark.parametrize("concurrency", [1, 3, 4])
async def test_systemone_calls_in_flight_never_exceed_the_limit(systemone, settings, concurrency):
    settings.VERIFIER_CONCURRENCY = concurrency
    # A whole round checked at once has one call budget (the round budget): make it room for 20 calls in a row.
    settings.VERIFIER_TIMEOUT = ROOMY_TIMEOUT
    systemone.script.latency = LATENCY
    gate = Gate.from_settings(threshold=0.6)
    async with gate:
        with stopwatch() as timing:
            decisions = await gate.check_all(items(10))
    assert all(d.outcome == "passed" for d in decisions)
    assert systemone.max_in_flight == concurrency
    assert gate.budget.max_in_flight == concurrency
    # Two calls per question: the checks, and the blind question on its own.
    bound = budget_seconds(calls=20, concurrency=concurrency, per_call=LATENCY)
    assert bound - 0.02 <= timing["wall"] <= bound + SLACK


async def test_llm_calls_in_flight_never_exceed_the_limit(llm, settings):
    settings.VERIFIER_TIMEOUT = ROOMY_TIMEOUT
    llm.script.latency = LATENCY
    gate = Gate.from_settings(threshold=0.6)
    async with gate:
        with stopwatch() as timing:
            decisions = await gate.check_all(items(5))  # two checks and the blind question each: 15 calls
    assert all(d.outcome == "passed" for d in decisions)
    assert len(llm.requests) == 15
    assert llm.max_in_flight == 4
    assert timing["wall"] <= budget_seconds(calls=15, concurrency=4, per_call=LATENCY) + SLACK


async def test_streamed_questions_share_one_semaphore(systemone, settings):
    settings.VERIFIER_CONCURRENCY = 2
    systemone.script.latency = LATENCY

    async def writer():
        for question in items(6):
            yield question

    gate = Gate.from_settings(threshold=0.6)
    async with gate:
        keys = [decision.key async for decision in gate.check_stream(writer())]
    assert sorted(keys) == [f"q{n}" for n in range(1, 7)]
    assert systemone.max_in_flight == 2
    assert gate.tally.checked == 6


async def test_one_by_one_checks_share_one_semaphore(systemone, settings):
    import asyncio

    settings.VERIFIER_CONCURRENCY = 2
    systemone.script.latency = LATENCY
    async with Gate.from_settings(threshold=0.6) as gate:
        decisions = await asyncio.gather(*(gate.check(question) for question in items(5)))
    assert len(decisions) == 5
    assert systemone.max_in_flight == 2
