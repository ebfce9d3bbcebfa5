"""review/services.py called directly: flags and labels refuse what they do not know, and a fix is a new
question that takes the original's place in its rounds only when asked, the original kept as it was."""

import pytest

from quiz.exceptions import InvalidQuestion
from quiz.models import Question, RoundQuestion
from review.models import Flag, FlagKind, Review
from review.services import flag_record, premise_groups_create, question_fix, review_label, reviews_label
from tests.factories import SAMPLE, QuestionFactory, RoundFactory

pytestmark = pytest.mark.django_db

FIX = {
    "question": "What is the capital of Australia?",
    "options": ["Canberra", "Sydney", "Melbourne"],
    "correct_index": 0,
    "explanation": "Canberra has been the capital since 1913.",
}


def test_a_flag_is_recorded_with_its_room_and_an_unknown_kind_is_refused():
    question = QuestionFactory()
    flag = flag_record(question_id=question.pk, kind=FlagKind.REPORTED, room_code="ABCDEFGHIJ")
    assert (flag.question_id, flag.kind, flag.room_code, flag.detail) == (question.pk, "reported", "ABCDEFGH", {})
    with pytest.raises(ValueError, match="unknown flag kind 'rumour'"):
        flag_record(question_id=question.pk, kind="rumour")
    assert Flag.objects.count() == 1


def test_a_label_keeps_a_tidy_note_and_an_unknown_label_is_refused():
    question = QuestionFactory()
    review = review_label(question=question, label="defective", note="  the   answer\nis wrong " + "x" * 600)
    assert review.note.startswith("the answer is wrong x") and len(review.note) == 500
    with pytest.raises(ValueError, match="unknown label 'maybe'"):
        review_label(question=question, label="maybe")
    assert Review.objects.filter(question=question).count() == 1


def test_labelling_several_labels_each_and_a_correct_label_groups_no_premise():
    questions = [QuestionFactory() for _ in range(3)]
    reviews = reviews_label(questions=questions, label="correct", note="checked by hand")
    assert [(r.question_id, r.label, r.note) for r in reviews] == [
        (q.pk, "correct", "checked by hand") for q in questions
    ]
    assert not Flag.objects.filter(kind=FlagKind.PREMISE).exists()


def test_a_fix_is_a_new_question_and_the_original_stays_labelled_defective():
    round_ = RoundFactory()
    original = round_.entries.order_by("position").first().question
    before = (original.text, list(original.options), original.correct_index)
    fixed = question_fix(question=original, raw=FIX, note="Sydney is not the capital")
    original.refresh_from_db()
    assert (original.text, list(original.options), original.correct_index) == before
    assert (fixed.fixed.text, fixed.fixed.options, fixed.fixed.provenance) == (
        FIX["question"],
        FIX["options"],
        original.provenance,
    )
    assert (fixed.review.label, fixed.review.fixed_as, fixed.review.note) == (
        "defective",
        fixed.fixed,
        "Sydney is not the capital",
    )
    assert Review.objects.get(question=fixed.fixed).label == "correct"
    # Not asked to: the round still plays the original.
    assert fixed.rounds_updated == 0
    assert RoundQuestion.objects.filter(round=round_, question=original).exists()


def test_a_fix_used_in_rounds_takes_the_originals_place_in_each():
    first = RoundFactory()
    original = first.entries.order_by("position").first().question
    second = RoundFactory(questions=[QuestionFactory.from_data(SAMPLE[1]), original])
    fixed = question_fix(question=original, raw=FIX, use_in_rounds=True)
    assert fixed.rounds_updated == 2
    assert not RoundQuestion.objects.filter(question=original).exists()
    assert RoundQuestion.objects.get(round=first, question=fixed.fixed).position == 0
    assert RoundQuestion.objects.get(round=second, question=fixed.fixed).position == 1


def test_a_fix_that_fails_validation_changes_nothing():
    original = QuestionFactory()
    count = Question.objects.count()
    with pytest.raises(InvalidQuestion):
        question_fix(question=original, raw={**FIX, "correct_index": 7})
    assert Question.objects.count() == count
    assert not Review.objects.exists()


def test_an_unknown_premise_trigger_is_refused():
    with pytest.raises(ValueError, match="unknown premise trigger"):
        premise_groups_create(origin_ids=[QuestionFactory().pk], trigger="hunch")
