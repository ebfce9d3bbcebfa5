from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from lobby import services
from lobby.exceptions import (
    AlreadyAnswered,
    AlreadyReported,
    BadToken,
    NicknameInvalid,
    NicknameTaken,
    NotNow,
    PlayerRemoved,
    RoomFull,
    RoomLocked,
    RoomNotFound,
    TooLate,
)
from lobby.models import Answer, Room
from lobby.reads.selectors import room_snapshot
from lobby.rules.machine import Action, Phase

pytestmark = pytest.mark.django_db


def test_room_codes_use_an_unambiguous_alphabet(make_room):
    codes = {make_room().room.code for _ in range(30)}
    assert len(codes) == 30
    for code in codes:
        assert len(code) == 6
        assert not set(code) & set("0O1I")


@pytest.mark.parametrize("timer", [9, 121])
def test_timer_outside_10_to_120_seconds_is_refused(make_round, timer):
    with pytest.raises(NotNow, match="10 to 120"):
        services.room_create(round_id=make_round().pk, timer_seconds=timer)


def test_nicknames_are_trimmed_unique_in_the_room_and_1_to_20_characters(make_room):
    room = make_room().room
    joined = services.player_join(code=room.code.lower(), nickname="  Ada   Lovelace ")
    assert joined.player.nickname == "Ada Lovelace"
    with pytest.raises(NicknameTaken):
        services.player_join(code=room.code, nickname="ada lovelace")
    for bad in ["", "   ", "x" * 21, None, 42]:
        with pytest.raises(NicknameInvalid):
            services.player_join(code=room.code, nickname=bad)
    assert services.player_join(code=room.code, nickname="x" * 20).player.nickname == "x" * 20


def test_the_21st_player_gets_a_clear_message(make_room, settings):
    room = make_room().room
    for n in range(settings.ROOM_MAX_PLAYERS):
        services.player_join(code=room.code, nickname=f"p{n}")
    with pytest.raises(RoomFull, match="20 players"):
        services.player_join(code=room.code, nickname="one-too-many")
    assert room.players.count() == 20


def test_joins_that_arrive_together_each_get_their_own_answer(make_room, settings):
    """The server hands the joins that reach it together to one call: each joiner gets what they would have got
    alone, in order, and the room's size and nicknames hold inside the batch too."""
    settings.ROOM_MAX_PLAYERS = 4
    room = make_room().room
    other = make_room().room
    services.player_join(code=room.code, nickname="Ada")
    seq = Room.objects.get(pk=room.pk).seq
    results = services.players_join(
        [
            services.JoinIn(code=room.code.lower(), nickname="Ben"),
            services.JoinIn(code=room.code, nickname="  ben "),  # the same name as Ben's, a moment later
            services.JoinIn(code=room.code, nickname="ADA"),
            services.JoinIn(code=room.code, nickname=""),
            services.JoinIn(code="ZZZZZZ", nickname="Lost"),
            services.JoinIn(code=other.code, nickname="Ben"),  # another room: the name is free there
            services.JoinIn(code=room.code, nickname="Cy", asks_more_time=True),
            services.JoinIn(code=room.code, nickname="Di"),
            services.JoinIn(code=room.code, nickname="Ed"),
        ]
    )
    kinds = [type(r).__name__ for r in results]
    assert kinds == [
        "Joined",
        "NicknameTaken",
        "NicknameTaken",
        "NicknameInvalid",
        "RoomNotFound",
        "Joined",
        "Joined",
        "Joined",
        "RoomFull",
    ]
    assert "4 players" in str(results[8])
    assert list(room.players.values_list("nickname", "asks_more_time")) == [
        ("Ada", False),
        ("Ben", False),
        ("Cy", True),
        ("Di", False),
    ]
    assert list(other.players.values_list("nickname", flat=True)) == ["Ben"]
    # Each joiner's token resumes them, and the picture new enough to show them has them all.
    for joined in (results[0], results[6], results[7]):
        assert services.player_resume(token=joined.token, code=room.code).pk == joined.player.pk
        assert joined.seq == Room.objects.get(pk=room.pk).seq > seq
    assert room_snapshot(room_id=room.pk)["player_count"] == 4


def test_unknown_code_and_locked_room(make_room):
    with pytest.raises(RoomNotFound):
        services.player_join(code="ZZZZZZ", nickname="a")
    room = make_room().room
    services.room_set_locked(room_id=room.pk, locked=True)
    with pytest.raises(RoomLocked):
        services.player_join(code=room.code, nickname="late")


def test_a_removed_player_cannot_come_back_with_the_same_token_and_frees_the_name(make_room):
    room = make_room().room
    joined = services.player_join(code=room.code, nickname="Eve")
    services.player_remove(room_id=room.pk, player_id=joined.player.pk)
    with pytest.raises(PlayerRemoved):
        services.player_resume(token=joined.token, code=room.code)
    assert services.player_join(code=room.code, nickname="Eve").player.pk != joined.player.pk


def test_tokens_are_bound_to_their_room(make_room):
    a, b = make_room().room, make_room().room
    joined = services.player_join(code=a.code, nickname="Bob")
    assert services.player_resume(token=joined.token, code=a.code).pk == joined.player.pk
    with pytest.raises(BadToken):
        services.player_resume(token=joined.token, code=b.code)
    with pytest.raises(BadToken):
        services.player_resume(token=joined.token + "x", code=a.code)
    with pytest.raises(BadToken):
        services.host_resume(token=joined.token, code=a.code)


def _started(make_room, players=("Ann", "Ben")):
    created = make_room()
    room = created.room
    joined = [services.player_join(code=room.code, nickname=n) for n in players]
    assert services.game_act(room_id=room.pk, action=Action.START)
    return Room.objects.get(pk=room.pk), joined


def test_start_needs_a_player(make_room):
    room = make_room().room
    with pytest.raises(NotNow, match="at least one player"):
        services.game_act(room_id=room.pk, action=Action.START)


def test_a_double_click_advances_once(make_room):
    room, _ = _started(make_room)
    services.question_close(room_id=room.pk, question_index=0)
    assert services.game_act(room_id=room.pk, action=Action.NEXT, expected_phase="reveal", expected_index=0)
    assert not services.game_act(room_id=room.pk, action=Action.NEXT, expected_phase="reveal", expected_index=0)
    room.refresh_from_db()
    assert (room.phase, room.question_index) == (Phase.LEADERBOARD, 0)


def test_answers_one_per_player_scored_at_close_and_the_last_answer_closes(make_room):
    room, (ann, ben) = _started(make_room)
    services.answer_submit(player_id=ann.player.pk, question_index=0, option=1)  # correct
    room.refresh_from_db()
    assert room.phase == Phase.QUESTION
    with pytest.raises(AlreadyAnswered):
        services.answer_submit(player_id=ann.player.pk, question_index=0, option=2)
    ann.player.refresh_from_db()
    assert ann.player.score == 0  # nothing is revealed through the score before the reveal
    services.answer_submit(player_id=ben.player.pk, question_index=0, option=0)  # wrong: the last to answer
    room.refresh_from_db()
    assert room.phase == Phase.REVEAL
    ann.player.refresh_from_db()
    ben.player.refresh_from_db()
    assert 500 <= ann.player.score <= 1000
    assert ben.player.score == 0
    assert Answer.objects.filter(room=room).count() == 2


def test_a_late_answer_is_refused(make_room):
    room, (ann, _) = _started(make_room)
    Room.objects.filter(pk=room.pk).update(deadline=timezone.now() - timedelta(milliseconds=1))
    with pytest.raises(TooLate):
        services.answer_submit(player_id=ann.player.pk, question_index=0, option=1)
    assert services.close_due_questions() == 1
    with pytest.raises(TooLate):
        services.answer_submit(player_id=ann.player.pk, question_index=0, option=1)
    assert not Answer.objects.exists()


def test_the_clock_closes_a_question_exactly_once(make_room):
    room, _ = _started(make_room)
    Room.objects.filter(pk=room.pk).update(deadline=timezone.now())
    assert services.close_due_questions() == 1
    assert services.close_due_questions() == 0
    assert not services.question_close(room_id=room.pk, question_index=0)
    room.refresh_from_db()
    assert room.phase == Phase.REVEAL


def test_answers_for_other_questions_or_options_are_refused(make_room):
    room, (ann, _) = _started(make_room)
    for question, option in [(1, 0), (0, 7), (0, -1), ("0", 1), (0, True)]:
        with pytest.raises(services.AnswerRefused):
            services.answer_submit(player_id=ann.player.pk, question_index=question, option=option)


def test_streak_bonus_and_full_game_to_finished(make_room):
    room, (ann,) = _started(make_room, players=("Ann",))
    correct = [1, 2, 0]
    for index, option in enumerate(correct):
        services.answer_submit(player_id=ann.player.pk, question_index=index, option=option)
        room.refresh_from_db()
        assert room.phase == Phase.REVEAL
        services.game_act(room_id=room.pk, action=Action.NEXT)
        services.game_act(room_id=room.pk, action=Action.NEXT)
    room.refresh_from_db()
    assert room.phase == Phase.FINISHED
    points = list(Answer.objects.filter(player=ann.player).order_by("question_index").values_list("points", flat=True))
    assert points[1] - 100 >= 500 and points[2] - 200 >= 500  # streak bonus on the 2nd and 3rd in a row


def test_reports_only_after_the_reveal_and_once(make_room):
    room, (ann, _) = _started(make_room)
    with pytest.raises(NotNow):
        services.report_create(player_id=ann.player.pk, question_index=0, text="wrong!")
    services.question_close(room_id=room.pk, question_index=0)
    report = services.report_create(player_id=ann.player.pk, question_index=0, text="  The answer   is 5 ")
    assert report.text == "The answer is 5"
    assert report.question.text == "What is 2 + 2?"
    with pytest.raises(AlreadyReported):
        services.report_create(player_id=ann.player.pk, question_index=0, text="again")


def test_answers_that_arrive_together_are_judged_one_by_one_in_one_batch(make_room):
    room_a, (ann, ben) = _started(make_room)
    room_b, (cat, dan, eve) = _started(make_room, players=("Cat", "Dan", "Eve"))
    services.player_remove(room_id=room_b.pk, player_id=dan.player.pk)
    late = room_b.deadline + timedelta(milliseconds=1)
    batch = [
        services.AnswerIn(ann.player.pk, 0, 1),  # correct
        services.AnswerIn(ann.player.pk, 0, 2),  # the same player again in the same batch
        services.AnswerIn(cat.player.pk, 0, 9),  # no such option
        services.AnswerIn(dan.player.pk, 0, 1),  # removed by the host
        services.AnswerIn(eve.player.pk, 0, 1, received_at=late),
        services.AnswerIn(ben.player.pk, 1, 0),  # not the open question
        services.AnswerIn(ben.player.pk, 0, 0),  # wrong, and the last of room A: it closes the question
    ]
    results = services.answers_store(batch)
    room_a.refresh_from_db()
    assert room_a.phase == Phase.QUESTION  # stored, and acknowledged: counting comes next
    assert services.answers_counted(results) == {(room_a.pk, 0)}

    assert [type(r).__name__ for r in results] == [
        "AnswerAck", "AlreadyAnswered", "AnswerRefused", "PlayerRemoved", "TooLate", "AnswerRefused", "AnswerAck",
    ]  # fmt: skip
    assert "not open" in str(results[5])
    assert sorted(Answer.objects.values_list("player__nickname", "option")) == [("Ann", 1), ("Ben", 0)]
    room_a.refresh_from_db()
    room_b.refresh_from_db()
    assert room_a.phase == Phase.REVEAL
    assert room_b.phase == Phase.QUESTION  # Cat and Eve have not answered (their answers were refused)
    ann.player.refresh_from_db()
    assert ann.player.score > 0


def test_an_answer_already_stored_is_refused_without_failing_the_rest_of_its_batch(make_room):
    room, (ann, ben, cat) = _started(make_room, players=("Ann", "Ben", "Cat"))
    services.answer_submit(player_id=ann.player.pk, question_index=0, option=1)
    results = services.answers_submit([services.AnswerIn(ben.player.pk, 0, 1), services.AnswerIn(ann.player.pk, 0, 0)])
    assert isinstance(results[0], services.AnswerAck)
    assert isinstance(results[1], AlreadyAnswered)
    assert Answer.objects.get(player=ann.player).option == 1
    assert Answer.objects.filter(room=room).count() == 2


def test_an_answer_stored_by_another_process_after_the_check_does_not_lose_the_batch(make_room):
    """Between the duplicate check and the insert, another process stores one of the batch's answers (the
    same player on two connections): the insert fails on the unique constraint, and every other answer of
    the batch still goes in, each on its own."""
    room, (ann, ben) = _started(make_room)
    services.answer_submit(player_id=ann.player.pk, question_index=0, option=1)
    stored = Answer.objects.get(player=ann.player)
    calls = []
    elsewhere = []

    def another_process(execute, sql, params, many, context):
        if "answered_current" in sql:  # the batch looks at who has answered
            # The players it looks at (named twice): one array on PostgreSQL, one parameter each on SQLite.
            calls.append(len(params[0]) if isinstance(params[0], list) else len(params) // 2)
            if len(calls) == 1:  # Ann's answer is not there yet when the batch first looks ...
                Answer.objects.filter(pk=stored.pk).delete()
                elsewhere.append(stored)
        elif elsewhere and sql.startswith('INSERT INTO "lobby_answer"'):
            elsewhere.pop().save(force_insert=True)  # ... and is stored just before the batch's insert
        return execute(sql, params, many, context)

    batch = [services.AnswerIn(ann.player.pk, 0, 2), services.AnswerIn(ben.player.pk, 0, 0)]
    with connection.execute_wrapper(another_process):
        results = services.answers_submit(batch)
    assert calls == [2, 1, 1]  # the batch, then each answer on its own
    assert isinstance(results[0], AlreadyAnswered)
    assert isinstance(results[1], services.AnswerAck)
    room.refresh_from_db()
    assert room.phase == Phase.REVEAL
    assert sorted(Answer.objects.values_list("player__nickname", "option")) == [("Ann", 1), ("Ben", 0)]


def test_a_round_edited_after_a_game_plays_its_new_questions_in_the_next_game():
    from quiz.pages.host_rounds import host_round_save
    from quiz.validation import QuestionData

    before = QuestionData(text="Capital of Australia?", options=("Sydney", "Canberra"), correct_index=0)
    after = QuestionData(text="Capital of Australia (fixed)?", options=("Sydney", "Canberra"), correct_index=1)
    round_ = host_round_save(owner_key="host-1", round_id=None, title="Mine", questions=[before])

    def play():
        room = services.room_create(round_id=round_.pk, timer_seconds=20).room
        ann = services.player_join(code=room.code, nickname="Ann").player
        services.game_act(room_id=room.pk, action=Action.START)
        shown = room_snapshot(room_id=room.pk)["question"]
        # The room shows the options in its own order: Ann picks "Canberra" wherever it is.
        services.answer_submit(player_id=ann.pk, question_index=0, option=shown["options"].index("Canberra"))
        return shown["text"], Answer.objects.get(player=ann).correct

    assert play() == ("Capital of Australia?", False)
    host_round_save(owner_key="host-1", round_id=round_.pk, title="Mine", questions=[after])
    assert play() == ("Capital of Australia (fixed)?", True)


def test_the_snapshot_of_a_full_room_at_the_reveal_costs_four_queries(make_room, django_assert_max_num_queries):
    """Built for every broadcast and every join: its queries hold the GIL the fan-out waits for."""
    room, joined = _started(make_room, players=[f"P{i}" for i in range(20)])
    for i, j in enumerate(joined):
        services.answer_submit(player_id=j.player.pk, question_index=0, option=i % 4)
    with django_assert_max_num_queries(4):
        snapshot = room_snapshot(room_id=room.pk)
    assert snapshot["phase"] == Phase.REVEAL and len(snapshot["players"]) == 20
    assert snapshot["reveal"]["distribution"] == [5, 5, 5, 5] and len(snapshot["reveal"]["results"]) == 20
