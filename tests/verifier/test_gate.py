"""verifier/gate.py, the round runtime, called directly against the scripted checker on loopback: which pass
mark a round uses, decisions in the order asked or as they come, the gate off, and the round's log line."""

import logging

import pytest
from asgiref.sync import sync_to_async

from tests.factories import ThresholdFactory
from tests.verifier.helpers import item, items
from verifier import policy
from verifier.gate import Gate, GateItem, blind_applicable, gate_check

# Async tests reach the database from another thread (sync_to_async): each test's rows are committed.
pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def checker(settings, systemone):
    """The scripted System One checker under a roomy deadline: these tests are not about time, and a busy
    machine must slow their calls, not cut them."""
    settings.VERIFIER_TIMEOUT = 30.0
    return systemone


async def test_with_the_gate_off_every_question_is_unchecked_and_no_call_is_made(settings, model_server):
    settings.VERIFIER_BACKEND = "off"
    settings.VERIFIER_BASE_URL = model_server.url
    async with Gate.from_settings() as gate:
        assert not gate.enabled and not gate.blind_enabled and gate.breaker is None
        decisions = await gate.check_all(items(3))
    assert [(d.key, d.outcome) for d in decisions] == [("q1", "unchecked"), ("q2", "unchecked"), ("q3", "unchecked")]
    assert all(d.playable for d in decisions)
    assert model_server.requests == []


def test_the_round_uses_the_stored_mark_of_the_pinned_model_and_of_the_model_that_served(checker):
    ThresholdFactory(model_id="jev-1.13.0", value=0.6)
    ThresholdFactory(model_id="jev-1.14.0", value=0.7)
    gate = Gate.from_settings()
    assert (gate.threshold, gate.calibrated) == (0.6, True)
    assert gate.threshold_for_served("") == (0.6, True)  # the server did not say: the pinned one's
    assert gate.threshold_for_served("jev-1.14.0") == (0.7, True)  # the served model's own, stricter
    assert gate.threshold_for_served("jev-9.0.0") == (0.6, False)  # never calibrated for it, and said so


def test_a_given_pass_mark_wins_over_the_stored_one(checker):
    ThresholdFactory(model_id="jev-1.13.0", value=0.9)
    gate = Gate.from_settings(threshold=0.5)
    assert (gate.threshold, gate.calibrated, gate.thresholds) == (0.5, False, None)


async def test_a_question_is_judged_by_the_mark_of_the_model_that_served_it(checker):
    await sync_to_async(ThresholdFactory)(model_id="jev-1.14.0", value=0.7)
    checker.script.served_model = "jev-1.14.0"
    checker.script.default_probability = 0.65  # over the pinned model's default 0.6, under the served one's 0.7
    async with await sync_to_async(Gate.from_settings)() as gate:
        decision = await gate.check(item(1))
    assert (decision.outcome, decision.model_id, decision.threshold, decision.calibrated) == (
        "dropped",
        "jev-1.14.0",
        0.7,
        True,
    )
    assert decision.requested_model_id == "jev-1.13.0"


async def test_a_round_checked_at_once_answers_in_the_order_asked_a_stream_as_each_is_judged(checker):
    checker.script.latencies = {"Question number 1": 0.3}  # the first is judged last
    async with Gate.from_settings(threshold=0.6) as gate:
        assert [d.key for d in await gate.check_all(items(3))] == ["q1", "q2", "q3"]

    async def written():
        for question in items(3):
            yield question

    async with Gate.from_settings(threshold=0.6) as gate:
        streamed = [decision.key async for decision in gate.check_stream(written())]
    assert streamed[-1] == "q1" and sorted(streamed) == ["q1", "q2", "q3"]


async def test_gate_check_builds_a_gate_from_the_settings_and_logs_the_rounds_line(checker, caplog):
    checker.script.probabilities = {"Question number 2": 0.2}
    with caplog.at_level(logging.INFO, logger="verifier"):
        decisions = await gate_check(items=items(2))
    assert [d.outcome for d in decisions] == ["passed", "dropped"]
    [line] = [r.getMessage() for r in caplog.records if r.getMessage().startswith("gate round:")]
    assert "backend=systemone model=jev-1.13.0" in line and "checked=2 passed=1 dropped=1" in line


async def test_a_grounded_round_asks_no_blind_question(checker):
    async with await sync_to_async(Gate.from_settings)(source_text="The Apple Cup of 2021 ...") as gate:
        assert gate.grounded and gate.enabled
        decision = await gate.check(item(1))
    assert set(decision.probabilities) == set(policy.GROUNDED_CHECKS)  # the four against the source, no blind
    assert checker.blind_requests() == [] and len(checker.check_requests()) == 1
    # The same question closed-book gets its blind question too.
    async with Gate.from_settings(threshold=0.6) as gate:
        assert not gate.grounded and gate.blind_enabled
        await gate.check(item(1))
    assert checker.blind_requests()


def test_the_blind_question_needs_two_options_and_a_marked_one_among_them():
    assert blind_applicable(GateItem(key="a", text="?", options=("Yes", "No"), correct_index=1))
    assert not blind_applicable(GateItem(key="b", text="?", options=("Only",), correct_index=0))
    assert not blind_applicable(GateItem(key="c", text="?", options=("Yes", "No"), correct_index=2))
