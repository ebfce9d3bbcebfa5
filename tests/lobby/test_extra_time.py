"""Accessibility mode: the host's extra time for a player (x1.5, x2) and rooms without a speed bonus, through the
real services, consumers, database and game clock."""

from datetime import timedelta

import pytest
from channels.db import database_sync_to_async
from django.utils import timezone

from lobby import services
from lobby.exceptions import NotNow, TooLate
from lobby.models import Answer, Player, Room
from lobby.reads.selectors import room_snapshot
from lobby.rules.machine import Action, Phase
from lobby.services import review
from quiz.models import Round
from tests.support.communicator import Client

CORRECT = 1  # SAMPLE's first question: "What is 2 + 2?" -> "4", shown in the round's order


def _db(func):
    return database_sync_to_async(func)()


def _started(make_room, *, players=("Ann", "Ben"), timer_seconds=20, no_speed_bonus=False):
    created = make_room(timer_seconds=timer_seconds)
    joined = [services.player_join(code=created.room.code, nickname=name) for name in players]
    if no_speed_bonus:
        services.room_set_no_speed_bonus(room_id=created.room.pk, no_speed_bonus=True)
    return created.room, joined


def _start(room: Room) -> Room:
    services.game_act(room_id=room.pk, action=Action.START)
    return Room.objects.get(pk=room.pk)


def _rewind(room_id: int, seconds: float) -> None:
    """Move the open question `seconds` into the past, as if that much of it had been played."""
    room = Room.objects.get(pk=room_id)
    shift = timedelta(seconds=seconds)
    Room.objects.filter(pk=room_id).update(
        question_started_at=room.question_started_at - shift, deadline=room.deadline - shift
    )


# -- the clock keeps each player's own deadline ------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
async def test_a_player_with_x2_answers_after_the_others_deadline_is_counted_and_the_question_closes_at_theirs(
    room, sockets, game_clock, host_socket
):
    created = await room(timer_seconds=10)
    code = created.room.code
    host = await host_socket(created)
    ann, joined = await sockets.join(code, "Ann")
    ben, _ = await sockets.join(code, "Ben")
    await host.send(type="extra_time", player=joined["player"]["id"], percent=200)
    given = await host.until(lambda m: m["type"] == "state" and m["extra_time"])
    assert given["extra_time"] == {str(joined["player"]["id"]): 200}
    await host.send(type="start", phase="lobby", index=-1)

    opened = await ann.state(phase="question")
    assert 19_000 < opened["you"]["remaining_ms"] <= 20_000  # Ann's own 20 s
    assert 9_000 < opened["remaining_ms"] <= 10_000  # everyone else's 10 s, as the host's screen counts
    bens = await ben.state(phase="question")
    assert bens["you"]["time_percent"] == 100 and bens["you"]["remaining_ms"] == bens["remaining_ms"]
    assert "extra_time" not in bens and "extra_time" not in opened  # who has extra time is the host's to know
    hosts = await host.state(phase="question")
    assert 9_000 < hosts["remaining_ms"] <= 10_000

    # 19.4 s into the question: Ben's deadline is 9.4 s behind us, Ann's 0.6 s ahead.
    await _db(lambda: _rewind(created.room.pk, 19.4))
    await ben.send(type="answer", question=0, option=CORRECT)
    refused = await ben.error()
    assert refused["code"] == "too_late" and "Time is up" in refused["message"]
    await ann.send(type="answer", question=0, option=CORRECT)
    assert (await ann.until(lambda m: m["type"] == "answered"))["question"] == 0
    counted = await host.until(lambda m: m["type"] == "answers")
    assert counted["answered_count"] == 1
    assert await _db(lambda: Room.objects.get(pk=created.room.pk).phase) == Phase.QUESTION  # still Ann's time

    deadline = await _db(lambda: Room.objects.get(pk=created.room.pk).deadline)
    reveal = await ann.state(phase="reveal")
    assert timezone.now() >= deadline  # closed by the clock at Ann's deadline, not before
    mine = reveal["you"]["result"]
    # 19.4 s of her 20: about 515 points (1000 x (1 - 19.4 / 40)), where 19.4 s of 10 would have been past time.
    assert mine["correct"] is True and 500 < mine["points"] < 530
    hosts_reveal = await host.state(phase="reveal")
    assert hosts_reveal["reveal"]["results"] == {str(joined["player"]["id"]): mine}  # Ben's late answer not counted


@pytest.mark.django_db
def test_the_room_closes_when_everyone_has_answered_even_inside_extra_time(make_room):
    room, (ann, ben) = _started(make_room)
    services.player_time_set(room_id=room.pk, player_id=ann.player.pk, time_percent=200)
    _start(room)
    services.answer_submit(player_id=ann.player.pk, question_index=0, option=CORRECT)
    services.answer_submit(player_id=ben.player.pk, question_index=0, option=0)
    assert Room.objects.get(pk=room.pk).phase == Phase.REVEAL


@pytest.mark.django_db
def test_extra_time_given_during_a_question_moves_the_players_deadline_and_the_rooms(make_room):
    room, (ann, ben) = _started(make_room, timer_seconds=10)
    room = _start(room)
    before = room.deadline
    _rewind(room.pk, 10.5)  # past everyone's 10 s
    services.player_time_set(room_id=room.pk, player_id=ann.player.pk, time_percent=150)
    after = Room.objects.get(pk=room.pk).deadline
    assert after - (before - timedelta(seconds=10.5)) == timedelta(seconds=5)
    assert services.close_due_questions() == 0  # Ann has 4.5 s left
    services.answer_submit(player_id=ann.player.pk, question_index=0, option=CORRECT)
    with pytest.raises(TooLate):
        services.answer_submit(player_id=ben.player.pk, question_index=0, option=CORRECT)
    # Ann leaves before the end of her time: the question closes at the others' deadline, which has passed.
    services.player_remove(room_id=room.pk, player_id=ann.player.pk)
    assert services.close_due_questions() == 1


@pytest.mark.django_db
def test_after_an_outage_a_player_without_extra_time_still_gets_the_few_seconds_more(make_room, settings):
    room, (ann, ben) = _started(make_room, timer_seconds=10)
    services.player_time_set(room_id=room.pk, player_id=ann.player.pk, time_percent=200)
    room = _start(room)
    _rewind(room.pk, 19.9)  # Ben's time ran out during the outage, Ann's nearly
    assert services.resume_after_outage() == 1
    services.answer_submit(player_id=ben.player.pk, question_index=0, option=CORRECT)
    snapshot = room_snapshot(room_id=room.pk)
    assert snapshot["remaining_ms"] > (settings.DB_OUTAGE_RESUME_SECONDS - 1) * 1000


# -- no speed bonus --------------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_with_no_speed_bonus_a_late_correct_answer_scores_the_same_as_an_early_one(make_room):
    room, (ann, ben) = _started(make_room, no_speed_bonus=True)
    _start(room)
    services.answer_submit(player_id=ann.player.pk, question_index=0, option=CORRECT)  # at once
    _rewind(room.pk, 19.5)
    services.answer_submit(player_id=ben.player.pk, question_index=0, option=CORRECT)  # half a second to spare
    points = dict(Answer.objects.filter(room=room).values_list("player__nickname", "points"))
    assert points == {"Ann": 1000, "Ben": 1000}

    # The same two answers in a room that rewards speed: the late one scores about half.
    room, (ann, ben) = _started(make_room)
    _start(room)
    services.answer_submit(player_id=ann.player.pk, question_index=0, option=CORRECT)
    _rewind(room.pk, 19.5)
    services.answer_submit(player_id=ben.player.pk, question_index=0, option=CORRECT)
    points = dict(Answer.objects.filter(room=room).values_list("player__nickname", "points"))
    assert points["Ann"] > 990 and points["Ben"] < 520


@pytest.mark.django_db
def test_the_speed_bonus_is_chosen_at_room_creation_or_in_the_lobby_and_not_changed_mid_game(make_round):
    created = services.room_create(round_id=make_round().pk, timer_seconds=20, no_speed_bonus=True)
    assert room_snapshot(room_id=created.room.pk)["no_speed_bonus"] is True
    services.room_set_no_speed_bonus(room_id=created.room.pk, no_speed_bonus=False)
    services.player_join(code=created.room.code, nickname="Ann")
    _start(created.room)
    with pytest.raises(NotNow, match="before the game starts"):
        services.room_set_no_speed_bonus(room_id=created.room.pk, no_speed_bonus=True)
    assert Room.objects.get(pk=created.room.pk).no_speed_bonus is False


# -- asking for more time, and who may give it ------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
async def test_a_player_asks_for_more_time_when_joining_and_the_host_confirms_or_declines(room, sockets, host_socket):
    created = await room()
    code = created.room.code
    host = await host_socket(created)
    cat = await sockets.open(Client(code))
    await cat.send(type="join", nickname="Cat", more_time=True)
    cat_id = (await cat.until(lambda m: m["type"] == "joined"))["player"]["id"]
    dan = await sockets.open(Client(code))
    await dan.send(type="join", nickname="Dan", more_time=True)
    dan_id = (await dan.until(lambda m: m["type"] == "joined"))["player"]["id"]
    asked = await host.until(lambda m: m["type"] == "state" and len(m["time_requests"]) == 2)
    assert set(asked["time_requests"]) == {cat_id, dan_id} and asked["extra_time"] == {}
    waiting = await cat.state(phase="lobby")
    assert waiting["you"]["asks_more_time"] is True and waiting["you"]["time_percent"] == 100
    assert "time_requests" not in waiting

    await host.send(type="extra_time", player=cat_id, percent=150)
    await host.send(type="decline_time", player=dan_id)
    settled = await host.until(lambda m: m["type"] == "state" and not m["time_requests"])
    assert settled["extra_time"] == {str(cat_id): 150}
    confirmed = await cat.until(lambda m: m["type"] == "state" and m["you"]["time_percent"] == 150)
    assert confirmed["you"]["asks_more_time"] is False
    declined = await dan.until(lambda m: m["type"] == "state" and not m["you"]["asks_more_time"])
    assert declined["you"]["time_percent"] == 100


@pytest.mark.django_db(transaction=True)
async def test_a_player_cannot_give_anyone_extra_time(room, sockets):
    created = await room()
    code = created.room.code
    eve, joined = await sockets.join(code, "Eve")
    eve_id = joined["player"]["id"]
    await eve.send(type="extra_time", player=eve_id, percent=200)
    assert (await eve.error())["message"] == "Only the host can do that."
    await eve.send(type="decline_time", player=eve_id)
    assert (await eve.error())["message"] == "Only the host can do that."
    await eve.send(type="speed_bonus", no_speed_bonus=True)
    assert (await eve.error())["message"] == "Only the host can do that."
    eve_row = await _db(lambda: Player.objects.get(pk=eve_id))
    assert eve_row.time_percent == 100
    assert await _db(lambda: Room.objects.get(pk=created.room.pk).no_speed_bonus) is False


@pytest.mark.django_db(transaction=True)
async def test_the_host_gets_a_clear_message_for_a_time_the_game_does_not_offer(room, sockets, host_socket):
    created = await room()
    code = created.room.code
    host = await host_socket(created)
    _, joined = await sockets.join(code, "Ann")
    for percent in (300, "200", True, None):
        await host.send(type="extra_time", player=joined["player"]["id"], percent=percent)
        assert (await host.error())["message"] == "Choose the time: x1, x1.5 or x2."
    await host.send(type="extra_time", player="Ann", percent=200)
    assert (await host.error())["code"] == "bad_message"
    assert await _db(lambda: Player.objects.get(pk=joined["player"]["id"]).time_percent) == 100


@pytest.mark.django_db
def test_a_void_recomputes_an_extra_time_answer_over_the_window_it_was_played_with(make_room):
    room, (ann,) = _started(make_room, players=("Ann",), timer_seconds=10)
    services.player_time_set(room_id=room.pk, player_id=ann.player.pk, time_percent=200)
    _start(room)
    _rewind(room.pk, 10)
    services.answer_submit(player_id=ann.player.pk, question_index=0, option=CORRECT)  # closes: she was the last
    played = Answer.objects.get(player=ann.player).points
    assert 740 < played < 760  # 10 s of her 20
    services.player_time_set(room_id=room.pk, player_id=ann.player.pk, time_percent=100)  # taken back later
    review.scores_recompute(Room.objects.get(pk=room.pk))  # scores her answer over the window it was given
    assert Answer.objects.get(player=ann.player).points == played


@pytest.mark.django_db
def test_the_host_chooses_no_speed_bonus_when_creating_the_room(client, make_round):
    round_ = make_round(title="Calm quiz")
    Round.objects.filter(pk=round_.pk).update(owner_key="browser-1")
    session = client.session
    session["owner_key"] = "browser-1"
    session.save()
    assert "No speed bonus" in client.get("/").content.decode()
    client.post("/", {"source": f"round:{round_.pk}", "timer_seconds": 20, "no_speed_bonus": "on"})
    client.post("/", {"source": f"round:{round_.pk}", "timer_seconds": 20})
    assert list(Room.objects.filter(round=round_).order_by("pk").values_list("no_speed_bonus", flat=True)) == [
        True,
        False,
    ]
