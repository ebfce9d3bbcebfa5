"""Ways to play as entries of one table (lobby/rules/ways.py), shown by "accuracy only", a way added as one entry and
its field: the host sets it in the lobby over the socket, every reader's picture says so, a late right answer
scores what an early one does, and once the game has started it is refused in its own words."""

from datetime import timedelta

import pytest
from channels.db import database_sync_to_async

from lobby import services
from lobby.models import Answer, Room
from lobby.reads.selectors import room_picture
from lobby.rules import ways
from lobby.rules.machine import Action

CORRECT = 1  # SAMPLE's first question: "What is 2 + 2?" -> "4", shown in the round's order


def _db(func):
    return database_sync_to_async(func)()


def _rewind(room_id: int, seconds: float) -> None:
    room = Room.objects.get(pk=room_id)
    shift = timedelta(seconds=seconds)
    Room.objects.filter(pk=room_id).update(
        question_started_at=room.question_started_at - shift, deadline=room.deadline - shift
    )


def _two_answers(make_room, **way) -> dict[str, int]:
    """Ann answers right at once, Ben right with half a second to spare: their points."""
    room = make_room(timer_seconds=20).room
    ann, ben = (services.player_join(code=room.code, nickname=name) for name in ("Ann", "Ben"))
    for name, value in way.items():
        services.room_way_set(room_id=room.pk, way=name, value=value)
    services.game_act(room_id=room.pk, action=Action.START)
    services.answer_submit(player_id=ann.player.pk, question_index=0, option=CORRECT)
    _rewind(room.pk, 19.5)
    services.answer_submit(player_id=ben.player.pk, question_index=0, option=CORRECT)
    return dict(Answer.objects.filter(room=room).values_list("player__nickname", "points"))


@pytest.mark.django_db
def test_with_accuracy_only_a_late_right_answer_scores_what_an_early_one_does(make_room):
    assert _two_answers(make_room, accuracy_only=True) == {"Ann": 1000, "Ben": 1000}
    # Without it, the same two answers: the late one scores about half.
    points = _two_answers(make_room)
    assert points["Ann"] > 990 and points["Ben"] < 520


@pytest.mark.django_db(transaction=True)
async def test_the_host_sets_accuracy_only_in_the_lobby_every_reader_sees_it_and_it_is_refused_mid_game(
    room, sockets, host_socket
):
    created = await room()
    host = await host_socket(created)
    ann, _ = await sockets.join(created.room.code, "Ann")

    await ann.send(type="accuracy_only", accuracy_only=True)
    assert (await ann.error())["message"] == "Only the host can do that."
    await host.send(type="accuracy_only", accuracy_only="yes")
    assert (await host.error())["message"] == "Say accuracy_only: true or false."

    await host.send(type="accuracy_only", accuracy_only=True)
    assert (await host.until(lambda m: m["type"] == "state" and m["accuracy_only"]))["no_speed_bonus"] is False
    assert (await ann.until(lambda m: m["type"] == "state" and m["accuracy_only"]))["phase"] == "lobby"

    await host.send(type="start")
    await host.until(lambda m: m["type"] == "state" and m["phase"] == "question")
    await host.send(type="accuracy_only", accuracy_only=False)
    refused = await host.error()
    assert (refused["code"], refused["message"]) == (
        "not_now",
        "Accuracy only can only be changed before the game starts.",
    )
    assert await _db(lambda: Room.objects.get(pk=created.room.pk).accuracy_only) is True


def test_a_way_that_takes_the_speed_bonus_away_takes_it_away_whatever_the_others_say():
    class Room_:
        no_speed_bonus = False
        accuracy_only = False

    room = Room_()
    assert ways.speed_bonus(room) is True
    room.accuracy_only = True
    assert ways.speed_bonus(room) is False
    room.accuracy_only, room.no_speed_bonus = False, True
    assert ways.speed_bonus(room) is False


def seats_board(room: dict, players: list[tuple], voided: list[int]) -> tuple[dict, dict]:
    """A way's board for the test below: how many sit in the room, and each player's seat."""
    return {"seats": len(players)}, {player_id: (seat, 1) for seat, (player_id, *_) in enumerate(players)}


@pytest.mark.django_db
def test_a_way_s_board_reaches_every_reader_s_picture_by_its_entry_alone(make_room, monkeypatch):
    room = make_room().room
    ann = services.player_join(code=room.code, nickname="Ann")
    assert "seats" not in room_picture(room_id=room.pk).snapshot
    seats = ways.Way("seats", {}, lambda row: {}, board=f"{__name__}.seats_board")
    monkeypatch.setattr(ways, "WAYS", (*ways.WAYS, seats))
    picture = room_picture(room_id=room.pk)
    assert picture.snapshot["seats"] == 1 and picture.standings.teams == {ann.player.pk: (0, 1)}
