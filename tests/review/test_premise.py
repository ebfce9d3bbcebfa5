"""Premise propagation: the round-mates of a defective question that share its key terms, re-checked blind."""

import pytest

from quiz.models import CheckStatus
from quiz.services import round_create
from review.models import Flag, PremiseGroup, PremiseMember
from review.premises.premise import PremiseText, key_terms, premise_group
from review.premises.premise_recheck import premise_groups_recheck
from review.services import premise_groups_create, reviews_label
from tests.factories import QuestionFactory
from tests.fakes.writer_server import *  # noqa: F403
from tests.fakes.writer_server import WriterServer, good_question

WON = PremiseText(
    question_id=1,
    text="Which team won the 2021 Apple Cup?",
    explanation="Washington beat Washington State 40–13 at Husky Stadium on 26 November 2021.",
    marked="Washington",
)
COACH = PremiseText(
    question_id=2,
    text="Who was the head coach of the winning side in the 2021 Apple Cup?",
    explanation="Jimmy Lake's Washington won the game.",
    marked="Jimmy Lake",
)
SCORE = PremiseText(
    question_id=3, text="By what score did the game end?", explanation="It ended 40–13.", marked="40–13"
)
FRANCE = PremiseText(
    question_id=4, text="What is the capital of France?", explanation="Paris, since 987.", marked="Paris"
)
YEAR_ONLY = PremiseText(question_id=5, text="Which film won Best Picture for 2021?", explanation="CODA won it.")
STARTER = PremiseText(
    question_id=6, text="Which planet is closest to the Sun?", explanation="Mercury.", marked="Mercury"
)


def test_key_terms_find_entities_dates_and_numbers():
    terms = key_terms(WON.text, WON.explanation, WON.marked)
    keys = set(terms)
    assert {"entity:apple cup", "entity:washington state", "entity:husky stadium", "entity:washington"} <= keys
    assert {"date:2021-11-26", "year:2021", "number:40", "number:13"} <= keys
    # Question words and sentence starters are not names; a month is part of a date, not a name.
    assert not {"entity:which", "entity:november", "entity:the"} & keys


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The Statue of Liberty arrived in 1886.", {"entity:statue of liberty", "year:1886"}),
        ("It opened on 4 July 1776.", {"date:1776-07-04", "year:1776"}),
        ("Released in Sept. 1999, it sold 1,000,000 copies.", {"date:1999-09", "number:1000000"}),
        ("Mercury's orbit takes 88 days.", {"entity:mercury", "number:88"}),
    ],
)
def test_key_terms_examples(text, expected):
    assert expected <= set(key_terms(text))


def test_premise_group_finds_the_questions_built_on_the_same_premise_and_not_unrelated_ones():
    group = premise_group(WON, [COACH, SCORE, FRANCE, YEAR_ONLY, STARTER, WON])
    found = {other.question_id: [term.label for term in shared] for other, shared in group}
    assert set(found) == {2, 3}  # the coach (Apple Cup, 2021, Washington) and the score (40, 13)
    assert "Apple Cup" in found[2] and set(found[3]) == {"40", "13"}


def test_one_shared_year_or_one_generic_word_is_not_a_shared_premise():
    assert premise_group(WON, [YEAR_ONLY]) == []
    assert premise_group(STARTER, [PremiseText(question_id=9, text="Which river is longest?", marked="Nile")]) == []
    assert premise_group(FRANCE, [PremiseText(question_id=9, text="What is the capital of Italy?")]) == []


# -- groups in the database ---------------------------------------------------------------------------------------


def _question(text: str, explanation: str, options=("Washington", "Washington State", "Oregon"), correct=0):
    return QuestionFactory(text=text, explanation=explanation, options=options, correct_index=correct, written=True)


@pytest.fixture
def apple_round():
    won = _question(WON.text, WON.explanation)
    coach = _question(COACH.text, COACH.explanation, options=("Jimmy Lake", "Jake Dickert", "Chip Kelly"))
    france = _question(FRANCE.text, FRANCE.explanation, options=("Paris", "Lyon", "Nice"))
    round_ = round_create(
        title="Pac-12 2021", questions=[won, coach, france], provenance="model", check_status=CheckStatus.CHECKED
    )
    return {"won": won, "coach": coach, "france": france, "round": round_}


@pytest.mark.django_db
def test_labelling_defective_groups_flags_and_queues_one_recheck(apple_round, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks() as callbacks:
        reviews_label(questions=[apple_round["won"]], label="defective")
    group = PremiseGroup.objects.get()
    assert (group.origin, group.round, group.trigger) == (apple_round["won"], apple_round["round"], "defective")
    member = PremiseMember.objects.get()
    assert member.question == apple_round["coach"] and member.status == "pending"
    assert "Apple Cup" in member.shared
    flag = Flag.objects.get(kind="premise")
    assert flag.question == apple_round["coach"]
    assert flag.detail == {"premise_group": group.pk, "origin": apple_round["won"].pk, "shared": member.shared}
    assert len(callbacks) == 1  # the re-check task, queued after commit
    # Labelling it again refreshes the group: no second flag, the member waits for a new re-check.
    reviews_label(questions=[apple_round["won"]], label="defective")
    assert PremiseGroup.objects.count() == 1 and Flag.objects.filter(kind="premise").count() == 1


@pytest.mark.django_db
def test_labelling_correct_groups_nothing(apple_round):
    reviews_label(questions=[apple_round["won"]], label="correct")
    assert PremiseGroup.objects.count() == 0


@pytest.mark.django_db
def test_the_recheck_asks_each_member_blind(apple_round, systemone):
    systemone.script.choice_texts = {"head coach": {"Jimmy Lake": 0.35, "Jake Dickert": 0.55, "Chip Kelly": 0.1}}
    (group,) = premise_groups_create(
        origin_ids=[apple_round["won"].pk], trigger="dropped", round_id=apple_round["round"].pk
    )
    premise_groups_recheck(group_ids=[group.pk])
    member = PremiseMember.objects.get()
    assert (member.status, member.checker_chose, member.marked_probability) == ("disagrees", "B", 0.35)
    assert member.blind_probabilities == {"A": 0.35, "B": 0.55, "C": 0.1} and member.threshold == 0.6
    group.refresh_from_db()
    assert group.checked_at is not None
    # Asked twice, the options in two orders (every option moved one place), the answers mapped back.
    requests = systemone.requests_to("/v1/systemone")
    assert len(requests) == 2
    for request in requests:
        body = request.json()
        assert body["questions"]["blind"]["type"] == "choice"
        assert "marked" not in str(body) and COACH.explanation not in str(body)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("choice", "status"),
    [
        ({"Jimmy Lake": 0.9, "Jake Dickert": 0.05, "Chip Kelly": 0.05}, "agrees"),
        ({"Jimmy Lake": 0.45, "Jake Dickert": 0.3, "Chip Kelly": 0.25}, "doubtful"),
    ],
)
def test_recheck_statuses(apple_round, systemone, choice, status):
    systemone.script.choice_texts = {"head coach": choice}
    (group,) = premise_groups_create(
        origin_ids=[apple_round["won"].pk], trigger="dropped", round_id=apple_round["round"].pk
    )
    premise_groups_recheck(group_ids=[group.pk])
    assert PremiseMember.objects.get().status == status


@pytest.mark.django_db
def test_a_failed_recheck_fails_open(apple_round, systemone):
    systemone.script.blind_fault = "500"
    (group,) = premise_groups_create(
        origin_ids=[apple_round["won"].pk], trigger="dropped", round_id=apple_round["round"].pk
    )
    premise_groups_recheck(group_ids=[group.pk])
    member = PremiseMember.objects.get()
    assert (member.status, member.reason, member.marked_probability) == ("unverified", "http_status", None)


@pytest.mark.django_db
def test_without_a_blind_backend_the_members_stay_unchecked(apple_round, settings, model_server):
    settings.VERIFIER_BACKEND = "off"
    (group,) = premise_groups_create(
        origin_ids=[apple_round["won"].pk], trigger="dropped", round_id=apple_round["round"].pk
    )
    premise_groups_recheck(group_ids=[group.pk])
    assert PremiseMember.objects.get().status == "unchecked" and model_server.requests == []


@pytest.mark.django_db
def test_the_group_is_shown_together_in_the_review_admin(apple_round, systemone, admin_client):
    systemone.script.choice_texts = {"head coach": {"Jimmy Lake": 0.35, "Jake Dickert": 0.55, "Chip Kelly": 0.1}}
    reviews_label(questions=[apple_round["won"]], label="defective")  # the trigger, as the admin action does
    group = PremiseGroup.objects.get()
    premise_groups_recheck(group_ids=[group.pk])  # what the queued task does
    listing = admin_client.get(f"/admin/review/reviewitem/?premise_group={group.pk}").content.decode()
    assert f'value="{apple_round["coach"].pk}"' in listing and "shares a premise" in listing
    assert f'value="{apple_round["france"].pk}"' not in listing
    page = admin_client.get(f"/admin/review/reviewitem/{apple_round['coach'].pk}/change/").content.decode()
    assert f"Premise group #{group.pk}" in page and "Apple Cup" in page
    assert "The checker chose another option" in page
    assert "P(marked A) 35%; the checker chose B. Jake Dickert (55%)" in page


# -- the writer's drop --------------------------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_a_dropped_question_groups_its_round_mates_and_they_are_rechecked(
    settings, writer_server: WriterServer, request
):
    from config.celery_app import app
    from quiz.generation.jobs import generation_job_create, generation_run

    # The re-check is a Celery task: run it in-process, as the embedded default does, whatever REDIS_URL is.
    eager = app.conf.task_always_eager
    app.conf.task_always_eager = True
    request.addfinalizer(lambda: setattr(app.conf, "task_always_eager", eager))

    settings.OPENAI_BASE_URL = f"{writer_server.url}/v1"
    settings.OPENAI_API_KEY = "test-key"
    settings.QUIZ_WRITER_MODEL = "writer-2025-01-01"
    settings.VERIFIER_BACKEND = "systemone"
    settings.VERIFIER_BASE_URL = writer_server.url
    settings.VERIFIER_API_KEY = "test-key"
    settings.VERIFIER_MODEL = "jev-1.13.0"
    settings.VERIFIER_TIMEOUT = 10.0  # roomy: the checker answers at once; its deadline is not the subject here

    def apple_cup(request_number: int, index: int, *, grounded: bool = False) -> dict:
        item = good_question(request_number, index, grounded=grounded)
        item["question"] = f"Question {index} about the 2021 Apple Cup in Seattle?"
        item["explanation"] = f"Fact {index}."
        if index == 2:
            item["question"] = "DROPME " + item["question"]
        if index == 5:
            item["question"], item["explanation"] = "Which river flows through Kraków?", "The Vistula."
        return item

    writer_server.script.probabilities = {"DROPME": 0.1}
    writer_server.writer.make_question = apple_cup
    job = generation_job_create(owner_key="k", count=5, topic="Pac-12")
    generation_run(job_id=job.pk)
    job.refresh_from_db()
    group = PremiseGroup.objects.get()
    assert group.trigger == "dropped" and group.round == job.round and group.origin.text.startswith("DROPME")
    members = list(PremiseMember.objects.select_related("question"))
    assert members and all("Apple Cup" in member.question.text for member in members)
    # Celery runs in-process here: the re-check ran after the round was saved.
    assert {member.status for member in members} == {"agrees"}
