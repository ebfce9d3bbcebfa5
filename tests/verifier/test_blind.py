"""The blind question: asked on its own, without the marked answer or the explanation; P(marked) is a third score."""

import json
import logging
import math

import pytest
from asgiref.sync import async_to_sync
from jsonschema import Draft202012Validator

from quiz.models import Provenance
from quiz.services import question_create
from quiz.validation import QuestionData
from review.labelled_set import labelled_set_import
from review.selectors import review_queue
from tests.fakes.model_server import SYSTEMONE_REQUEST_SCHEMA
from tests.verifier.conftest import TEST_TIMEOUT
from tests.verifier.helpers import item
from verifier import policy
from verifier.backends.base import GateFailure
from verifier.backends.llm import letter_probabilities
from verifier.backends.systemone import systemone_blind_body, systemone_choice_probabilities
from verifier.gate import Gate, GateItem
from verifier.prompts import blind_document
from verifier.services import verdict_record

APPLE_CUP = GateItem(
    key="apple",
    text="Which team won the 2021 Apple Cup?",
    options=("Washington", "Washington State", "Oregon", "Oregon State"),
    correct_index=0,
    explanation="Washington beat Washington State 40-13 at Husky Stadium on 26 November 2021.",
)
# The blind checker's answer by option text: it finds "Washington State" at whatever letter it is shown.
APPLE_CUP_BLIND = {"Washington": 0.18, "Washington State": 0.78, "Oregon": 0.02, "Oregon State": 0.02}


def _gate() -> Gate:
    return Gate.from_settings(threshold=0.6)


def _logprobs(pairs: list[tuple[str, float]]) -> dict:
    top = [{"token": token, "logprob": math.log(p)} for token, p in pairs]
    return {"choices": [{"logprobs": {"content": [{**top[0], "top_logprobs": top}]}}]}


# -- what the blind question sees ---------------------------------------------------------------------------------


async def test_systemone_blind_question_is_its_own_call_without_the_marked_answer(systemone):
    systemone.script.choice_texts = {"Apple Cup": APPLE_CUP_BLIND}
    decision = await _gate().check(APPLE_CUP)
    blind = systemone.blind_requests()
    checks = systemone.check_requests()
    # Two orders by default: the options shuffled, then every option moved one place.
    assert len(blind) == 2 and len(checks) == 1
    orders = [entry["order"] for entry in decision.details["blind"]["orders"]]
    shown = [
        {letter: APPLE_CUP.options[index] for letter, index in zip("ABCD", order, strict=True)} for order in orders
    ]
    assert all(orders[1][i] != orders[0][i] for i in range(4))
    bodies = [request.json() for request in blind]
    assert sorted(json.dumps(b["document"]["options"]) for b in bodies) == sorted(json.dumps(o) for o in shown)
    body = bodies[0]
    assert list(Draft202012Validator(SYSTEMONE_REQUEST_SCHEMA).iter_errors(body)) == []
    assert set(body) == {"model", "document", "questions"}
    assert body["document"] == {
        "kind": "multiple-choice quiz question",
        "question": "Which team won the 2021 Apple Cup?",
        "options": body["document"]["options"],
    }
    assert sorted(body["document"]["options"].values()) == sorted(APPLE_CUP.options)
    assert body["questions"] == {
        "blind": {
            "type": "choice",
            "instructions": "Which option is the factually correct answer to the quiz question?",
            "criteria": body["document"]["options"],
        }
    }
    sent = json.dumps(body)
    assert "marked" not in sent and "Husky Stadium" not in sent and "40-13" not in sent
    # The checks' call is unchanged: it still sees the marked option and the explanation, and no choice question.
    check_body = checks[0].json()
    assert check_body["document"]["marked_correct_option"] == "A. Washington"
    assert all(question["type"] == "noul" for question in check_body["questions"].values())


async def test_llm_blind_question_is_its_own_call_without_the_marked_answer(llm):
    await _gate().check(APPLE_CUP)
    blind = llm.blind_requests("/v1/chat/completions")
    assert len(blind) == 2 and len(llm.check_requests("/v1/chat/completions")) == 2
    for request in blind:
        body = request.json()
        assert body["max_tokens"] == 1 and body["logprobs"] is True and body["top_logprobs"] == 20
        system, user = body["messages"]
        assert "one letter" in system["content"] and "never instructions" in system["content"]
        content = user["content"]
        assert "Which team won the 2021 Apple Cup?" in content
        assert all(f'": "{option}"' in content for option in APPLE_CUP.options)
        assert "marked" not in content and "Husky Stadium" not in content and "explanation" not in content
        assert "Answer with one letter: A, B, C or D." in content


def test_blind_document_never_holds_a_marked_answer_or_explanation():
    document = blind_document(text="  Which?\n", options=("x", "y"))
    assert document == {"kind": "multiple-choice quiz question", "question": "Which?", "options": {"A": "x", "B": "y"}}
    body = systemone_blind_body(model="jev-1.13.0", document_field="document", document=document)
    assert list(Draft202012Validator(SYSTEMONE_REQUEST_SCHEMA).iter_errors(body)) == []


# -- reading the answer -------------------------------------------------------------------------------------------


def test_option_letter_variants_add_up_and_missing_letters_count_zero():
    payload = _logprobs([(" B", 0.5), ("B", 0.2), ("b", 0.05), ("A", 0.1), ("(A)", 0.05), ("Because", 0.05)])
    probabilities, mass = letter_probabilities(payload, letters=("A", "B", "C", "D"))
    assert mass == pytest.approx(0.9)
    assert probabilities == {
        "A": pytest.approx(0.15 / 0.9),
        "B": pytest.approx(0.75 / 0.9),
        "C": 0.0,
        "D": 0.0,
    }


def test_letters_outside_the_options_are_ignored():
    payload = _logprobs([("C", 0.6), ("A", 0.3), ("B", 0.1)])
    probabilities, _ = letter_probabilities(payload, letters=("A", "B"))
    assert probabilities == {"A": pytest.approx(0.75), "B": pytest.approx(0.25)}


def test_tokenizer_markers_are_stripped_from_letters():
    payload = _logprobs([("\u0120C", 0.6), ("\u2581A", 0.2)])
    probabilities, _ = letter_probabilities(payload, letters=("A", "B", "C"))
    assert probabilities["C"] == pytest.approx(0.75) and probabilities["B"] == 0.0


def test_no_option_letter_is_a_failure():
    with pytest.raises(GateFailure) as caught:
        letter_probabilities(_logprobs([("The", 0.6), ("Option", 0.3)]), letters=("A", "B"))
    assert caught.value.reason == "no_option_letter"


def test_systemone_choice_reply_leaves_letters_out_and_adds_others():
    payload = {"answers": {"blind": {"type": "choice", "probabilities": {"B": 0.7, "A": 0.2, "Z": 0.1}}}}
    assert systemone_choice_probabilities(payload, letters=("A", "B", "C")) == {"A": 0.2, "B": 0.7, "C": 0.0}
    with pytest.raises(GateFailure) as caught:
        systemone_choice_probabilities({"answers": {"blind": {"probabilities": {"Z": 1.0}}}}, letters=("A", "B"))
    assert caught.value.reason == "missing_probability"


@pytest.mark.parametrize("letter_format", ["{}", " {}", "{}.", " {})"])
async def test_llm_letter_variants_map_to_the_right_option(llm, letter_format):
    llm.script.letter_format = letter_format
    # C and D (Oregon, Oregon State) are not among the top tokens.
    llm.script.choice_texts = {"Apple Cup": {"Washington": 0.2, "Washington State": 0.8}}
    decision = await _gate().check(APPLE_CUP)
    assert decision.details["blind"]["probabilities"] == {
        "A": pytest.approx(0.2),
        "B": pytest.approx(0.8),
        "C": 0.0,
        "D": 0.0,
    }
    assert decision.probabilities["blind"] == pytest.approx(0.2)
    assert decision.checker_chose == "B"


async def test_llm_lower_case_letters_count(llm, settings):
    settings.VERIFIER_BLIND_ORDERS = 1  # the same tokens whatever is shown: in two orders, a position answer
    llm.script.blind_top_logprobs = [("b", math.log(0.6)), (" a", math.log(0.3)), ("The", math.log(0.1))]
    decision = await _gate().check(APPLE_CUP)
    (shown,) = decision.details["blind"]["orders"]
    assert shown["probabilities_shown"]["B"] == pytest.approx(2 / 3) and shown["picked_shown"] == "B"
    assert decision.details["blind"]["letter_mass"] == pytest.approx(0.9)


# -- the third score ----------------------------------------------------------------------------------------------


async def test_p_marked_enters_the_min_and_the_checker_chose_is_recorded(systemone):
    systemone.script.probabilities = {"Apple Cup": {"answer_correct": 0.77, "explanation_true": 0.81}}
    systemone.script.choice_texts = {"Apple Cup": APPLE_CUP_BLIND}
    decision = await _gate().check(APPLE_CUP)
    assert decision.probabilities == {"answer_correct": 0.77, "explanation_true": 0.81, "blind": 0.18}
    assert (decision.outcome, decision.score, decision.reason) == ("dropped", 0.18, "below_threshold")
    assert decision.checker_chose == "B"
    assert decision.details["checker_chose_text"] == "Washington State"
    assert decision.details["checker_chose_probability"] == 0.78
    assert decision.details["blind"]["marked"] == "A" and decision.details["calls"] == 3
    assert "the checker chose B. Washington State (0.78)" in decision.message
    assert decision.details["checks"] == ["answer_correct", "explanation_true", "blind"]


async def test_the_blind_score_alone_does_not_hide_a_low_answer_score(systemone):
    systemone.script.probabilities = {"Question number 1": {"answer_correct": 0.3, "explanation_true": 0.9}}
    decision = await _gate().check(item(1))
    assert (decision.outcome, decision.score) == ("dropped", 0.3)
    assert decision.checker_chose == ""


async def test_a_pass_whose_checker_chose_another_option_is_marked_for_review(systemone):
    # A low calibrated threshold lets it pass; the disagreement still says so.
    systemone.script.choice_texts = {"Question number 1": {"Right": 0.3, "Wrong": 0.6, "Other": 0.1}}
    decision = await Gate.from_settings(threshold=0.25).check(item(1))
    assert (decision.outcome, decision.reason, decision.checker_chose) == ("passed", "checker_disagrees", "B")


def test_disagreement_needs_a_confident_pick_that_beats_the_marked_option():
    def reading(probabilities, marked="A"):
        return policy.blind_reading(probabilities=probabilities, marked=marked, disagree_at=0.5)

    assert reading({"A": 0.2, "B": 0.8}).disagrees is True
    assert reading({"A": 0.3, "B": 0.45, "C": 0.25}).disagrees is False  # another pick, but not confident
    assert reading({"A": 0.5, "B": 0.5}).disagrees is False  # a tie goes to the marked option
    assert reading({"A": 0.5, "B": 0.5}).pick == "A"
    assert reading({"A": 0.9, "B": 0.1}).disagrees is False
    assert policy.normalised({"A": 0.2, "B": 0.2}, letters=("A", "B", "C")) == {"A": 0.5, "B": 0.5, "C": 0.0}
    assert policy.normalised({"Z": 1.0}, letters=("A", "B")) is None


async def test_blind_off_by_setting_asks_nothing_blind(systemone, settings):
    settings.VERIFIER_BLIND = False
    decision = await _gate().check(item(1))
    assert systemone.blind_requests() == [] and len(systemone.check_requests()) == 1
    assert "blind" not in decision.probabilities and decision.details["calls"] == 1


async def test_off_backend_asks_nothing(settings, model_server):
    settings.VERIFIER_BACKEND = "off"
    gate = _gate()
    assert gate.blind_enabled is False
    decision = await gate.check(item(1))
    assert decision.outcome == "unchecked" and model_server.requests == []
    assert (await gate.blind_check(item(1))).failure.reason == "blind_off"


# -- failing open -------------------------------------------------------------------------------------------------

BLIND_FAULTS = [
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
    ("trickle", "timeout"),
    ("close", "connection_closed"),
]


@pytest.mark.parametrize(("fault", "reason"), BLIND_FAULTS, ids=[fault for fault, _ in BLIND_FAULTS])
async def test_a_failed_blind_call_scores_on_the_other_checks_and_says_so(systemone, fault, reason, caplog):
    systemone.script.blind_fault = fault
    systemone.script.probabilities = {"Question number 1": {"answer_correct": 0.8, "explanation_true": 0.7}}
    with caplog.at_level(logging.INFO, logger="verifier"):
        async with _gate() as gate:
            decision = await gate.check(item(1))
    assert (decision.outcome, decision.score) == ("passed", 0.7)
    assert decision.probabilities == {"answer_correct": 0.8, "explanation_true": 0.7}
    assert decision.reason == f"blind_{reason}"
    assert decision.details["blind_missing"]["reason"] == reason
    assert f"blind check missing: {reason}" in decision.message
    warnings = [r.getMessage() for r in caplog.records if r.name == "verifier" and r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "blind check missing" in warnings[0] and reason in warnings[0]
    infos = [r.getMessage() for r in caplog.records if r.name == "verifier" and r.levelno == logging.INFO]
    assert "passed=1" in infos[0] and "blind_missing=1" in infos[0]


async def test_a_failed_blind_call_does_not_save_a_low_scoring_question(systemone):
    systemone.script.blind_fault = "500"
    systemone.script.probabilities = {"Question number 1": 0.4}
    decision = await _gate().check(item(1))
    assert (decision.outcome, decision.reason, decision.score) == ("dropped", "below_threshold", 0.4)
    assert decision.blind_missing


async def test_a_slow_blind_call_is_cut_at_the_deadline(systemone, settings):
    # The baseline, in the same test: what a clean check (its blind calls answered at once) costs now, under a
    # roomy deadline so that a busy machine slows it rather than cutting it short.
    settings.VERIFIER_TIMEOUT = 30.0
    async with _gate() as gate:
        clean = await gate.check(item(2))
    assert clean.outcome == "passed" and not clean.blind_missing
    settings.VERIFIER_TIMEOUT = TEST_TIMEOUT
    systemone.script.blind_latency = 5
    async with _gate() as gate:
        decision = await gate.check(item(1))
    assert (decision.outcome, decision.reason) == ("passed", "blind_timeout")
    # Cut at the call's deadline, not the server's 5 s: the deadline plus twice a clean check's cost now.
    assert decision.latency_ms <= TEST_TIMEOUT * 1000 + 2 * clean.latency_ms, (decision.latency_ms, clean.latency_ms)


async def test_when_the_checks_fail_the_question_is_unverified_and_keeps_what_the_blind_call_said(systemone):
    systemone.script.check_faults = {"Question number 1": "500"}
    systemone.script.choice_texts = {"Question number 1": {"Right": 0.1, "Wrong": 0.9}}
    decision = await _gate().check(item(1))
    assert (decision.outcome, decision.reason, decision.score) == ("unverified", "http_status", None)
    assert decision.checker_chose == "B" and decision.probabilities == {}


async def test_both_calls_failing_is_one_unverified_question_and_one_warning(systemone, caplog):
    systemone.script.fault = "500"
    with caplog.at_level(logging.WARNING, logger="verifier"):
        decision = await _gate().check(item(1))
    assert (decision.outcome, decision.reason) == ("unverified", "http_status")
    assert decision.details == {}
    assert len([r for r in caplog.records if r.name == "verifier"]) == 1


async def test_an_unexpected_error_in_the_blind_call_fails_open(systemone):
    gate = _gate()

    async def broken(**kwargs):
        raise ZeroDivisionError("boom")

    gate.backend.ask_blind = broken
    decision = await gate.check(item(1))
    assert (decision.outcome, decision.reason) == ("passed", "blind_unexpected_error")
    await gate.aclose()


@pytest.mark.parametrize(("fault", "reason"), [("no_logprobs", "no_logprobs"), ("500", "http_status")])
async def test_llm_blind_failures_fail_open_too(llm, fault, reason):
    llm.script.blind_fault = fault
    decision = await _gate().check(item(1))
    assert (decision.outcome, decision.reason) == ("passed", f"blind_{reason}")


async def test_llm_blind_answer_without_any_letter_fails_open(llm):
    llm.script.blind_top_logprobs = [("The", math.log(0.7)), ("Option", math.log(0.2))]
    decision = await _gate().check(item(1))
    assert (decision.outcome, decision.reason) == ("passed", "blind_no_option_letter")


# -- what the reviewer sees ---------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_the_checker_chose_is_shown_in_the_review_admin(systemone, admin_client):
    systemone.script.probabilities = {"Apple Cup": {"answer_correct": 0.77, "explanation_true": 0.81}}
    systemone.script.choice_texts = {"Apple Cup": APPLE_CUP_BLIND}
    decision = async_to_sync(_gate().check)(APPLE_CUP)
    data = QuestionData(text=APPLE_CUP.text, options=APPLE_CUP.options, correct_index=0, explanation="x")
    question = question_create(data=data, provenance=Provenance.MODEL, model_id="writer-1")
    verdict_record(question_id=question.pk, decision=decision)
    page = admin_client.get(f"/admin/review/reviewitem/{question.pk}/change/").content.decode()
    assert "The checker chose B. Washington State</strong> (78%)" in page
    assert "the quiz marks A. Washington (18%)" in page
    assert "P(marked A) 18%; the checker chose B. Washington State (78%)" in page
    listing = admin_client.get("/admin/review/reviewitem/?checker_chose=yes").content.decode()
    assert f'value="{question.pk}"' in listing and "checker chose another option" in listing


@pytest.mark.django_db
def test_a_missing_blind_check_is_shown_and_queued(admin_client):
    question = question_create(
        data=QuestionData(text="Q?", options=("a", "b"), correct_index=0), provenance=Provenance.MODEL
    )
    from verifier.gate import GateDecision

    verdict_record(
        question_id=question.pk,
        decision=GateDecision(
            key="q",
            outcome="passed",
            score=0.9,
            threshold=0.6,
            probabilities={"answer_correct": 0.9},
            reason="blind_timeout",
            message="blind check missing: timeout: no complete answer within 6 s",
            latency_ms=10,
            backend="systemone",
            model_id="jev-1.13.0",
            details={"blind_missing": {"reason": "timeout", "message": "no complete answer within 6 s"}},
        ),
    )
    assert question.pk in review_queue().values_list("pk", flat=True)
    page = admin_client.get(f"/admin/review/reviewitem/{question.pk}/change/").content.decode()
    assert "The blind check is missing (timeout)" in page and "missing (timeout)" in page


# -- the labelled set ---------------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_a_labelled_set_with_blind_answers_imports_p_marked_as_the_third_check():
    from pathlib import Path

    from review.labelled_set import labelled_set_items
    from review.selectors import labelled_scores

    data = json.loads((Path(__file__).parent / "data" / "blind_labelled.json").read_text())
    assert "Illustrative" in data["about"]
    result = labelled_set_import(items=labelled_set_items(data))
    assert result.created == 28
    scores = {item.question_id: item for item in labelled_scores()}
    apple = next(item for item in scores.values() if item.probabilities.get("answer_correct") == 0.77)
    assert apple.probabilities["blind"] == pytest.approx(0.18 / 1.0, abs=1e-6)
    assert apple.score == pytest.approx(0.18) and apple.label == "defective"


def test_the_bench_replays_the_shipped_set():
    from bench.gate_quality import DEFAULT_SET, replay, report

    data = json.loads(DEFAULT_SET.read_text())
    items = [replay(raw, n, disagree_at=0.5) for n, raw in enumerate(data["items"], start=1)]
    (result,) = report(items, threshold=0.6)
    base, blind = result["min(answer, explanation)"], result["min(answer, explanation, blind)"]
    assert (base["threshold"]["caught"], base["threshold"]["good_dropped"]) == (5, 0)
    assert (blind["threshold"]["caught"], blind["threshold"]["good_dropped"]) == (9, 2)
    assert len(result["blind_adds"]) == 4 and len(result["missed_by_both"]) == 2
