"""Every kind but a poll checked by the gate: a host's round of one question of each kind sent through "Check my
questions" to a scripted checker on loopback (System One, real HTTP). What each kind asks (the texts, options and
marked option the checker is sent), the question's verdict the worst of its asks, fail-open on a dead or
erroring checker, a poll never sent; the writer's path (`question_check` on a question's data); and the combining
rule on its own (`question_decision`)."""

from collections import Counter

import pytest
from asgiref.sync import sync_to_async

from lobby.services import room_create
from quiz.checking.kind_checks import NOT_ASKED, asked_question, question_check, question_decision
from quiz.checking.rounds import round_check_job_create, round_check_marks
from quiz.generation.runner import job_run
from quiz.kinds import GateAsk
from quiz.kinds.base import CLAIMS_ONLY
from quiz.models import GenerationJob, GenerationStatus, Question, Round
from quiz.validation import QuestionData, clean_question
from review.admin.evidence import blind_evidence
from tests.factories import RoundFactory
from verifier.gate import Gate, GateDecision
from verifier.models import Verdict

pytestmark = pytest.mark.django_db(transaction=True)

OWNER = "kind-checks-owner"

RAW = {
    "single": {
        "text": "Which planet is known as the Red Planet?",
        "options": ["Venus", "Mars", "Jupiter"],
        "correct_index": 1,
        "explanation": "Iron oxide in its dust makes Mars look red.",
    },
    "true_false": {
        "kind": "true_false",
        "text": "The Great Wall of China can be seen from the Moon with the naked eye.",
        "answer": False,
        "explanation": "The wall is only a few metres wide.",
    },
    "multi": {
        "kind": "multi",
        "text": "Which of these numbers are prime?",
        "options": ["2", "9", "11"],
        "correct_indexes": [0, 2],
        "explanation": "9 = 3 × 3; 2 and 11 can be divided only by 1 and themselves.",
    },
    "typed": {
        "kind": "typed",
        "text": "In which country is the city of Marrakesh?",
        "answers": ["Morocco", "Kingdom of Morocco"],
        "explanation": "Marrakesh is one of Morocco's four imperial cities.",
    },
    "order": {
        "kind": "order",
        "text": "Put these planets in order of their distance from the Sun, nearest first.",
        "items": ["Mercury", "Venus", "Earth"],
        "explanation": "Mercury, Venus and Earth are the three innermost planets.",
    },
    "number": {
        "kind": "number",
        "text": "How high is Mount Everest, in metres?",
        "answer": 8849,
        "tolerance": 50,
        "min": 0,
        "max": 10000,
        "unit": "m",
        "explanation": "The 2020 survey measured 8,848.86 m.",
    },
    "exact_number": {
        "kind": "number",
        "text": "In which year did Apollo 11 land on the Moon?",
        "answer": 1969,
        "min": 1950,
        "max": 2000,
        "explanation": "The lunar module Eagle landed on 20 July 1969.",
    },
    "slide": {
        "kind": "slide",
        "text": "Round two: the planets",
        "explanation": "Jupiter is the largest planet of the Solar System.",
    },
    "open": {
        "kind": "open",
        "text": "One word for the Moon?",
        "max_answers": 2,
        "explanation": "The Moon is Earth's only natural satellite.",
    },
    "poll": {
        "kind": "poll",
        "text": "Which would you rather explore?",
        "options": ["The deep ocean", "Outer space"],
        "explanation": "A poll: there is no right answer.",
    },
}
NAMES = list(RAW)

# What the checker is sent per question: (question text, options, marked option as the document says it).
YES, NO = "A. Yes", "B. No"
EXPECTED_ASKS = {
    "single": [("Which planet is known as the Red Planet?", ("Venus", "Mars", "Jupiter"), "B. Mars")],
    "true_false": [
        ("The Great Wall of China can be seen from the Moon with the naked eye.", ("True", "False"), "B. False")
    ],
    "multi": [
        ("Which of these numbers are prime? — Is “2” one of the right answers?", ("Yes", "No"), YES),
        ("Which of these numbers are prime? — Is “9” one of the right answers?", ("Yes", "No"), NO),
        ("Which of these numbers are prime? — Is “11” one of the right answers?", ("Yes", "No"), YES),
    ],
    "typed": [
        ("In which country is the city of Marrakesh? — Is “Morocco” a right answer?", ("Yes", "No"), YES),
        ("In which country is the city of Marrakesh? — Is “Kingdom of Morocco” a right answer?", ("Yes", "No"), YES),
    ],
    "order": [
        (
            "Put these planets in order of their distance from the Sun, nearest first. — "
            "Is this the right order: Mercury → Venus → Earth?",
            ("Yes", "No"),
            YES,
        )
    ],
    "number": [("How high is Mount Everest, in metres? — Is 8849 m right (within ± 50)?", ("Yes", "No"), YES)],
    "exact_number": [("In which year did Apollo 11 land on the Moon? — Is 1969 right?", ("Yes", "No"), YES)],
    # A slide and an open question: their claims only, there is no answer to check.
    "slide": [(f"Round two: the planets — {CLAIMS_ONLY}", ("Yes", "No"), YES)],
    "open": [(f"One word for the Moon? — {CLAIMS_ONLY}", ("Yes", "No"), YES)],
    "poll": [],
}


def data(name: str) -> QuestionData:
    return clean_question(RAW[name])


def kinds_round() -> Round:
    return RoundFactory(title="Every kind", owner_key=OWNER, questions=[data(name) for name in NAMES])


def questions_of(round_: Round) -> dict[str, Question]:
    entries = round_.entries.select_related("question").order_by("position")
    return dict(zip(NAMES, (entry.question for entry in entries), strict=True))


def check(round_: Round) -> GenerationJob:
    job = round_check_job_create(round_=round_, owner_key=OWNER)
    job_run(job_id=job.pk)
    job.refresh_from_db()
    return job


def sent(server) -> Counter:
    """Every check request's question as the checker read it: (text, options, marked, explanation)."""
    documents = [request.json()["document"] for request in server.check_requests()]
    return Counter(
        (d["question"], tuple(d["options"].values()), d["marked_correct_option"], d.get("explanation", ""))
        for d in documents
    )


def verdict_of(question: Question) -> Verdict:
    return Verdict.objects.get(question=question)


def test_each_kind_sends_its_asks_and_a_poll_is_never_sent(gate_on):
    round_ = kinds_round()
    job = check(round_)
    assert job.status == GenerationStatus.DONE, job.message
    # One verdict per checked question, not per ask; the poll is left out.
    assert (job.checked, job.dropped) == (len(NAMES) - 1, 0)
    expected = Counter(
        (text, options, marked, RAW[name]["explanation"])
        for name, asks in EXPECTED_ASKS.items()
        for text, options, marked in asks
    )
    assert sent(gate_on) == expected
    # The blind question is asked of every ask (two options or more), and of nothing else.
    blind_texts = {request.json()["document"]["question"] for request in gate_on.blind_requests()}
    assert blind_texts == {text for asks in EXPECTED_ASKS.values() for text, _options, _marked in asks}
    poll = RAW["poll"]["text"]
    assert not any(poll in request.body.decode() for request in gate_on.requests)

    questions = questions_of(round_)
    assert not Verdict.objects.filter(question=questions["poll"]).exists()
    for name in NAMES[:-1]:
        verdict = verdict_of(questions[name])
        assert (verdict.outcome, verdict.score) == ("passed", 0.9), name
        asks = verdict.details["asks"]
        assert [(a["text"], tuple(a["options"])) for a in asks] == [(t, o) for t, o, _m in EXPECTED_ASKS[name]]
        assert [a["outcome"] for a in asks] == ["passed"] * len(asks)
    # The audit of a slide and of an open question says what was checked: their claims, no answer.
    for name in ("slide", "open"):
        assert [a["claim"] for a in verdict_of(questions[name]).details["asks"]] == [CLAIMS_ONLY]
        assert verdict.details["calls"] == sum(a["details"]["calls"] for a in asks)
    # Each question's mark in the editor: the poll's "not checked".
    marks = round_check_marks(round_=round_)
    assert [mark.mark if mark else None for mark in marks] == ["passed"] * (len(NAMES) - 1) + [None]
    round_.refresh_from_db()
    assert round_.check_label == "checked: 1 not checked"


def test_the_worst_ask_decides_each_question(gate_on):
    gate_on.script.probabilities = {
        # multi: two asks pass, the lowest of them is the score.
        "Is “9” one of": 0.7,
        "Is “11” one of": 0.65,
        # typed: the second accepted answer is doubted, the first is not.
        "“Kingdom of Morocco”": 0.3,
        "right order": 0.2,
        "Is 8849 m right": 0.25,
        "Red Planet": 0.35,
        "Great Wall": 0.15,
        # A slide whose claims the checker doubts is dropped like any question.
        "Round two: the planets": 0.2,
    }
    round_ = kinds_round()
    job = check(round_)
    assert job.status == GenerationStatus.DONE, job.message
    questions = questions_of(round_)
    found = {name: verdict_of(questions[name]) for name in NAMES[:-1]}
    threshold = found["single"].threshold
    assert 0.35 < threshold <= 0.65
    assert {name: (v.outcome, v.score) for name, v in found.items()} == {
        "single": ("dropped", 0.35),
        "true_false": ("dropped", 0.15),
        "multi": ("passed", 0.65),
        "typed": ("dropped", 0.3),
        "order": ("dropped", 0.2),
        "number": ("dropped", 0.25),
        "exact_number": ("passed", 0.9),
        "slide": ("dropped", 0.2),
        "open": ("passed", 0.9),
    }
    assert job.dropped == 6
    multi = found["multi"]
    assert [a["score"] for a in multi.details["asks"]] == [0.9, 0.7, 0.65]
    assert multi.details["decided_by"] == 2
    # The deciding ask's own scores are the question's.
    assert multi.probabilities == multi.details["asks"][2]["probabilities"]
    typed = found["typed"]
    assert [a["outcome"] for a in typed.details["asks"]] == ["passed", "dropped"]
    # The host is told which ask the checker doubted.
    assert typed.message.startswith("Is “Kingdom of Morocco” a right answer? — score 0.30 < threshold")
    assert found["order"].message.startswith("Is this the right order: Mercury → Venus → Earth? — score 0.20")
    # A question that is its own ask says it as before.
    assert found["single"].message.startswith("score 0.35 < threshold")
    # Nothing is removed: the host decides.
    assert round_.entries.count() == len(NAMES)


def test_with_the_checker_down_every_checked_kind_is_unverified_and_the_round_plays(gate_on, settings):
    settings.VERIFIER_BASE_URL = "http://127.0.0.1:9"  # nothing listens there
    settings.VERIFIER_TIMEOUT = 1.0
    round_ = kinds_round()
    job = check(round_)
    assert job.status == GenerationStatus.DONE, job.message
    assert (job.checked, job.dropped) == (len(NAMES) - 1, 0)
    questions = questions_of(round_)
    for name in NAMES[:-1]:
        verdict = verdict_of(questions[name])
        assert verdict.outcome == "unverified" and verdict.score is None, name
        assert {a["outcome"] for a in verdict.details["asks"]} == {"unverified"}, name
    assert not Verdict.objects.filter(question=questions["poll"]).exists()
    round_.refresh_from_db()
    assert round_.check_status == "partly_unverified"
    assert room_create(round_id=round_.pk, timer_seconds=20).room.question_count == len(NAMES)


def test_an_ask_the_checker_fails_leaves_its_question_unverified_unless_another_ask_was_dropped(gate_on):
    gate_on.script.check_faults = {"Is “9” one of": "500", "“Kingdom of Morocco”": "500"}
    gate_on.script.probabilities = {"Is “Morocco” a right": 0.2}
    round_ = kinds_round()
    job = check(round_)
    assert job.status == GenerationStatus.DONE, job.message
    questions = questions_of(round_)
    multi = verdict_of(questions["multi"])
    # Two asks passed, one failed open: the question is unverified (still played), with the failure's reason.
    assert [a["outcome"] for a in multi.details["asks"]] == ["passed", "unverified", "passed"]
    assert (multi.outcome, multi.score, multi.details["decided_by"]) == ("unverified", None, 1)
    assert multi.reason == multi.details["asks"][1]["reason"] and multi.reason
    typed = verdict_of(questions["typed"])
    # One ask dropped, the other failed open: the checker's "no" stands.
    assert [a["outcome"] for a in typed.details["asks"]] == ["dropped", "unverified"]
    assert (typed.outcome, typed.score) == ("dropped", 0.2)
    assert job.dropped == 1
    others = {verdict_of(questions[name]).outcome for name in NAMES[:-1] if name not in ("multi", "typed")}
    assert others == {"passed"}


def test_the_reviewer_reads_a_blind_disagreement_against_the_ask_that_decided(gate_on):
    # The blind checker says 9 is prime (Yes, where No is marked) and the wall can be seen (True, where False is).
    gate_on.script.choice_texts = {"Is “9” one of": {"Yes": 0.95, "No": 0.05}, "Great Wall": {"True": 0.9}}
    round_ = kinds_round()
    check(round_)
    questions = questions_of(round_)
    multi = verdict_of(questions["multi"])
    assert multi.outcome == "dropped" and multi.details["decided_by"] == 1
    assert multi.message.startswith("Is “9” one of the right answers? — ")
    assert "the checker chose A. Yes" in multi.message
    assert blind_evidence(question=questions["multi"]) == {
        "chose": "A",
        "chose_text": "Yes",
        "chose_probability": "95%",
        "marked": "B",
        "marked_text": "No",
        "marked_probability": "5%",
        "asked": "Is “9” one of the right answers?",
    }
    true_false = blind_evidence(question=questions["true_false"])
    assert (true_false["chose_text"], true_false["marked_text"], true_false["asked"]) == ("True", "False", "")


# -- the writer's path: a question's data, checked on the round's gate ------------------------------------------


async def test_a_written_question_of_any_kind_is_checked_by_its_asks_and_a_poll_is_not_sent(gate_on):
    gate_on.script.probabilities = {"Is “11” one of": 0.3}
    gate = await sync_to_async(Gate.from_settings)()
    async with gate:
        multi = await question_check(gate, asked_question(data("multi"), key="a1-1", language="English"))
        poll = await question_check(gate, asked_question(data("poll"), key="a1-2", language="English"))
    assert (multi.key, multi.outcome, multi.score) == ("a1-1", "dropped", 0.3)
    assert not multi.playable
    assert [a["key"] for a in multi.details["asks"]] == ["a1-1.1", "a1-1.2", "a1-1.3"]
    documents = [request.json()["document"] for request in gate_on.check_requests()]
    assert sorted(d["question"] for d in documents) == sorted(t for t, _o, _m in EXPECTED_ASKS["multi"])
    assert {d["language"] for d in documents} == {"English"}
    assert (poll.key, poll.outcome, poll.reason, poll.playable) == ("a1-2", "unchecked", NOT_ASKED, True)
    assert not any("rather explore" in request.body.decode() for request in gate_on.requests)


async def test_a_written_question_fails_open_on_a_dead_checker(gate_on, settings):
    settings.VERIFIER_BASE_URL = "http://127.0.0.1:9"
    settings.VERIFIER_TIMEOUT = 1.0
    gate = await sync_to_async(Gate.from_settings)()
    async with gate:
        typed = await question_check(gate, asked_question(data("typed"), key="a1-1"))
    assert typed.outcome == "unverified" and typed.playable and typed.score is None


# -- the combining rule on its own ------------------------------------------------------------------------------


def decision(outcome: str, score: float | None, *, reason: str = "", message: str = "", **fields) -> GateDecision:
    return GateDecision(
        key="ask",
        outcome=outcome,
        score=score,
        threshold=0.6,
        probabilities={} if score is None else {"answer_correct": score},
        reason=reason,
        message=message,
        latency_ms=fields.pop("latency_ms", 10),
        backend="systemone",
        model_id="jev-1.13.0",
        **fields,
    )


def ask(claim: str = "") -> GateAsk:
    return GateAsk(text=f"Q — {claim}", options=("Yes", "No"), correct_index=0, claim=claim)


def test_the_lowest_score_decides_a_pass_and_one_drop_drops():
    passed = question_decision("q1", [(ask("a"), decision("passed", 0.8)), (ask("b"), decision("passed", 0.7))])
    assert (passed.key, passed.outcome, passed.score, passed.details["decided_by"]) == ("q1", "passed", 0.7, 1)
    dropped = question_decision(
        "q1",
        [
            (ask("a"), decision("passed", 0.95)),
            (ask("b"), decision("dropped", 0.5, reason="below_threshold", message="score 0.50 < threshold 0.60")),
            (ask("c"), decision("dropped", 0.1, reason="below_threshold", message="score 0.10 < threshold 0.60")),
        ],
    )
    assert (dropped.outcome, dropped.score, dropped.reason) == ("dropped", 0.1, "below_threshold")
    assert dropped.message == "c — score 0.10 < threshold 0.60"
    assert [a["claim"] for a in dropped.details["asks"]] == ["a", "b", "c"]


def test_a_failure_never_drops_a_question_but_does_not_hide_a_drop():
    timeout = decision("unverified", None, reason="timeout", message="no answer in 1 s")
    unverified = question_decision("q1", [(ask("a"), decision("passed", 0.9)), (ask("b"), timeout)])
    assert (unverified.outcome, unverified.score, unverified.reason, unverified.playable) == (
        "unverified",
        None,
        "timeout",
        True,
    )
    # A checker's failure is said as the checker said it, not as an ask's claim.
    assert unverified.message == "no answer in 1 s"
    dropped = question_decision("q1", [(ask("a"), timeout), (ask("b"), decision("dropped", 0.2))])
    assert dropped.outcome == "dropped" and not dropped.playable
    off = decision("unchecked", None, reason="gate_off")
    assert question_decision("q1", [(ask("a"), off), (ask("b"), off)]).outcome == "unchecked"


def test_a_flagged_pass_keeps_its_question_in_the_review_queue():
    flagged = decision("passed", 0.9, reason="checker_disagrees", message="the checker chose B. No (0.80)")
    combined = question_decision("q1", [(ask("a"), decision("passed", 0.7)), (ask("b"), flagged)])
    assert (combined.score, combined.reason) == (0.7, "checker_disagrees")
    assert combined.message == "b — the checker chose B. No (0.80)"


def test_the_asks_time_tokens_and_calls_add_up():
    first = decision("passed", 0.9, latency_ms=40, input_tokens=100, output_tokens=4, details={"calls": 3})
    second = decision("passed", 0.8, latency_ms=70, input_tokens=120, output_tokens=4, details={"calls": 3})
    combined = question_decision("q1", [(ask("a"), first), (ask("b"), second)])
    assert (combined.latency_ms, combined.input_tokens, combined.output_tokens) == (70, 220, 8)
    assert combined.details["calls"] == 6
    lone = question_decision("q1", [(GateAsk(text="Q", options=("A", "B"), correct_index=0), first)])
    # A question that is its own ask: its decision as the gate gave it, and its ask on record.
    assert (lone.score, lone.message, lone.details["calls"], len(lone.details["asks"])) == (0.9, "", 3, 1)
    with pytest.raises(ValueError):
        question_decision("q1", [])


def test_the_asks_usage_adds_up_by_role():
    def used(tokens: int, *, estimated: bool = False) -> dict:
        usage = {"model": "jev-1.13.0", "calls": 1, "input_tokens": tokens, "output_tokens": 2, "estimated": estimated}
        return {"usage": {"checker": usage, "blind": {**usage, "calls": 2}}}

    first = decision("passed", 0.9, details=used(100))
    second = decision("passed", 0.8, details=used(120, estimated=True))
    combined = question_decision("q1", [(ask("a"), first), (ask("b"), second)])
    assert combined.details["usage"]["checker"] == {
        "model": "jev-1.13.0",
        "calls": 2,
        "input_tokens": 220,
        "output_tokens": 4,
        "estimated": True,
    }
    assert combined.details["usage"]["blind"]["calls"] == 4
