"""review/selectors.py called directly: the latest label counts, each model's latest scored verdict is the one
the sweep reads, and the queue holds exactly the questions that need a reviewer, newest signal first."""

import pytest

from review.models import FlagKind
from review.selectors import (
    IMPORTED,
    labelled_scores,
    latest_label,
    latest_labels,
    question_flags,
    review_queue,
)
from review.services import flag_record, review_label
from tests.factories import QuestionFactory, VerdictFactory
from verifier.decisions import CHECKER_DISAGREES
from verifier.models import VerdictOutcome

pytestmark = pytest.mark.django_db


def test_the_latest_review_is_the_label():
    first, second, unlabelled = QuestionFactory(), QuestionFactory(), QuestionFactory()
    review_label(question=first, label="defective")
    review_label(question=first, label="correct")
    review_label(question=second, label="defective")
    assert latest_labels() == {first.pk: "correct", second.pk: "defective"}
    assert latest_labels(question_ids=[second.pk, unlabelled.pk]) == {second.pk: "defective"}
    assert (latest_label(question_id=first.pk), latest_label(question_id=unlabelled.pk)) == ("correct", None)


def test_the_sweep_reads_each_models_latest_scored_verdict_of_each_labelled_question():
    question = QuestionFactory(written=True)
    VerdictFactory(question=question, score=0.3)
    VerdictFactory(question=question, score=0.8)  # the same model again: this one counts
    VerdictFactory(question=question, model_id="jev-1.14.0", score=0.5)
    VerdictFactory(question=question, score=None, outcome=VerdictOutcome.UNVERIFIED)  # no score: not read
    VerdictFactory(score=0.1)  # a question nobody labelled
    review_label(question=question, label="correct")
    scores = sorted((s.model_id, s.score, s.label) for s in labelled_scores())
    assert scores == [("jev-1.13.0", 0.8, "correct"), ("jev-1.14.0", 0.5, "correct")]
    assert [s.score for s in labelled_scores(model_id="jev-1.14.0")] == [0.5]
    assert labelled_scores(backend="llm") == []


def test_the_queue_holds_the_doubted_the_unverified_the_disagreed_and_the_reported_newest_first():
    dropped = VerdictFactory(outcome=VerdictOutcome.DROPPED).question
    unverified = VerdictFactory(outcome=VerdictOutcome.UNVERIFIED, score=None).question
    disagreed = VerdictFactory(outcome=VerdictOutcome.PASSED, score=0.9, reason=CHECKER_DISAGREES).question
    passed = VerdictFactory(outcome=VerdictOutcome.PASSED, score=0.9).question
    imported = VerdictFactory(outcome=VerdictOutcome.DROPPED, reason=IMPORTED).question
    reported = QuestionFactory(written=True)
    flag_record(question_id=reported.pk, kind=FlagKind.REPORTED, room_code="ABCDEF")
    crowd = QuestionFactory(written=True)
    flag_record(question_id=crowd.pk, kind=FlagKind.CROWD)
    queue = list(review_queue())
    queued = {item.pk for item in queue}
    assert queued == {dropped.pk, unverified.pk, disagreed.pk, reported.pk, crowd.pk}
    assert passed.pk not in queued and imported.pk not in queued
    # The newest signal first: the crowd's flag came last.
    assert queue[0].pk == crowd.pk and queue[0].is_crowd_flagged
    by_id = {item.pk: item for item in queue}
    assert by_id[reported.pk].is_reported and not by_id[reported.pk].is_held
    assert by_id[dropped.pk].is_held and by_id[dropped.pk].latest_outcome == VerdictOutcome.DROPPED


def test_a_labelled_question_stays_in_the_queue_with_its_label():
    question = VerdictFactory().question
    review_label(question=question, label="defective")
    [item] = review_queue()
    assert (item.pk, item.label) == (question.pk, "defective")


def test_a_questions_flags_of_one_kind_in_the_order_they_came():
    question = QuestionFactory(written=True)
    first = flag_record(question_id=question.pk, kind=FlagKind.REPORTED, room_code="AAAAAA")
    flag_record(question_id=question.pk, kind=FlagKind.CROWD)
    second = flag_record(question_id=question.pk, kind=FlagKind.REPORTED, room_code="BBBBBB")
    assert question_flags(question=question, kind=FlagKind.REPORTED) == [first, second]
    assert [flag.kind for flag in question_flags(question=question, kind=FlagKind.CROWD)] == ["crowd"]
