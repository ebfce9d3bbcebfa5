"""Every way the checker can fail lets the question through as `unverified`, within the round's budget."""

import logging
import socket

import pytest

from tests.support.timing import LoopLag
from tests.verifier.conftest import TEST_TIMEOUT
from tests.verifier.helpers import budget_seconds, items, stopwatch
from verifier.gate import ROUND_BUDGET, ROUND_GRACE, Gate

ROUND = 3
CALLS_PER_QUESTION = 3  # systemone: the checks, and the blind question in two orders, a call each
# What a clean round of the largest size here costs on this machine now, measured before each test (see
# `_clean_round`): the scheduling and loopback overhead a failing round may add to its budget.
BASELINE = {"wall": 0.0, "lag": 0.0}
ROOMY = 30.0


@pytest.fixture(autouse=True)
def _breaker_out_of_the_way(settings):
    # These tests pin each fault's own reason on every question; the breaker (which would turn the later ones
    # into `checker_unavailable`) has its own tests in test_breaker.py.
    settings.VERIFIER_BREAKER_FAILURES = 1000


@pytest.fixture(autouse=True)
async def _clean_round(request, settings, _breaker_out_of_the_way):
    """The baseline, in the same test: before the test scripts its fault, the same server answers a clean round
    (under a roomy deadline, so that a busy machine slows it rather than cutting it short)."""
    server = next(
        (request.getfixturevalue(name) for name in ("systemone", "llm") if name in request.fixturenames), None
    )
    BASELINE["wall"] = 0.0
    if server is not None:
        settings.VERIFIER_TIMEOUT = ROOMY
        decisions, BASELINE["wall"] = await _round(6)
        # Then the deadline these tests are about: a faulty checker is cut at TEST_TIMEOUT.
        settings.VERIFIER_TIMEOUT = TEST_TIMEOUT
        assert {d.outcome for d in decisions} == {"passed"}
        server.reset_counters()


async def _round(count: int = ROUND):
    gate = Gate.from_settings(threshold=0.6)
    async with gate, LoopLag() as lag:
        with stopwatch() as timing:
            decisions = await gate.check_all(items(count))
    BASELINE["lag"] = lag.worst  # how late this loop's timers ran while the round did
    return decisions, timing["wall"]


def _key_of(record) -> str:
    return record.getMessage().split("gate fail-open: ", 1)[1].split(" ", 1)[0]


def _assert_unverified(decisions, reason):
    assert [(d.outcome, d.reason) for d in decisions] == [("unverified", reason)] * len(decisions)
    assert all(d.score is None and d.message for d in decisions)


def _assert_within_budget(wall: float, *, calls: int, concurrency: int = 4):
    # The calls' deadlines in waves, plus twice what a clean round costs now (its loopback and scheduling).
    budget = budget_seconds(calls=calls, concurrency=concurrency, per_call=TEST_TIMEOUT)
    slack = 2 * BASELINE["wall"] + 2 * BASELINE["lag"]
    assert wall <= budget + slack, (wall, budget, BASELINE)


def _assert_refused_at_once(wall: float):
    """A faulty reply is refused for what it is, not by waiting out the (roomy) deadline: the round of faults costs
    no more than the clean round of twice its size measured before it in the same test, plus twice how late this
    loop's timers ran meanwhile (a loaded machine slows both alike)."""
    assert wall <= 2 * BASELINE["wall"] + 2 * BASELINE["lag"], (wall, BASELINE)
    assert wall < ROOMY, (wall, BASELINE)


def _assert_cut(decisions, *, under_way: int):
    """A round checked at once has one call budget: the questions whose calls were all under way time out (or,
    on a busy machine, are cut by the round a hair later); the ones still waiting for a slot are cut by the round
    (`round_budget`)."""
    assert {d.outcome for d in decisions} == {"unverified"}
    assert {d.reason for d in decisions[:under_way]} <= {"timeout", ROUND_BUDGET}
    assert [d.reason for d in decisions[under_way:]] == [ROUND_BUDGET] * (len(decisions) - under_way)
    assert all(d.score is None and d.message for d in decisions)


SYSTEMONE_FAULTS = [
    ("500", "http_status"),
    ("429", "rate_limited"),
    ("302", "redirect"),
    ("non_json", "bad_json"),
    ("truncated", "truncated_body"),
    ("missing_answers", "missing_answers"),
    ("missing_question", "missing_answer"),
    ("missing_probability", "missing_probability"),
    ("not_a_number", "bad_probability"),
    ("nan", "bad_probability"),
    ("out_of_range", "bad_probability"),
    ("huge", "body_too_large"),
    ("huge_chunked", "body_too_large"),
    ("trickle", "timeout"),
    ("close", "connection_closed"),
]
# Four calls at a time, two per question: the first two questions' calls are under way when the round starts.
SYSTEMONE_UNDER_WAY = 2


@pytest.mark.parametrize(("fault", "reason"), SYSTEMONE_FAULTS, ids=[fault for fault, _ in SYSTEMONE_FAULTS])
async def test_systemone_fault_fails_open(systemone, fault, reason, caplog, settings):
    systemone.script.fault = fault
    if reason != "timeout":
        # A fault of the reply itself is refused for what it is, whatever the deadline: under the roomy one,
        # so that a loaded machine reading a 2 MiB reply to its cap cannot turn it into `round_budget` (it did
        # once beside two CPU burners). Refused at once, not by waiting the deadline out: well inside it.
        settings.VERIFIER_TIMEOUT = ROOMY
    with caplog.at_level(logging.INFO, logger="verifier"):
        decisions, wall = await _round()
    if reason == "timeout":
        _assert_cut(decisions, under_way=SYSTEMONE_UNDER_WAY)
        _assert_within_budget(wall, calls=1)
    else:
        _assert_unverified(decisions, reason)
        _assert_refused_at_once(wall)
    # One warning per question: when the checks fail the question is unverified, whatever the blind call did.
    warnings = [r for r in caplog.records if r.name == "verifier" and r.levelno == logging.WARNING]
    assert len(warnings) == ROUND
    assert all(d.reason in r.getMessage() for d, r in zip(decisions, sorted(warnings, key=_key_of), strict=True))
    rounds = [r for r in caplog.records if r.name == "verifier" and r.levelno == logging.INFO]
    assert len(rounds) == 1 and "unverified=3" in rounds[0].getMessage()


async def test_redirect_is_not_followed(systemone):
    systemone.script.fault = "302"
    await _round(1)
    assert [r.path for r in systemone.requests] == ["/v1/systemone"] * CALLS_PER_QUESTION


async def test_trickling_body_is_cut_at_the_deadline(systemone):
    # Each byte arrives well inside httpx's per-read timeout; only the whole-call deadline stops it.
    systemone.script.fault = "trickle"
    systemone.script.trickle_delay = 0.02
    decisions, wall = await _round(6)
    _assert_cut(decisions, under_way=SYSTEMONE_UNDER_WAY)
    # 12 calls, 4 at a time: once three call budgets; now the round's one budget, whatever is left waiting.
    assert TEST_TIMEOUT - 0.05 <= wall <= TEST_TIMEOUT + ROUND_GRACE + 2 * BASELINE["wall"] + 2 * BASELINE["lag"], (
        wall,
        BASELINE,
    )


async def test_slow_model_times_out(systemone):
    systemone.script.latency = 5
    decisions, wall = await _round()
    _assert_cut(decisions, under_way=SYSTEMONE_UNDER_WAY)
    _assert_within_budget(wall, calls=1)


async def test_one_failing_question_does_not_touch_the_others(systemone, settings):
    # A 500 comes back at once: the deadline is not what this is about, and on a loaded machine the others'
    # calls could pass TEST_TIMEOUT and fail open as `timeout`, which would hide what is measured here.
    settings.VERIFIER_TIMEOUT = ROOMY
    systemone.script.faults = {"Question number 2": "500"}
    decisions, _ = await _round()
    assert [d.outcome for d in decisions] == ["passed", "unverified", "passed"]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


async def test_refused_connection(systemone, settings):
    settings.VERIFIER_BASE_URL = f"http://127.0.0.1:{_free_port()}"
    decisions, wall = await _round()
    _assert_unverified(decisions, "connection_refused")
    _assert_within_budget(wall, calls=ROUND * CALLS_PER_QUESTION)


async def test_dns_failure(systemone, settings):
    settings.VERIFIER_BASE_URL = "http://quizgate-gate-test.invalid"
    decisions, wall = await _round()
    # Without a resolver at all, the lookup may hang instead: the deadline still ends it.
    assert {d.reason for d in decisions} <= {"dns_error", "timeout"}
    assert {d.outcome for d in decisions} == {"unverified"}
    _assert_within_budget(wall, calls=ROUND * CALLS_PER_QUESTION)


async def test_tls_error(systemone, settings):
    settings.VERIFIER_BASE_URL = systemone.url.replace("http://", "https://")
    decisions, wall = await _round()
    _assert_unverified(decisions, "tls_error")
    _assert_within_budget(wall, calls=ROUND * CALLS_PER_QUESTION)


async def test_missing_api_key_sends_nothing(systemone, settings):
    settings.VERIFIER_API_KEY = ""
    decisions, _ = await _round()
    _assert_unverified(decisions, "no_api_key")
    assert systemone.requests == []


async def test_wrong_api_key_is_an_http_error(systemone, settings):
    settings.VERIFIER_API_KEY = "someone-else"
    decisions, _ = await _round(1)
    _assert_unverified(decisions, "http_status")


async def test_missing_base_url(systemone, settings):
    settings.VERIFIER_BASE_URL = ""
    decisions, _ = await _round(1)
    _assert_unverified(decisions, "not_configured")


LLM_FAULTS = [
    ("500", "http_status"),
    ("429", "rate_limited"),
    ("302", "redirect"),
    ("non_json", "bad_json"),
    ("truncated", "truncated_body"),
    ("missing_answers", "missing_answers"),
    ("no_logprobs", "no_logprobs"),
    ("missing_probability", "missing_probability"),
    ("not_a_number", "bad_probability"),
    ("nan", "bad_probability"),
    ("out_of_range", "bad_probability"),
    ("huge", "body_too_large"),
    ("huge_chunked", "body_too_large"),
    ("trickle", "timeout"),
    ("close", "connection_closed"),
]


@pytest.mark.parametrize(("fault", "reason"), LLM_FAULTS, ids=[fault for fault, _ in LLM_FAULTS])
async def test_llm_fault_fails_open(llm, fault, reason, settings):
    llm.script.fault = fault
    if reason != "timeout":
        settings.VERIFIER_TIMEOUT = ROOMY  # as for System One's faults above
    decisions, wall = await _round(2)
    if reason == "timeout":
        _assert_cut(decisions, under_way=1)  # three calls per question: only the first one's are all under way
        _assert_within_budget(wall, calls=1)
    else:
        _assert_unverified(decisions, reason)
        _assert_refused_at_once(wall)
    assert llm.max_in_flight <= 4


async def test_llm_refused_connection(llm, settings):
    settings.VERIFIER_BASE_URL = f"http://127.0.0.1:{_free_port()}/v1"
    decisions, _ = await _round(1)
    _assert_unverified(decisions, "connection_refused")
