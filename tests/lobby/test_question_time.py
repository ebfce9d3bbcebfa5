"""A question's own time (an imported Kahoot! or Quizizz time limit, the editor's): used instead of the room's
timer for that question, live and in homework, and stretched by extra time as the room's is. The rule is tried
on its own (lobby/rules/machine.py, plain data), then through the live services with the answer's arrival time given
(`received_at`, the clock the server judges an answer by) and through homework with its clock replaced."""

from datetime import timedelta

import pytest

from lobby import services
from lobby.exceptions import TooLate
from lobby.homework import services as homework
from lobby.models import Answer, Room
from lobby.reads.selectors import room_snapshot
from lobby.rules import machine
from lobby.rules.machine import Action, Phase
from quiz.validation import QuestionData
from tests.lobby.test_homework import DEADLINE, T0, Clock

ROOM_SECONDS = 10
# Its own 30 s, then none (the room's 10 s), then its own 5 s; each marks option 0 right.
ROUND = [
    QuestionData(text="Slow one: which is right?", options=("Right", "Wrong"), correct_index=0, seconds=30),
    QuestionData(text="Room's time: which is right?", options=("Right", "Wrong"), correct_index=0),
    QuestionData(text="Quick one: which is right?", options=("Right", "Wrong"), correct_index=0, seconds=5),
]


# -- the rule --------------------------------------------------------------------------------------------------


def test_a_questions_own_seconds_replace_the_rooms_timer():
    assert machine.question_timer_ms(room_seconds=20, question_seconds=45) == 45_000
    assert machine.question_timer_ms(room_seconds=20, question_seconds=5) == 5_000


def test_without_its_own_seconds_a_question_has_the_rooms_timer():
    assert machine.question_timer_ms(room_seconds=20, question_seconds=None) == 20_000


def test_extra_time_stretches_a_questions_own_time_as_it_stretches_the_rooms():
    own = machine.question_timer_ms(room_seconds=20, question_seconds=30)
    assert machine.time_window_ms(timer_ms=own, time_percent=150) == 45_000
    assert machine.time_window_ms(timer_ms=own, time_percent=200) == 60_000
    # The room's deadline is the last player's: one with x1 has theirs this much earlier.
    assert machine.own_deadline_offset_ms(timer_ms=own, time_percent=100, closing_percent=200) == 30_000


def test_speed_points_run_over_the_questions_own_time():
    own = machine.question_timer_ms(room_seconds=10, question_seconds=40)
    # 10 s into a 40 s question is a quarter of it gone: 1000 x (1 - 10/80); on the room's 10 s it would be 500.
    assert machine.answer_score(streak=0, correct=True, elapsed_ms=10_000, window_ms=own).points == 875


# -- live ------------------------------------------------------------------------------------------------------


def _live_room(make_room, *, players=("Ann",)):
    created = make_room(timer_seconds=ROOM_SECONDS, questions=ROUND)
    joined = [services.player_join(code=created.room.code, nickname=name) for name in players]
    return created.room, [j.player.pk for j in joined]


def _next_question(room_id: int) -> Room:
    room = Room.objects.get(pk=room_id)
    if room.phase == Phase.QUESTION:
        services.game_act(room_id=room_id, action=Action.CLOSE)
    if Room.objects.get(pk=room_id).phase == Phase.REVEAL:
        services.game_act(room_id=room_id, action=Action.NEXT)
    services.game_act(room_id=room_id, action=Action.START if room.phase == Phase.LOBBY else Action.NEXT)
    return Room.objects.get(pk=room_id)


def _clock_ms(room: Room) -> int:
    return int((room.deadline - room.question_started_at).total_seconds() * 1000)


@pytest.mark.django_db
def test_live_each_question_closes_on_its_own_time_and_the_screens_count_it(make_room):
    room, _players = _live_room(make_room)
    for expected_s in (30, ROOM_SECONDS, 5):
        room = _next_question(room.pk)
        assert _clock_ms(room) == expected_s * 1000
        shown = room_snapshot(room_id=room.pk)
        # The host's countdown and its bar: this question's time, not the room's.
        assert shown["timer_seconds"] == expected_s
        assert (expected_s - 2) * 1000 < shown["remaining_ms"] <= expected_s * 1000


@pytest.mark.django_db
def test_live_extra_time_stretches_a_questions_own_time(make_room):
    room, (ann, ben) = _live_room(make_room, players=("Ann", "Ben"))
    services.player_time_set(room_id=room.pk, player_id=ann, time_percent=200)
    room = _next_question(room.pk)
    assert _clock_ms(room) == 60_000  # the room closes at Ann's own 2 x 30 s
    # Ben's own deadline is the question's 30 s: an answer 35 s in is too late for him, in time for Ann.
    started = room.question_started_at
    with pytest.raises(TooLate):
        services.answer_submit(player_id=ben, question_index=0, option=0, received_at=started + timedelta(seconds=35))
    services.answer_submit(player_id=ann, question_index=0, option=0, received_at=started + timedelta(seconds=35))
    stored = Answer.objects.get(player_id=ann, question_index=0)
    assert stored.window_ms == 60_000


@pytest.mark.django_db
def test_live_an_answer_is_judged_and_scored_on_the_questions_own_time(make_room):
    room, (ann,) = _live_room(make_room)
    room = _next_question(room.pk)
    # 20 s into a 30 s question: past the room's 10 s, inside the question's own time.
    services.answer_submit(
        player_id=ann, question_index=0, option=0, received_at=room.question_started_at + timedelta(seconds=20)
    )
    stored = Answer.objects.get(player_id=ann, question_index=0)
    assert stored.window_ms == 30_000
    assert Room.objects.get(pk=room.pk).phase == Phase.REVEAL  # everyone answered
    stored.refresh_from_db()
    assert stored.points == round(1000 * (1 - 20 / 60))
    room = _next_question(room.pk)  # the room's own 10 s again
    with pytest.raises(TooLate):
        services.answer_submit(
            player_id=ann, question_index=1, option=0, received_at=room.question_started_at + timedelta(seconds=11)
        )


@pytest.mark.django_db
def test_live_the_clock_closes_a_short_question_at_its_own_deadline(make_room):
    room, _players = _live_room(make_room)
    for _ in range(3):
        room = _next_question(room.pk)
    assert room.question_index == 2
    # 4 s into its own 5 s, the clock leaves it open; at 5 s it closes it.
    Room.objects.filter(pk=room.pk).update(deadline=room.deadline - timedelta(seconds=4))
    assert services.close_due_questions() == 0
    Room.objects.filter(pk=room.pk).update(deadline=room.deadline - timedelta(seconds=5))
    assert services.close_due_questions() == 1
    assert Room.objects.get(pk=room.pk).phase == Phase.REVEAL


@pytest.mark.django_db
def test_live_extra_time_given_during_a_question_moves_the_deadline_by_its_own_time(make_room):
    room, (ann, _ben) = _live_room(make_room, players=("Ann", "Ben"))
    room = _next_question(room.pk)
    before = room.deadline
    services.player_time_set(room_id=room.pk, player_id=ann, time_percent=150)
    # Half of the question's own 30 s more (the room's 10 s would have given 5).
    assert Room.objects.get(pk=room.pk).deadline - before == timedelta(seconds=15)


@pytest.mark.django_db
def test_live_after_an_outage_a_player_without_extra_time_gets_the_few_seconds_more_on_its_own_time(
    make_room, settings
):
    room, (ann, ben) = _live_room(make_room, players=("Ann", "Ben"))
    services.player_time_set(room_id=room.pk, player_id=ann, time_percent=200)
    room = _next_question(room.pk)
    # 59.9 s of Ann's 60 went by during the outage: Ben's own 30 s ran out long ago.
    shift = timedelta(seconds=59.9)
    Room.objects.filter(pk=room.pk).update(
        question_started_at=room.question_started_at - shift, deadline=room.deadline - shift
    )
    assert services.resume_after_outage() == 1
    services.answer_submit(player_id=ben, question_index=0, option=0)
    # Ben's own deadline is the room's less the question's own 30 s (not the room's 10 s): the floor still holds.
    snapshot = room_snapshot(room_id=room.pk)
    assert snapshot["remaining_ms"] > (settings.DB_OUTAGE_RESUME_SECONDS - 1) * 1000


# -- homework --------------------------------------------------------------------------------------------------


@pytest.fixture
def clock(monkeypatch):
    clock = Clock(T0)
    monkeypatch.setattr(homework, "now", clock)
    return clock


def _homework(make_round):
    created = homework.assignment_create(
        round_id=make_round(ROUND).pk, deadline=DEADLINE, reveal="each", timer_seconds=ROOM_SECONDS
    )
    Room.objects.filter(pk=created.room.pk).update(option_seed="")
    return created.room


@pytest.mark.django_db
def test_homework_each_question_runs_on_its_own_time(make_round, clock):
    room = _homework(make_round)
    ann, _token = homework.homework_join(code=room.code, nickname="Ann")
    opened = homework.homework_open(player_id=ann.pk, question_index=0)
    assert (opened["remaining_ms"], opened["window_ms"]) == (30_000, 30_000)
    clock.advance(seconds=20)  # past the room's 10 s, inside the question's own 30 s
    reply = homework.homework_answer(player_id=ann.pk, question_index=0, given={"option": 0})
    assert reply["verdict"]["correct"] and reply["verdict"]["points"] == round(1000 * (1 - 20 / 60))

    opened = homework.homework_open(player_id=ann.pk, question_index=1)
    assert opened["window_ms"] == ROOM_SECONDS * 1000  # no time of its own: the room's
    clock.advance(seconds=ROOM_SECONDS + 1)
    with pytest.raises(TooLate):
        homework.homework_answer(player_id=ann.pk, question_index=1, given={"option": 0})

    opened = homework.homework_open(player_id=ann.pk, question_index=2)
    assert opened["window_ms"] == 5_000
    clock.advance(seconds=6)
    assert homework.homework_state(player_id=ann.pk)["finished"]  # its own 5 s ran out: it scores nothing
    assert not Answer.objects.filter(player=ann, question_index=2).exists()


@pytest.mark.django_db
def test_homework_extra_time_stretches_a_questions_own_time(make_round, clock):
    room = _homework(make_round)
    ben, _token = homework.homework_join(code=room.code, nickname="Ben")
    ben.time_percent = 150
    ben.save(update_fields=["time_percent"])
    opened = homework.homework_open(player_id=ben.pk, question_index=0)
    assert opened["window_ms"] == 45_000
    clock.advance(seconds=40)
    homework.homework_answer(player_id=ben.pk, question_index=0, given={"option": 0})
    assert Answer.objects.get(player=ben, question_index=0).window_ms == 45_000
