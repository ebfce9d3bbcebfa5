"""quiz tells review about a generated round through quiz.signals; review groups the dropped questions' mates."""

import pytest

from quiz.models import GenerationJob
from quiz.services import question_create, round_create
from quiz.signals import round_generated
from quiz.validation import QuestionData
from review.models import Flag, PremiseGroup
from tests.review.test_premise import COACH, WON


@pytest.fixture
def apple_round():
    won, coach = (
        question_create(
            data=QuestionData(
                text=t.text, options=("Washington", "Jimmy Lake", "Oregon"), correct_index=0, explanation=t.explanation
            ),
            provenance="model",
        )
        for t in (WON, COACH)
    )
    round_ = round_create(title="Pac-12 2021", questions=[won, coach], provenance="model", check_status="checked")
    return {"won": won, "coach": coach, "round": round_}


@pytest.mark.django_db
def test_a_round_with_dropped_questions_groups_their_round_mates(apple_round, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks() as queued:
        round_generated.send(
            sender=GenerationJob, round_id=apple_round["round"].pk, dropped_ids=[apple_round["won"].pk]
        )
    group = PremiseGroup.objects.get()
    assert (group.origin, group.round, group.trigger) == (apple_round["won"], apple_round["round"], "dropped")
    assert apple_round["coach"].pk in set(group.members.values_list("question_id", flat=True))
    assert Flag.objects.filter(kind="premise", question=apple_round["coach"]).exists()
    assert len(queued) == 1  # the blind re-check, after commit


@pytest.mark.django_db
def test_a_round_with_nothing_dropped_groups_nothing(apple_round):
    round_generated.send(sender=GenerationJob, round_id=apple_round["round"].pk, dropped_ids=[])
    assert not PremiseGroup.objects.exists()
