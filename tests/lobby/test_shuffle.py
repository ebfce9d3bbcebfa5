"""Each room shows a question's options in its own order (seeded, recorded on the room), and everything that
reads the answers afterwards (the reveal, points, the crowd check, the results CSV) maps back to the round."""

import csv
import io

import pytest

from lobby import services
from lobby.models import Answer, Room
from lobby.reads.selectors import player_view, results_csv, room_snapshot
from lobby.rules import machine
from lobby.rules.machine import Action
from review.models import Flag
from tests.factories import PlayerFactory, RoomFactory, RoundFactory
from tests.support.communicator import Client

# SAMPLE's first question: "What is 2 + 2?" with ("3", "4", "5", "22"), "4" marked. With these seeds the two
# rooms show it as 5, 22, 3, 4 and 5, 4, 22, 3: the right answer at D in one room and at B in the other.
SEED_ONE, SEED_TWO = "room-one", "room-two"


def test_an_order_is_a_permutation_fixed_by_the_seed_and_the_question():
    orders = {machine.option_order(seed=f"seed-{n}", question_index=0, option_count=4) for n in range(40)}
    assert all(sorted(order) == [0, 1, 2, 3] for order in orders)
    assert len(orders) > 10  # 24 orders are possible; 40 seeds reach many of them
    again = machine.option_order(seed="seed-1", question_index=0, option_count=4)
    assert again == machine.option_order(seed="seed-1", question_index=0, option_count=4)
    assert machine.option_order(seed="", question_index=3, option_count=4) == (0, 1, 2, 3)  # an old room
    # Pinned: a stored seed must give the same order after any upgrade, or old rooms' exports would move.
    assert machine.option_order(seed="0123456789abcdef0123456789abcdef", question_index=7, option_count=6) == (
        1, 4, 2, 3, 0, 5,
    )  # fmt: skip
    order = machine.option_order(seed=SEED_ONE, question_index=0, option_count=4)
    assert all(machine.shown_option(order, machine.original_option(order, shown)) == shown for shown in range(4))


@pytest.mark.django_db
def test_a_room_the_app_makes_draws_its_own_secret_seed(make_round):
    round_ = make_round()
    seeds = {services.room_create(round_id=round_.pk, timer_seconds=20).room.option_seed for _ in range(3)}
    assert len(seeds) == 3 and all(len(seed) == 32 for seed in seeds)


def _room_playing(round_, seed: str, picks: dict[str, str], *, idle: int = 1) -> tuple[Room, dict[str, int]]:
    """A room of `round_` at question 1, each nickname answering the option with that text as shown; `idle`
    more players have not answered (so the question stays open)."""
    room = RoomFactory(round=round_, option_seed=seed)
    players = {name: PlayerFactory(room=room, nickname=name) for name in picks}
    for n in range(idle):
        PlayerFactory(room=room, nickname=f"Idle {n}")
    services.game_act(room_id=room.pk, action=Action.START)
    shown = room_snapshot(room_id=room.pk)["question"]["options"]
    for name, text in picks.items():
        services.answer_submit(player_id=players[name].pk, question_index=0, option=shown.index(text))
    return room, {name: player.pk for name, player in players.items()}


@pytest.mark.django_db
def test_two_rooms_of_one_round_show_their_own_orders_and_reveal_score_and_export_alike():
    round_ = RoundFactory()
    picks = {"Ann": "4", "Ben": "22", "Cy": "4"}
    rooms = [_room_playing(round_, seed, picks) for seed in (SEED_ONE, SEED_TWO)]
    before = [room_snapshot(room_id=room.pk) for room, _ in rooms]
    assert [s["question"]["options"] for s in before] == [["5", "22", "3", "4"], ["5", "4", "22", "3"]]
    assert all("reveal" not in s and "correct" not in str(s) for s in before)  # still nobody knows
    # Ann's phone shows her own choice where her room put it.
    assert [player_view(player_id=ids["Ann"])["option"] for _, ids in rooms] == [3, 1]

    reveals = []
    for room, _ in rooms:
        services.game_act(room_id=room.pk, action=Action.CLOSE)
        reveals.append(room_snapshot(room_id=room.pk))
    for reveal, (_, ids) in zip(reveals, rooms, strict=True):
        shown, revealed = reveal["question"]["options"], reveal["reveal"]
        assert shown[revealed["correct_index"]] == "4"  # the right option, marked in this room's order
        assert revealed["distribution"][shown.index("4")] == 2 and revealed["distribution"][shown.index("22")] == 1
        results = revealed["results"]
        assert shown[results[str(ids["Ann"])]["option"]] == "4" and shown[results[str(ids["Ben"])]["option"]] == "22"
        assert results[str(ids["Ann"])]["correct"] and not results[str(ids["Ben"])]["correct"]
        assert results[str(ids["Ann"])]["points"] > 0 and results[str(ids["Ben"])]["points"] == 0
    # The rows keep the round's option: "4" is its B, "22" its D, in both rooms.
    stored = [sorted(Answer.objects.filter(room=room).values_list("player__nickname", "option")) for room, _ in rooms]
    assert stored == [[("Ann", 1), ("Ben", 3), ("Cy", 1)]] * 2
    # Both rooms' answers arrived in the same instant here, so the scores match room for room.
    scores = [dict(room.players.values_list("nickname", "score")) for room, _ in rooms]
    assert scores[0]["Ann"] > 0 and scores[0]["Ben"] == 0 and scores[0].keys() == scores[1].keys()

    for room, _ in rooms:
        rows = {row[1]: row for row in csv.reader(io.StringIO(results_csv(room=room)))}
        assert rows["Ann"][3].startswith("B: 4 (right, ") and rows["Ben"][3] == "D: 22 (wrong, 0)"
        assert int(rows["Ann"][2]) == room.players.get(nickname="Ann").score


@pytest.mark.django_db
def test_the_crowd_check_of_a_shuffled_room_flags_in_the_rounds_order(django_capture_on_commit_callbacks, settings):
    settings.CROWD_MIN_ANSWERS = 3
    with django_capture_on_commit_callbacks(execute=True):  # the last answer closes the question: the reveal
        room, _ = _room_playing(RoundFactory(), SEED_ONE, {"Ann": "3", "Ben": "3", "Cy": "4"}, idle=0)
    assert Room.objects.get(pk=room.pk).phase == "reveal"
    flag = Flag.objects.get(kind="crowd")
    # "3" is the round's A and "4" its marked B, whatever this room showed.
    assert flag.detail["option"] == 0 and flag.detail["marked"] == 1
    assert flag.detail["distribution"] == [2, 1, 0, 0]
    assert room_snapshot(room_id=room.pk)["reveal"]["distribution"] == [0, 0, 2, 1]  # as the room showed it


@pytest.mark.django_db
def test_a_room_without_a_seed_plays_the_rounds_order():
    room = RoomFactory(option_seed="")
    PlayerFactory(room=room)
    services.game_act(room_id=room.pk, action=Action.START)
    assert room_snapshot(room_id=room.pk)["question"]["options"] == ["3", "4", "5", "22"]


@pytest.mark.django_db(transaction=True)
async def test_over_the_socket_a_player_names_and_gets_back_options_in_the_rooms_order(room, sockets, host_socket):
    created = await room(option_seed=SEED_ONE)
    code = created.room.code
    host = await host_socket(created)
    ann, joined = await sockets.join(code, "Ann")
    await sockets.join(code, "Ben")  # keeps the question open
    await host.send(type="start")
    question = await ann.state(phase="question")
    right = question["question"]["options"].index("4")
    assert right == 3  # D in this room; the round has it at B
    await ann.send(type="answer", question=0, option=right)
    assert (await ann.until(lambda m: m["type"] == "answered"))["option"] == right
    async with Client(code) as again:  # the phone reloads: its choice comes back where the room shows it
        await again.send(type="resume", token=joined["token"])
        assert (await again.state(phase="question"))["you"]["option"] == right
    await host.send(type="close")
    reveal = await ann.state(phase="reveal")
    assert reveal["reveal"]["correct_index"] == right
    mine = reveal["you"]["result"]
    assert mine["option"] == right and mine["correct"] and mine["points"] > 0
