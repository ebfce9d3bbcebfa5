"""A moment to read (issue 30): the question alone for the room's reading seconds, no answer taken during it,
the clock and the speed bonus counted from when the options appear; set at creation or in the lobby only.
Through the real services, consumers and database; the moment is measured by the answer's own received time."""

from datetime import timedelta

import pytest
from channels.db import database_sync_to_async

from lobby import services
from lobby.exceptions import AnswerRefused, NotNow
from lobby.models import Answer, Room
from lobby.reads.selectors import room_snapshot
from lobby.rules.machine import Action
from quiz.models import Round

CORRECT = 1  # SAMPLE's first question: "What is 2 + 2?" -> "4", shown in the round's order


def _reading_room(make_round, *, reading_seconds: int, timer_seconds: int = 20):
    created = services.room_create(
        round_id=make_round().pk, timer_seconds=timer_seconds, option_seed="", reading_seconds=reading_seconds
    )
    players = [services.player_join(code=created.room.code, nickname=name) for name in ("Ann", "Ben")]
    return created, players


@pytest.mark.django_db
def test_no_answer_is_taken_while_the_question_is_read_and_the_speed_bonus_counts_from_the_options(make_round):
    created, (ann, ben) = _reading_room(make_round, reading_seconds=5)
    services.game_act(room_id=created.room.pk, action=Action.START)
    room = Room.objects.get(pk=created.room.pk)
    shown = room.question_started_at - timedelta(seconds=5)  # when the question itself appeared

    with pytest.raises(AnswerRefused, match="still being read"):
        services.answer_submit(
            player_id=ann.player.pk, question_index=0, option=CORRECT, received_at=shown + timedelta(seconds=4.9)
        )
    assert not Answer.objects.filter(room=room).exists()  # the refused one left nothing behind

    # Ann answers the moment the options appear, Ben 10 s after them: Ann gets full marks, Ben about three quarters,
    # exactly as if the question had opened with its options (the 5 s of reading cost nobody anything).
    services.answer_submit(
        player_id=ann.player.pk, question_index=0, option=CORRECT, received_at=room.question_started_at
    )
    services.answer_submit(
        player_id=ben.player.pk,
        question_index=0,
        option=CORRECT,
        received_at=room.question_started_at + timedelta(seconds=10),
    )
    elapsed = dict(Answer.objects.filter(room=room).values_list("player__nickname", "elapsed_ms"))
    assert elapsed == {"Ann": 0, "Ben": 10_000}
    # The question stays open the full 20 s after its options appeared: 25 s after it was shown.
    assert room.deadline - shown == timedelta(seconds=25)


@pytest.mark.django_db
def test_the_players_frames_say_how_long_is_left_to_read_and_the_clock_waits_for_it(make_round):
    created, _ = _reading_room(make_round, reading_seconds=5)
    services.game_act(room_id=created.room.pk, action=Action.START)
    snapshot = room_snapshot(room_id=created.room.pk)
    assert 4_000 < snapshot["reading_ms"] <= 5_000
    # The countdown, shown from the options' appearance, still holds the whole timer.
    assert 19_500 < snapshot["remaining_ms"] <= 20_000 and snapshot["reading_seconds"] == 5
    assert snapshot["question"]["options"]  # shown to the phone, which keeps them hidden until reading_ms

    # Without a moment to read: nothing to wait for, the clock already running.
    created, _ = _reading_room(make_round, reading_seconds=0)
    services.game_act(room_id=created.room.pk, action=Action.START)
    snapshot = room_snapshot(room_id=created.room.pk)
    assert snapshot["reading_ms"] == 0 and 19_000 < snapshot["remaining_ms"] <= 20_000


@pytest.mark.django_db
def test_the_moment_is_0_to_10_s_chosen_at_creation_or_in_the_lobby_and_not_changed_mid_game(make_round):
    for bad in (-1, 11, 2.5, True, "3"):
        with pytest.raises(NotNow, match="0 to 10 seconds"):
            services.room_create(round_id=make_round().pk, timer_seconds=20, reading_seconds=bad)
    created, _ = _reading_room(make_round, reading_seconds=0)
    assert Room.objects.get(pk=created.room.pk).reading_seconds == 0  # the default: off
    services.room_set_reading_seconds(room_id=created.room.pk, reading_seconds=3)
    assert room_snapshot(room_id=created.room.pk)["reading_seconds"] == 3
    services.game_act(room_id=created.room.pk, action=Action.START)
    with pytest.raises(NotNow, match="before the game starts"):
        services.room_set_reading_seconds(room_id=created.room.pk, reading_seconds=0)
    assert Room.objects.get(pk=created.room.pk).reading_seconds == 3


@pytest.mark.django_db
def test_the_host_chooses_the_moment_when_creating_the_room_and_a_bad_value_is_said(client, make_round):
    round_ = make_round(title="Slow readers")
    Round.objects.filter(pk=round_.pk).update(owner_key="browser-1")
    session = client.session
    session["owner_key"] = "browser-1"
    session.save()
    assert 'name="reading_seconds"' in client.get("/").content.decode()
    refused = client.post("/", {"source": f"round:{round_.pk}", "timer_seconds": 20, "reading_seconds": 11})
    assert refused.status_code == 200 and not Room.objects.filter(round=round_).exists()
    assert "less than or equal to 10" in refused.content.decode()
    made = client.post("/", {"source": f"round:{round_.pk}", "timer_seconds": 20, "reading_seconds": 4})
    assert made.status_code == 302 and Room.objects.get(round=round_).reading_seconds == 4
    # A form without the field (an older page) makes a room without a moment to read.
    client.post("/", {"source": f"round:{round_.pk}", "timer_seconds": 20})
    assert list(Room.objects.filter(round=round_).order_by("pk").values_list("reading_seconds", flat=True)) == [4, 0]


@pytest.mark.django_db(transaction=True)
async def test_the_host_sets_it_in_the_lobby_over_the_socket_and_a_player_cannot(room, sockets, host_socket):
    created = await room()
    host = await host_socket(created)
    player, _ = await sockets.join(created.room.code, "Ann")
    await host.send(type="reading", seconds=5)
    state = await host.until(lambda m: m["type"] == "state" and m["reading_seconds"] == 5)
    assert state["reading_seconds"] == 5
    await host.send(type="reading", seconds="five")
    assert (await host.error())["code"] == "bad_message"
    await player.send(type="reading", seconds=0)
    assert (await player.error())["message"] == "Only the host can do that."
    reading = await database_sync_to_async(lambda: Room.objects.get(pk=created.room.pk).reading_seconds)()
    assert reading == 5
