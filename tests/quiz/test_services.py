"""quiz/services.py called directly: a question stored as given, a round in play order, a pack's round and a
host's own round, in the language of the page the host is on."""

import pytest
from django.utils import translation

from quiz.exceptions import QuizError
from quiz.models import CheckStatus, Provenance, Question, RoundQuestion
from quiz.services import (
    question_create,
    round_create,
    round_create_for_host,
    round_create_from_pack,
    round_language_default,
)
from quiz.validation import QuestionData
from tests.factories import SAMPLE, PackFactory, QuestionFactory

pytestmark = pytest.mark.django_db

CAPITAL = QuestionData(
    text="What is the capital of Australia?",
    options=("Canberra", "Sydney", "Perth"),
    correct_index=0,
    explanation="Canberra was built to be the capital.",
    source="https://example.test/australia",
)


def test_a_question_is_stored_as_given_with_its_provenance_and_the_model_that_served_it():
    question = question_create(
        data=CAPITAL, provenance=Provenance.MODEL, model_id="writer-1", served_model_id="w" * 300
    )
    stored = Question.objects.get(pk=question.pk)
    assert (stored.text, stored.options, stored.correct_index) == (CAPITAL.text, ["Canberra", "Sydney", "Perth"], 0)
    assert (stored.explanation, stored.source) == (CAPITAL.explanation, CAPITAL.source)
    assert (stored.provenance, stored.model_id) == (Provenance.MODEL, "writer-1")
    assert stored.served_model_id == "w" * 200  # cut to the column, not refused


def test_a_round_keeps_its_questions_in_play_order_and_a_title_cut_to_its_column():
    questions = [QuestionFactory() for _ in range(3)]
    round_ = round_create(
        title="T" * 250,
        questions=reversed(questions),
        provenance=Provenance.HOST,
        check_status=CheckStatus.UNCHECKED,
        owner_key="key-1",
        language="de",
    )
    positions = RoundQuestion.objects.filter(round=round_).order_by("position")
    assert [entry.question_id for entry in positions] == [q.pk for q in reversed(questions)]
    assert [entry.position for entry in positions] == [0, 1, 2]
    assert (len(round_.title), round_.owner_key, round_.language) == (200, "key-1", "de")


def test_a_round_takes_the_language_of_the_page_the_host_is_on():
    with translation.override("es"):
        assert round_language_default() == "es"
        assert round_create_for_host(title="Mis preguntas", questions=[CAPITAL], owner_key="k").language == "es"
    with translation.override("de-at"):
        assert round_language_default() == "de"  # the nearest language the site speaks
    with translation.override(None):
        assert round_language_default() == "en"


def test_a_packs_round_is_hand_checked_in_the_packs_language_and_order():
    pack = PackFactory(language="de")
    first = QuestionFactory.from_data(SAMPLE[0], pack=pack, provenance=Provenance.PACK)
    second = QuestionFactory.from_data(SAMPLE[1], pack=pack, provenance=Provenance.PACK)
    round_ = round_create_from_pack(pack=pack)
    assert (round_.title, round_.pack, round_.language) == (pack.title, pack, "de")
    assert (round_.provenance, round_.check_status) == (Provenance.PACK, CheckStatus.HAND_CHECKED)
    assert [entry.question_id for entry in round_.entries.order_by("position")] == [first.pk, second.pk]


def test_an_empty_pack_makes_no_round():
    with pytest.raises(QuizError, match="That pack has no questions."):
        round_create_from_pack(pack=PackFactory())


def test_a_hosts_round_is_unchecked_under_their_key_and_needs_a_question():
    round_ = round_create_for_host(title="  ", questions=[CAPITAL, SAMPLE[0]], owner_key="host-key")
    assert (round_.title, round_.owner_key, round_.check_status) == ("My questions", "host-key", CheckStatus.UNCHECKED)
    stored = [entry.question for entry in round_.entries.order_by("position")]
    assert [q.text for q in stored] == [CAPITAL.text, SAMPLE[0].text]
    assert {q.provenance for q in stored} == {Provenance.HOST}
    with pytest.raises(QuizError, match="at least one question"):
        round_create_for_host(title="Empty", questions=[], owner_key="host-key")
