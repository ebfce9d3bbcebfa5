import math

import pytest

from tests.verifier.helpers import item
from verifier.backends.base import GateFailure
from verifier.backends.llm import yes_probability
from verifier.gate import Gate
from verifier.prompts import CHECKS

pytestmark = pytest.mark.usefixtures("llm")


async def test_yes_variants_add_up(llm):
    llm.script.top_logprobs = [
        (" Yes", math.log(0.5)),
        ("yes", math.log(0.2)),
        ("YES", math.log(0.05)),
        ("No", math.log(0.1)),
        (" no", math.log(0.05)),
        ("Maybe", math.log(0.1)),
    ]
    decision = await Gate.from_settings(threshold=0.6).check(item(1, explanation=""))
    assert decision.outcome == "passed"
    assert decision.probabilities["answer_correct"] == pytest.approx(0.75 / 0.9)
    assert decision.details["yes_no_mass"]["answer_correct"] == pytest.approx(0.9)


@pytest.mark.parametrize("variants", [("Yes",), ("yes",), (" Yes",), ("Yes", " yes", "YES")])
async def test_probability_from_scripted_yes_tokens(llm, variants):
    llm.script.yes_tokens = variants
    llm.script.no_tokens = ("No", " no")
    llm.script.probabilities = {"Question number 1": 0.3}
    decision = await Gate.from_settings(threshold=0.6).check(item(1))
    assert decision.probabilities == {
        "answer_correct": pytest.approx(0.3),
        "explanation_true": pytest.approx(0.3),
        "blind": pytest.approx(0.9),
    }
    assert decision.outcome == "dropped"


async def test_one_yes_no_question_per_call(llm):
    llm.script.probabilities = {
        "Question number 1": {
            CHECKS["answer_correct"].yes_no_question: 0.8,
            CHECKS["explanation_true"].yes_no_question: 0.4,
        }
    }
    decision = await Gate.from_settings(threshold=0.6).check(item(1))
    assert decision.probabilities == {
        "answer_correct": pytest.approx(0.8),
        "explanation_true": pytest.approx(0.4),
        "blind": pytest.approx(0.9),
    }
    assert decision.score == pytest.approx(0.4)
    assert decision.details["calls"] == 4  # two Yes/No questions and the blind question in two orders
    assert len(llm.blind_requests("/v1/chat/completions")) == 2
    requests = llm.check_requests("/v1/chat/completions")
    assert len(requests) == 2
    for request in requests:
        body = request.json()
        assert body["max_tokens"] == 1
        assert body["logprobs"] is True
        assert body["top_logprobs"] == 20
        assert body["model"] == "checker-8b-2025-01"
        assert request.headers["authorization"] == "Bearer test-key"
        system, user = body["messages"]
        assert system["role"] == "system" and "never instructions" in system["content"]
        assert "Question number 1" in user["content"]
    assert decision.input_tokens and decision.output_tokens == 4  # one completion token per call


async def test_no_logprobs_fails_open_loudly(llm, caplog):
    llm.script.fault = "no_logprobs"
    decision = await Gate.from_settings(threshold=0.6).check(item(1))
    assert (decision.outcome, decision.reason) == ("unverified", "no_logprobs")
    assert any(r.levelname == "WARNING" and "no_logprobs" in r.getMessage() for r in caplog.records)


async def test_a_server_without_logprobs_is_not_asked_again_for_the_rest_of_the_round(llm, settings):
    settings.VERIFIER_CONCURRENCY = 1  # one call at a time: the first one's answer is heard before the next goes
    llm.script.fault = "no_logprobs"
    async with Gate.from_settings(threshold=0.6) as gate:
        decisions = await gate.check_all([item(n) for n in range(1, 6)])
    assert {(d.outcome, d.reason) for d in decisions} == {("unverified", "no_logprobs")}
    # Five questions, four calls each (two checks, the blind question in two orders): one call in all.
    assert len(llm.requests_to("/v1/chat/completions")) == 1
    assert any("not asked again" in d.message for d in decisions)
    # The next round asks again: the server may have been fixed meanwhile.
    async with Gate.from_settings(threshold=0.6) as gate:
        await gate.check(item(1))
    assert len(llm.requests_to("/v1/chat/completions")) == 2


async def test_with_calls_in_flight_a_server_without_logprobs_costs_one_round_of_calls(llm, settings):
    settings.VERIFIER_CONCURRENCY = 4
    llm.script.fault = "no_logprobs"
    async with Gate.from_settings(threshold=0.6) as gate:
        await gate.check_all([item(n) for n in range(1, 11)])
    # Ten questions would be forty calls; only those already sent when the first answer came back go out.
    assert len(llm.requests_to("/v1/chat/completions")) <= 4


async def test_neither_yes_nor_no_fails_open(llm):
    llm.script.top_logprobs = [("Maybe", math.log(0.6)), ("The", math.log(0.3))]
    decision = await Gate.from_settings(threshold=0.6).check(item(1))
    assert (decision.outcome, decision.reason) == ("unverified", "no_yes_no")


def test_yes_probability_reads_sampled_token_when_top_list_is_empty():
    payload = {"choices": [{"logprobs": {"content": [{"token": "Yes", "logprob": -0.1, "top_logprobs": []}]}}]}
    assert yes_probability(payload) == (1.0, pytest.approx(math.exp(-0.1)))


def test_yes_probability_strips_tokenizer_markers():
    payload = {
        "choices": [
            {
                "logprobs": {
                    "content": [
                        {
                            "token": "\u0120Yes",
                            "logprob": math.log(0.6),
                            "top_logprobs": [
                                {"token": "\u0120Yes", "logprob": math.log(0.6)},
                                {"token": "\u2581No", "logprob": math.log(0.2)},
                            ],
                        }
                    ]
                }
            }
        ]
    }
    assert yes_probability(payload)[0] == pytest.approx(0.75)


def test_yes_probability_refuses_positive_logprob():
    payload = {"choices": [{"logprobs": {"content": [{"token": "Yes", "logprob": 0.3, "top_logprobs": []}]}}]}
    with pytest.raises(GateFailure) as caught:
        yes_probability(payload)
    assert caught.value.reason == "bad_probability"


async def test_no_key_and_no_base_url_fails_open(settings):
    settings.VERIFIER_API_KEY = ""
    settings.VERIFIER_BASE_URL = ""
    decision = await Gate.from_settings(threshold=0.6).check(item(1))
    assert (decision.outcome, decision.reason) == ("unverified", "no_api_key")


async def test_yes_no_under_the_floor_is_not_scored(llm):
    # SmolLM2 put a third of its first token on Yes/No, the rest on "Paris", "The", "I".
    llm.script.top_logprobs = [
        ("Paris", math.log(0.4)),
        ("Yes", math.log(0.3)),
        ("The", math.log(0.2)),
        ("No", math.log(0.05)),
    ]
    decision = await Gate.from_settings(threshold=0.6).check(item(1))
    assert (decision.outcome, decision.score, decision.reason) == ("unverified", None, "not_yes_no")
    assert "Yes/No hold 35% of the first token, under the floor 50%" in decision.message
    assert "judge backend" in decision.message


@pytest.mark.parametrize(("floor", "outcome"), [(0.3, "passed"), (0.4, "unverified")])
async def test_yes_no_floor_is_a_setting(llm, settings, floor, outcome):
    settings.VERIFIER_YES_NO_FLOOR = floor
    llm.script.yes_no_mass = 0.35
    decision = await Gate.from_settings(threshold=0.6).check(item(1))
    assert decision.outcome == outcome
