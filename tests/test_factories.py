"""The factories make what the app would have made: through its services where a model has invariants."""

import pytest

from lobby.exceptions import NicknameTaken, RoomLocked
from lobby.rules.machine import Phase
from quiz.models import GenerationStatus, Provenance
from tests.factories import (
    SAMPLE,
    AnswerFactory,
    FlagFactory,
    GenerationJobFactory,
    PackFactory,
    PlayerFactory,
    QuestionFactory,
    ReportFactory,
    RoomFactory,
    RoundFactory,
    ThresholdFactory,
    VerdictFactory,
)

pytestmark = pytest.mark.django_db


def test_a_round_numbers_its_questions_in_order_and_a_room_counts_them():
    mine = QuestionFactory(text="Mine?", options=("a", "b"), correct_index=1)
    round_ = RoundFactory(questions=[*SAMPLE[:2], mine], title="Three")
    entries = list(round_.entries.select_related("question"))
    assert [(e.position, e.question.text) for e in entries] == [
        (0, SAMPLE[0].text),
        (1, SAMPLE[1].text),
        (2, "Mine?"),
    ]
    room = RoomFactory(round=round_, timer_seconds=30)
    assert room.question_count == 3 and room.timer_seconds == 30 and room.phase == Phase.LOBBY
    assert len(room.code) == 6 and RoomFactory().code != room.code


def test_a_room_with_other_fields_is_written_after_the_service_made_it():
    room = RoomFactory(locked=True)
    assert room.locked
    with pytest.raises(RoomLocked):
        PlayerFactory(room=room)


def test_players_join_through_the_service():
    room = RoomFactory()
    ada = PlayerFactory(room=room, nickname="  Ada   Lovelace ")
    assert (ada.nickname, ada.nickname_key) == ("Ada Lovelace", "ada lovelace")
    with pytest.raises(NicknameTaken):
        PlayerFactory(room=room, nickname="ADA LOVELACE")


def test_an_answer_is_right_or_wrong_by_the_rooms_question():
    player = PlayerFactory()
    assert AnswerFactory(player=player, question_index=0, option=1).correct  # SAMPLE Q1 marks option 1
    wrong = AnswerFactory(player=player, question_index=1, option=0, elapsed_ms=900)
    assert not wrong.correct and wrong.room == player.room and wrong.elapsed_ms == 900


def test_a_report_names_the_rooms_question_at_its_index():
    report = ReportFactory(question_index=2)
    assert report.question == report.room.round.entries.get(position=2).question
    assert report.room == report.player.room


def test_the_gates_rows():
    verdict = VerdictFactory(score=0.31)
    assert verdict.outcome == "dropped" and verdict.reason == "below_threshold"
    assert verdict.probabilities["answer_correct"] == 0.31 and not verdict.model_mismatch
    assert verdict.question.provenance == Provenance.MODEL and verdict.question.model_id == "writer-1"
    assert VerdictFactory(outcome="unverified", score=None).probabilities == {}
    assert FlagFactory(question=verdict.question).question.flags.count() == 1
    first = ThresholdFactory(value=0.7)
    assert ThresholdFactory(value=0.4).pk == first.pk  # one per backend and model, as threshold_set keeps it
    with pytest.raises(ValueError, match="between 0 and 1"):
        ThresholdFactory(value=1.5)


def test_a_job_and_a_pack_are_rows_in_any_state():
    job = GenerationJobFactory(status=GenerationStatus.RUNNING, asked=4)
    assert job.status == "running" and job.asked == 4 and not job.finished
    pack = PackFactory()
    QuestionFactory(pack=pack, provenance=Provenance.PACK)
    assert pack.questions.count() == 1 and PackFactory().slug != pack.slug
