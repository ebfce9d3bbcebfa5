"""The gate's smaller leaks, each against a scripted checker on loopback, counted on the server's side: a reply
nested past the parser's stack, a connection lost mid-body, a judge that refuses every response format, and a
dead checker while the writer is still writing."""

import asyncio
import logging

import pytest

from tests.verifier.helpers import items, stopwatch
from verifier.breaker import SLOW_PAUSED, UNAVAILABLE, configured_breaker_state
from verifier.gate import Gate

CHAT = "/v1/chat/completions"
PATHS = {"systemone": "/v1/systemone", "llm": CHAT, "judge": CHAT}


@pytest.fixture(params=["systemone", "llm", "judge"])
def checker(request):
    """(backend name, its scripted server) for each backend."""
    return request.param, request.getfixturevalue(request.param)


def _gate() -> Gate:
    return Gate.from_settings(threshold=0.6)


async def _round(count: int) -> list:
    async with _gate() as gate:
        return await gate.check_all(items(count))


def _tracebacks(caplog) -> list[logging.LogRecord]:
    return [record for record in caplog.records if record.exc_info]


# --- a reply nested 100k levels deep -----------------------------------------------------------------------------


async def test_a_reply_nested_past_the_parsers_stack_is_bad_json_without_a_traceback(checker, settings, caplog):
    settings.VERIFIER_BREAKER_FAILURES = 1000  # the reason of every question, not the breaker's
    _, server = checker
    server.script.fault = "deep_nesting"
    with caplog.at_level(logging.INFO):
        decisions = await _round(3)
    assert [(d.outcome, d.reason) for d in decisions] == [("unverified", "bad_json")] * 3
    assert "nested too deeply" in decisions[0].message
    assert _tracebacks(caplog) == []


async def test_a_judges_report_nested_past_the_parsers_stack_is_no_report(judge, caplog):
    judge.script.judge_reply = "deep_nesting"
    with caplog.at_level(logging.INFO):
        decisions = await _round(2)
    assert [(d.outcome, d.reason) for d in decisions] == [("unverified", "unparsable_report")] * 2
    assert _tracebacks(caplog) == []


# --- a connection lost mid-body ----------------------------------------------------------------------------------


@pytest.mark.parametrize("fault", ["truncated", "reset_mid_body"])
async def test_a_connection_lost_mid_body_counts_toward_the_breaker(checker, settings, fault):
    settings.VERIFIER_BREAKER_FAILURES = 4
    name, server = checker
    server.script.fault = fault
    first = await _round(2)
    assert {d.reason for d in first} <= {"truncated_body", UNAVAILABLE}
    assert configured_breaker_state().state == "open"
    # The next round is not sent: the breaker holds it, every question passes at once without a call.
    server.reset_counters()
    second = await _round(4)
    assert server.requests_to(PATHS[name]) == []
    assert [(d.outcome, d.reason) for d in second] == [("unverified", UNAVAILABLE)] * 4


# --- a judge that refuses every response_format ------------------------------------------------------------------


async def test_a_judge_refusing_every_response_format_walks_the_ladder_once(judge):
    judge.script.refuse_formats = frozenset({"json_schema", "json_object"})
    # Eight questions: a report and the blind question in two orders each, 24 answers.
    decisions = await _round(8)
    assert [d.outcome for d in decisions] == ["passed"] * 8
    asked = judge.requests_to(CHAT)
    refused = [r for r in asked if (r.json().get("response_format") or {}).get("type") in judge.script.refuse_formats]
    # The ladder once (json_schema, then json_object, each refused once), then plain text for every answer.
    assert len(refused) == 2
    assert len(asked) == 24 + 2
    assert sum(d.details["calls"] for d in decisions) == len(asked)


async def test_the_ladder_is_learnt_once_for_calls_in_flight_together(judge, settings):
    settings.VERIFIER_CONCURRENCY = 8
    judge.script.refuse_formats = frozenset({"json_schema"})
    decisions = await _round(6)
    assert [d.outcome for d in decisions] == ["passed"] * 6
    assert len(judge.requests_to(CHAT)) == 18 + 1


# --- a dead checker while the writer is still writing ------------------------------------------------------------

DEAD_TIMEOUT = 1.0
HANG = 60.0  # the fake answers only when the client gives up


async def _unsealed_round(count: int) -> tuple[list, float]:
    """Checks started as a writer starts them, the writer still writing (the round is never sealed here)."""
    async with _gate() as gate:
        with stopwatch() as timing:
            decisions = await asyncio.gather(*(gate.check(question) for question in items(count)))
    return decisions, timing["wall"]


async def test_an_unsealed_round_against_a_dead_checker_is_held_one_timeout(systemone, settings):
    settings.VERIFIER_TIMEOUT = DEAD_TIMEOUT
    settings.VERIFIER_CONCURRENCY = 4
    settings.VERIFIER_BREAKER_FAILURES = 5  # the default: more than one batch of calls in flight
    # The baseline, in the same run: the same round against a checker that answers at once.
    _, baseline = await _unsealed_round(8)
    systemone.reset_counters()
    systemone.script.latency = HANG
    decisions, wall = await _unsealed_round(8)
    assert {d.outcome for d in decisions} == {"unverified"}
    # The calls after the batch that ran out of time are not sent: the checker is paused as too slow.
    assert {d.reason for d in decisions} <= {"timeout", SLOW_PAUSED}
    # One batch of four calls waited out its timeout; nothing after it was sent.
    assert len(systemone.requests) == 4
    assert wall < 1.5 * DEAD_TIMEOUT + baseline
    # The breaker learnt it from that batch: the next round is not sent at all.
    assert configured_breaker_state().state == "open"
    systemone.reset_counters()
    decisions, wall = await _unsealed_round(8)
    assert systemone.requests == []
    # Paused by calls that ran out of time: said to be too slow, not unavailable.
    assert [(d.outcome, d.reason) for d in decisions] == [("unverified", SLOW_PAUSED)] * 8


async def test_an_answer_in_the_batch_keeps_the_round_calling(systemone, settings):
    # One question's calls hang, the others answer: the round is not given up for one slow question.
    settings.VERIFIER_TIMEOUT = DEAD_TIMEOUT
    settings.VERIFIER_CONCURRENCY = 4
    systemone.script.latencies = {"Question number 1:": HANG}
    decisions, _ = await _unsealed_round(6)
    assert [d.outcome for d in decisions[1:]] == ["passed"] * 5
    assert decisions[0].reason == "timeout"
    assert len(systemone.requests) == 18
