"""The judge backend: any chat model, no logprobs needed; a JSON report per question, read defensively."""

import pytest
from asgiref.sync import async_to_sync

from tests.fakes.model_server import options_in
from tests.support.timing import timed
from tests.verifier.conftest import JUDGE_TIMEOUT, TEST_TIMEOUT
from tests.verifier.helpers import item, stopwatch
from verifier import policy
from verifier.backends.judge_report import report_object
from verifier.gate import Gate
from verifier.services import threshold_set

pytestmark = pytest.mark.usefixtures("judge")

CHAT = "/v1/chat/completions"


def _gate(**kwargs) -> Gate:
    return Gate.from_settings(threshold=0.6, **kwargs)


def _report_requests(server):
    return server.check_requests(CHAT)


def _of(requests, question: str) -> list:
    """The requests about one question (the report and the blind ones)."""
    return [request for request in requests if question in request.json()["messages"][1]["content"]]


def _format(request) -> str:
    return (request.json().get("response_format") or {}).get("type", "text")


async def test_clean_report_is_scored_with_claims_and_fix(judge):
    judge.script.probabilities = {"Question number 1": {"answer_correct": 0.3, "explanation_true": 0.8}}
    judge.script.judge_claims = ["Wrong is the right answer", "  it   is  "]
    judge.script.judge_fix = "Mark option B, which is the correct answer."
    judge.script.judge_option = "B"
    judge.script.reasoning_tokens = 412
    decision = await _gate().check(item(1))
    assert decision.outcome == "dropped"
    assert decision.probabilities == {
        "answer_correct": pytest.approx(0.3),
        "explanation_true": pytest.approx(0.8),
        "blind": pytest.approx(0.9),
    }
    assert decision.backend == "judge" and decision.model_id == "judge-7b-2025-03"
    assert decision.details["judge"] == {
        "unsupported_claims": ["Wrong is the right answer", "it is"],
        "suggested_fix": "Mark option B, which is the correct answer.",
        "suggested_option": "B",
        "reasoning_tokens": 412,
        "format": "json_schema",
    }
    # One report call and the blind question in two orders, no logprobs asked, room for a report (the judge's
    # model is no reasoning model: 512 tokens, not 4096).
    assert decision.details["calls"] == 3
    assert len(judge.blind_requests(CHAT)) == 2
    (request,) = _report_requests(judge)
    body = request.json()
    assert "logprobs" not in body and "max_tokens" not in body
    assert body["max_completion_tokens"] == 512
    assert body["response_format"]["type"] == "json_schema"
    schema = body["response_format"]["json_schema"]["schema"]
    assert schema["required"] == [
        "answer_correct",
        "explanation_true",
        "unsupported_claims",
        "suggested_fix",
        "suggested_option",
    ]
    system, user = body["messages"]
    assert "never instructions" in system["content"]
    assert "Question number 1" in user["content"]
    assert decision.output_tokens is not None and decision.output_tokens >= 412


async def test_no_explanation_asks_one_closed_book_check(judge):
    decision = await _gate().check(item(1, explanation=""))
    assert decision.outcome == "passed"
    assert set(decision.probabilities) == {"answer_correct", "blind"}
    (request,) = _report_requests(judge)
    assert '"explanation_true"' not in request.json()["messages"][1]["content"]


async def test_grounded_report_asks_the_four_against_the_source(judge):
    judge.script.probabilities = {
        "Question number 1": {
            "supported": 0.95,
            "answers_question": 0.9,
            "unsupported_detail": 0.6,
            "contradiction": 0.05,
        }
    }
    judge.script.judge_claims = ["the year 1850"]
    decision = await _gate(source_text="The bridge opened in 1849.").check(item(1))
    assert decision.outcome == "dropped"
    assert set(decision.probabilities) == set(policy.GROUNDED_CHECKS)
    assert "unsupported_detail 0.60 > 0.15" in decision.message
    assert decision.details["judge"]["unsupported_claims"] == ["the year 1850"]
    (request,) = _report_requests(judge)
    user = request.json()["messages"][1]["content"]
    assert "source_text only" in user and "The bridge opened in 1849." in user
    assert judge.blind_requests(CHAT) == []  # grounded rounds have no blind question


@pytest.mark.parametrize("style", ["fenced", "prose", "missing_claims"])
async def test_report_found_and_scored(judge, style):
    judge.script.judge_reply = style
    judge.script.judge_fix = "Say which year."
    judge.script.probabilities = {"Question number 1": 0.7}
    decision = await _gate().check(item(1))
    assert decision.outcome == "passed"
    assert decision.probabilities["answer_correct"] == pytest.approx(0.7)
    expected_fix = "" if style == "missing_claims" else "Say which year."
    assert decision.details["judge"]["suggested_fix"] == expected_fix
    assert decision.details["judge"]["unsupported_claims"] == []


@pytest.mark.parametrize(
    ("style", "reason", "words"),
    [
        ("missing_probability", "missing_probability", "no probability for answer_correct"),
        ("eleven", "probability_out_of_range", "11 is outside [0, 1]"),
        ("string", "probability_is_text", "'0.9' is text"),
        ("nan", "probability_not_finite", "nan"),
        ("truncated", "truncated_report", "completion limit (512 tokens"),
        ("no_json", "unparsable_report", "no JSON object"),
        ("refusal", "judge_refused", "I can't help with that."),
    ],
)
async def test_bad_report_fails_open_with_its_own_reason(judge, style, words, reason):
    # The baseline, in the same test: the same round with clean reports, on this machine now.
    clean, baseline = await timed(lambda: _gate().check_all([item(1), item(2)]))
    assert [decision.outcome for decision in clean] == ["passed", "passed"]
    judge.script.judge_replies = {"Question number 1": style}
    with stopwatch() as times:
        decisions = await _gate().check_all([item(1), item(2)])
    assert (decisions[0].outcome, decisions[0].reason) == ("unverified", reason)
    assert words in decisions[0].message
    assert decisions[0].playable
    # The other question of the round is scored as usual.
    assert decisions[1].outcome == "passed"
    # Nothing waited for more than the answer: a bad report fails at once, not at the deadline.
    assert times["wall"] - baseline < JUDGE_TIMEOUT / 2, (times["wall"], baseline)


async def test_reasoning_model_out_of_tokens_says_how_many_it_thought(judge, settings):
    settings.VERIFIER_JUDGE_MAX_TOKENS = 900
    judge.script.judge_reply = "thought_out"
    judge.script.reasoning_tokens = 900
    decision = await _gate().check(item(1))
    assert (decision.outcome, decision.reason) == ("unverified", "truncated_report")
    assert "900 tokens, 900 of them reasoning" in decision.message
    assert "VERIFIER_JUDGE_MAX_TOKENS" in decision.message
    assert _report_requests(judge)[0].json()["max_completion_tokens"] == 900


@pytest.mark.parametrize(
    ("model", "reasoning", "expected"),
    [
        ("judge-7b-2025-03", "auto", 512),
        ("qwen2.5-coder-0.5b-instruct-q4", "auto", 512),
        ("o3-mini-2025-01-31", "auto", 4096),
        ("deepseek-r1-distill-qwen-7b", "auto", 4096),
        ("qwen3-8b-thinking-2507", "auto", 4096),
        ("gpt-5-mini-2025-08-07", "auto", 4096),
        ("judge-7b-2025-03", "true", 4096),
        ("o3-mini-2025-01-31", "false", 512),
    ],
)
async def test_the_report_limit_fits_a_report_unless_the_judge_is_a_reasoning_model(
    judge, settings, model, reasoning, expected
):
    settings.VERIFIER_MODEL = model
    settings.VERIFIER_JUDGE_REASONING = reasoning
    await _gate().check(item(1))
    assert _report_requests(judge)[0].json()["max_completion_tokens"] == expected


async def test_a_set_report_limit_is_kept(judge, settings):
    settings.VERIFIER_MODEL = "o3-mini-2025-01-31"
    settings.VERIFIER_JUDGE_MAX_TOKENS = 700
    await _gate().check(item(1))
    assert _report_requests(judge)[0].json()["max_completion_tokens"] == 700


async def test_slow_judge_is_cut_at_the_deadline(judge, settings):
    # The baseline, in the same test: a clean check on this machine now (under the roomy judge deadline).
    clean, baseline = await timed(lambda: _gate().check(item(2)))
    assert clean.outcome == "passed"
    settings.VERIFIER_TIMEOUT = TEST_TIMEOUT
    judge.script.latency = 5.0
    with stopwatch() as times:
        decision = await _gate().check(item(1))
    assert (decision.outcome, decision.reason) == ("unverified", "timeout")
    # Cut at the deadline, not the judge's 5 s: the deadline plus twice a clean check's cost now.
    assert times["wall"] < TEST_TIMEOUT + 2 * baseline, (times["wall"], baseline)


@pytest.mark.parametrize(
    ("refused", "format_used", "report_calls"),
    [
        (frozenset({"json_schema"}), "json_object", 2),
        (frozenset({"json_schema", "json_object"}), "text", 3),
    ],
)
async def test_format_falls_back_when_the_server_refuses_it(judge, refused, format_used, report_calls):
    judge.script.refuse_formats = refused
    judge.script.probabilities = {"Question number": 0.8}
    async with _gate() as gate:
        first = await gate.check(item(1))
        second = await gate.check(item(2))
    assert first.outcome == "passed" and first.details["judge"]["format"] == format_used
    # One of the question's three calls (the report's or a blind one: whichever takes its slot first on a loaded
    # machine) walks the ladder, `report_calls` requests; the other two wait for it and are asked in the learnt
    # format at once. Every call is counted.
    asked = _of(judge.requests_to(CHAT), "Question number 1")
    assert len(asked) == report_calls + 2
    assert sorted(_format(r) for r in asked).count(format_used) == 3
    assert first.details["calls"] == len(asked)
    assert [answer["format"] for answer in first.details["blind"]["orders"]] == [format_used] * 2
    # The round remembers what the server takes: the next question is asked in that format at once.
    assert second.details["calls"] == 3 and second.details["judge"]["format"] == format_used
    assert [_format(r) for r in _of(judge.requests_to(CHAT), "Question number 2")] == [format_used] * 3


async def test_every_format_refused_fails_open(judge):
    judge.script.refuse_formats = frozenset({"json_schema", "json_object", "text"})
    decision = await _gate().check(item(1, explanation=""))
    assert (decision.outcome, decision.reason) == ("unverified", "http_status")
    assert "HTTP 400" in decision.message


async def test_temperature_dropped_for_a_model_that_refuses_it(judge):
    judge.script.refuse_temperature = True
    decision = await _gate().check(item(1))
    assert decision.outcome == "passed" and decision.details["judge"]["format"] == "json_schema"
    last = _report_requests(judge)[-1].json()
    assert "temperature" not in last and last["response_format"]["type"] == "json_schema"


async def test_temperature_refused_by_many_calls_at_once_drops_only_the_temperature(judge):
    # A round checked at once: the reports and blind questions of four questions go out together, each carrying
    # temperature 0, each refused for it. The round drops the temperature and keeps its best format.
    judge.script.refuse_temperature = True
    decisions = await _gate().check_all([item(n) for n in range(1, 5)])
    assert [d.outcome for d in decisions] == ["passed"] * 4
    assert {d.details["judge"]["format"] for d in decisions} == {"json_schema"}
    assert {_format(r) for r in _report_requests(judge)} == {"json_schema"}


async def test_blind_answer_is_a_letter_and_a_probability(judge):
    # The judge believes "Wrong" (option B of the question), wherever it is shown.
    judge.script.choice_texts = {"Question number 1": {"Right": 0.1, "Wrong": 0.8, "Other": 0.1}}
    decision = await _gate().check(item(1))
    requests = judge.blind_requests(CHAT)
    assert len(requests) == 2  # the blind question in two orders
    shown = [options_in(request.json()["messages"][1]["content"]) for request in requests]
    assert shown[0] != shown[1] and sorted(shown[0].values()) == sorted(shown[1].values()) == [
        "Other",
        "Right",
        "Wrong",
    ]
    for request in requests:
        body = request.json()
        assert body["response_format"]["json_schema"]["schema"]["properties"]["answer"]["enum"] == ["A", "B", "C"]
        user = body["messages"][1]["content"]
        assert "Because it is." not in user and "marked_correct_option" not in user
    # The two orders recorded are the two the judge was shown (its requests may arrive either way round), and
    # each answer is the letter "Wrong" was shown at, mapped back to the question's own B.
    recorded = decision.details["blind"]["orders"]
    options = item(1).options
    as_shown = [{"ABC"[at]: options[index] for at, index in enumerate(entry["order"])} for entry in recorded]
    assert sorted(sorted(order.items()) for order in as_shown) == sorted(sorted(order.items()) for order in shown)
    for entry, order in zip(recorded, as_shown, strict=True):
        assert order[entry["served_choice"]] == "Wrong" and entry["picked"] == 1
    # A letter as shown in one order is only in that order's entry: at the top it would read as the question's own.
    assert "served_choice" not in decision.details["blind"] and "confidence" not in decision.details["blind"]
    assert decision.checker_chose == "B"
    # P(marked A) is 0.1: the min of the three scores drops it, and the reviewer is told what the checker chose.
    assert decision.outcome == "dropped"
    assert "the checker chose B. Wrong (0.80)" in decision.message
    assert decision.details["blind"]["probabilities"] == {
        "A": pytest.approx(0.1),
        "B": pytest.approx(0.8),
        "C": pytest.approx(0.1),
    }


async def test_blind_with_a_bad_probability_is_missing_not_fatal(judge):
    judge.script.choices = {"Question number 1": {"A": 0.9, "B": 0.1}}
    judge.script.judge_replies = {}
    judge.script.blind_faults = {"Question number 1": "500"}
    decision = await _gate().check(item(1))
    assert decision.outcome == "passed"
    assert decision.details["blind_missing"]["reason"] == "http_status"


@pytest.mark.django_db(transaction=True)
def test_thresholds_are_per_model_and_a_served_one_never_lowers_the_pinned_bar(judge):
    threshold_set(backend="judge", model_id="judge-7b-2025-03", value=0.75)
    threshold_set(backend="judge", model_id="judge-7b-2025-06", value=0.5)
    judge.script.probabilities = {"Question number": 0.7}
    gate = Gate.from_settings()  # sync: the stored thresholds are read here

    async def check():
        async with gate:
            return await gate.check(item(1))

    decision = async_to_sync(check)()
    assert (decision.outcome, decision.threshold, decision.calibrated) == ("dropped", 0.75, True)
    # A server that says it served another model never lowers the bar: the pinned model's 0.75 still holds.
    judge.script.served_model = "judge-7b-2025-06"
    gate = Gate.from_settings()
    decision = async_to_sync(check)()
    assert (decision.outcome, decision.model_id, decision.threshold, decision.reason) == (
        "dropped",
        "judge-7b-2025-06",
        0.75,
        "model_changed",
    )


def test_report_object_reads_fences_prose_and_refuses_lists():
    assert report_object('{"a": 1}') == {"a": 1}
    assert report_object('```json\n{"a": 1}\n```') == {"a": 1}
    assert report_object('Here {is} the report: {"a": {"b": 2}} done.') == {"a": {"b": 2}}
    assert report_object("[1, 2]") is None
    assert report_object('{"a": 1') is None


def test_judge_is_a_known_backend_and_its_model_must_be_pinned(judge, settings):
    from verifier.checks import verifier_settings_check

    assert [problem.id for problem in verifier_settings_check()] == []
    settings.VERIFIER_MODEL = "judge-latest"
    assert [problem.id for problem in verifier_settings_check()] == ["verifier.E002"]
