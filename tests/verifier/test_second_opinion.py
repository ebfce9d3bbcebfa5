"""The second opinion for the borderline: a question whose score lies within the band around its threshold is
asked again by another judge before the gate decides; its verdict decides, both are recorded, and it fails open
to the first verdict (its own deadline, the round's budget)."""

import logging
from collections.abc import Iterator

import pytest

from tests.fakes.model_server import ModelServer
from tests.support.timing import timed
from tests.verifier.conftest import TEST_TIMEOUT
from tests.verifier.helpers import item
from verifier.decisions import ROUND_BUDGET
from verifier.gate import ROUND_GRACE, Gate

SECOND_MODEL = "judge-70b-2025-06"
ROOMY = 3.0


@pytest.fixture
def judge() -> Iterator[ModelServer]:
    server = ModelServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def gated(settings, systemone, judge) -> tuple[ModelServer, ModelServer]:
    settings.VERIFIER_BLIND = False  # one score: the answer's (and the explanation's)
    settings.VERIFIER_SECOND_OPINION_MODEL = SECOND_MODEL
    settings.VERIFIER_SECOND_OPINION_BASE_URL = f"{judge.url}/v1"
    settings.VERIFIER_SECOND_OPINION_API_KEY = "judge-key"
    settings.VERIFIER_SECOND_OPINION_BAND = 0.1
    # Roomy deadlines where a test is not about time: a loaded machine must not turn answers into timeouts.
    settings.VERIFIER_TIMEOUT = ROOMY
    settings.VERIFIER_SECOND_OPINION_TIMEOUT = ROOMY
    return systemone, judge


def _first(server: ModelServer, score: float) -> None:
    server.script.probabilities = {"Question number 1": {"answer_correct": score, "explanation_true": 0.95}}


async def _check():
    async with Gate.from_settings(threshold=0.6) as gate:
        decision = await gate.check(item(1))
    return decision, gate


@pytest.mark.parametrize("score", [0.51, 0.69])
async def test_a_score_just_inside_the_band_gets_a_second_opinion_that_decides(gated, score):
    first, judge = gated
    _first(first, score)
    judge.script.default_probability = 0.2 if score > 0.6 else 0.95  # it disagrees with the first verdict
    decision, gate = await _check()
    second = decision.details["second_opinion"]
    assert len(judge.requests_to("/v1/chat/completions")) == 2  # its two Yes/No checks
    assert second["backend"] == "llm" and second["model_id"] == SECOND_MODEL
    assert second["first"] == {"outcome": "passed" if score > 0.6 else "dropped", "score": score}
    assert second["changed"] is True
    expected = "dropped" if score > 0.6 else "passed"
    assert (decision.outcome, second["outcome"]) == (expected, expected)
    # Both are recorded: the first checker's score (what its threshold and the sweep go by), the judge's verdict.
    assert decision.score == score and decision.probabilities["answer_correct"] == score
    assert second["probabilities"]["answer_correct"] == pytest.approx(0.2 if score > 0.6 else 0.95)
    assert second["latency_ms"] >= 0 and "second opinion (judge-70b-2025-06)" in decision.message
    assert (gate.tally.second_opinion, gate.tally.second_opinion_changed) == (1, 1)


@pytest.mark.parametrize("score", [0.49, 0.71])
async def test_a_score_just_outside_the_band_is_decided_by_the_first_checker_alone(gated, score):
    first, judge = gated
    _first(first, score)
    decision, gate = await _check()
    assert judge.requests == []
    assert "second_opinion" not in decision.details
    assert decision.outcome == ("passed" if score > 0.6 else "dropped")
    assert gate.tally.second_opinion == 0


async def test_a_second_opinion_that_agrees_changes_nothing(gated):
    first, judge = gated
    _first(first, 0.65)
    judge.script.default_probability = 0.9
    decision, gate = await _check()
    assert decision.outcome == "passed" and decision.details["second_opinion"]["changed"] is False
    assert decision.reason == "" and (gate.tally.second_opinion, gate.tally.second_opinion_changed) == (1, 0)


async def test_a_second_opinion_that_times_out_fails_open_to_the_first_verdict(gated, settings, caplog):
    first, judge = gated
    _first(first, 0.55)
    # The baseline, in the same test (its deadlines roomy): a borderline question whose second opinion answers
    # at once.
    (clean, _), baseline = await timed(_check)
    assert clean.details["second_opinion"]["reason"] == ""
    settings.VERIFIER_SECOND_OPINION_TIMEOUT = TEST_TIMEOUT
    judge.script.latency = 5
    with caplog.at_level(logging.WARNING, logger="verifier"):
        decision, _ = await _check()
    assert (decision.outcome, decision.score) == ("dropped", 0.55)
    second = decision.details["second_opinion"]
    assert (second["outcome"], second["reason"], second["changed"]) == ("failed", "timeout", False)
    # Its own deadline, not the first checker's (3 s) nor the judge's latency (5 s).
    assert second["latency_ms"] <= (TEST_TIMEOUT + 2 * baseline) * 1000, (second["latency_ms"], baseline)
    assert any("second opinion missing" in r.getMessage() for r in caplog.records)


async def test_the_round_budget_still_holds_with_a_second_opinion_out(gated, settings):
    first, judge = gated
    settings.VERIFIER_SECOND_OPINION_TIMEOUT = 30.0  # its own deadline is far; the round's is not
    _first(first, 0.65)

    async def round_of_one():
        async with Gate.from_settings(threshold=0.6) as gate:
            return await gate.check_all([item(1)])

    # The baseline, in the same test: the same round with a second opinion that answers at once.
    (clean,), baseline = await timed(round_of_one)
    assert clean.details["second_opinion"]["reason"] == ""
    settings.VERIFIER_TIMEOUT = 1.0
    judge.script.latency = 30
    (decision,), wall = await timed(round_of_one)
    # The first verdict comes back before the round's end, not `round_budget` unverified.
    assert decision.outcome == "passed" and decision.score == 0.65
    assert decision.details["second_opinion"]["reason"] == ROUND_BUDGET
    assert wall <= 1.0 + ROUND_GRACE + 2 * baseline, (wall, baseline)


async def test_a_second_opinion_that_fails_leaves_the_first_verdict(gated):
    first, judge = gated
    _first(first, 0.62)
    judge.script.fault = "500"
    decision, _ = await _check()
    assert decision.outcome == "passed"
    assert decision.details["second_opinion"]["reason"] == "http_status"


async def test_without_a_second_opinion_model_nobody_else_is_asked(gated, settings):
    first, judge = gated
    settings.VERIFIER_SECOND_OPINION_MODEL = ""
    _first(first, 0.6)
    decision, _ = await _check()
    assert judge.requests == [] and "second_opinion" not in decision.details


@pytest.mark.django_db
def test_the_sweep_reports_how_many_reached_the_second_opinion_and_what_it_changed(gated):
    from io import StringIO

    from asgiref.sync import async_to_sync
    from django.core.management import call_command

    from quiz.models import Provenance
    from quiz.services import question_create
    from quiz.validation import QuestionData
    from review.services import review_label
    from verifier.services import verdict_record

    first, judge = gated
    first.script.probabilities = {
        "Question number 1": {"answer_correct": 0.65, "explanation_true": 0.95},  # judge drops it: defective
        "Question number 2": {"answer_correct": 0.55, "explanation_true": 0.95},  # judge passes it: good
        "Question number 3": {"answer_correct": 0.9, "explanation_true": 0.95},  # not borderline
    }
    judge.script.probabilities = {"Question number 1": 0.2, "Question number 2": 0.95}

    async def round_of_three():
        async with Gate.from_settings(threshold=0.6) as gate:
            return await gate.check_all([item(n) for n in (1, 2, 3)])

    decisions = async_to_sync(round_of_three)()
    assert [d.outcome for d in decisions] == ["dropped", "passed", "passed"]
    for n, (decision, label) in enumerate(zip(decisions, ("defective", "correct", "correct"), strict=True), 1):
        data = QuestionData(text=item(n).text, options=item(n).options, correct_index=0, explanation="x")
        question = question_create(data=data, provenance=Provenance.MODEL, model_id="writer-1")
        verdict_record(question_id=question.pk, decision=decision)
        review_label(question=question, label=label)
    out = StringIO()
    call_command("sweep", stdout=out, stderr=StringIO())
    assert (
        "second opinion: 2 question(s) reached it, 0 without an answer (the first verdict stood); it changed 2: "
        "1 passed -> dropped, 1 dropped -> passed (2 as labelled, 0 against the label)"
    ) in out.getvalue()
