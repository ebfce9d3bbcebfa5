"""A broadcast's common part is encoded once per process and each player's frame is that text plus their own
`you` (issue 31): the text is exactly the frame the sockets sent before, for every phase, and a cached common part
is never reused for another broadcast."""

import json

import pytest

from lobby import services
from lobby.models import Team
from lobby.reads.selectors import Standings, player_frame, player_you, player_you_texts, room_picture
from lobby.realtime import frames
from lobby.rules.machine import Action


def _broadcast(snapshot: dict, sent_at: float) -> dict:
    # What each consumer of a process gets from the channel layer: its own copy of the sender's dict.
    return json.loads(json.dumps({**snapshot, "sent_at": sent_at}))


@pytest.mark.django_db
def test_each_players_text_is_the_frame_it_replaces_in_every_phase(make_room):
    created = make_room(timer_seconds=20)
    joined = [services.player_join(code=created.room.code, nickname=name) for name in ("Ann", "Bén", 'Q"uo')]
    room_id = created.room.pk
    seen = set()
    for step, action in enumerate([None, Action.START, Action.CLOSE, Action.NEXT, Action.NEXT]):
        if action is not None:
            services.game_act(room_id=room_id, action=action)
        if action is Action.START:
            services.answer_submit(player_id=joined[0].player.pk, question_index=0, option=1)
        picture = room_picture(room_id=room_id)
        common = _broadcast(picture.snapshot, sent_at=1000.0 + step)
        seen.add(common["phase"])
        for player in joined:
            answered = {0: 1} if player is joined[0] else {}
            you = player_you(common, picture.standings, player_id=player.player.pk, answered=answered)
            text = frames.player_text(common, you)
            frame = player_frame(common, picture.standings, player_id=player.player.pk, answered=answered)
            assert text == json.dumps(frame)
            assert json.loads(text) == frame and json.loads(text)["you"]["nickname"] == player.player.nickname
    assert seen == {"lobby", "question", "reveal", "leaderboard"}


def test_the_common_part_is_encoded_once_per_broadcast_and_never_for_another():
    question = {"type": "state", "code": "ABCDEF", "seq": 7, "phase": "question", "sent_at": 5.0, "question": {}}
    first = frames.common_prefix(dict(question))
    # Another consumer's copy of the same broadcast: the same text, not encoded again.
    assert frames.common_prefix(json.loads(json.dumps(question))) is first
    # The next broadcast of the room (the reveal, seq 8) and a heal's re-send (a new sent_at) get their own text.
    reveal = {**question, "seq": 8, "phase": "reveal", "reveal": {"correct_index": 2}}
    assert '"correct_index": 2' in frames.common_prefix(reveal)
    assert "correct_index" not in frames.common_prefix({**question, "sent_at": 6.0})
    # A reader's own snapshot (no sent_at) is encoded whole each time.
    own = {k: v for k, v in question.items() if k != "sent_at"}
    assert frames.common_prefix(own) == frames.common_prefix(dict(own)) and frames.common_prefix(own) is not (
        frames.common_prefix(own)
    )
    assert json.loads(frames.player_text(own, {"id": 1})) == {**own, "you": {"id": 1}}
    assert json.loads(frames.player_text({}, {"id": 1})) == {"you": {"id": 1}}


def _named_teams_room(make_round):
    created = services.room_create(
        round_id=make_round().pk, timer_seconds=20, option_seed="", teams_mode="named", team_names="Owls\nFoxes"
    )
    return created.room, list(Team.objects.filter(room=created.room).order_by("order"))


def _team_of(teams, n):
    team = teams[n % len(teams)]
    return None if team is None else team.pk


@pytest.mark.django_db
@pytest.mark.parametrize("with_teams", [False, True])
def test_each_phones_broadcast_frame_carries_its_own_you_equal_to_the_frame_built_one_by_one(
    make_room, make_round, with_teams
):
    """Issue 47: a broadcast's `you` parts are built once per process for every player; each phone's frame is still
    exactly the one built for it alone (its score, rank, answer, time, team, result), and no one else's."""
    if with_teams:
        room, teams = _named_teams_room(make_round)
        code, room_id = room.code, room.pk
    else:
        created = make_room(timer_seconds=20)
        code, room_id, teams = created.room.code, created.room.pk, [None]
    names = ("Ann", "Bén", 'Q"uo', "Zoë 🦊", "Eve")
    joined = [
        services.player_join(code=code, nickname=name, asks_more_time=n == 3, team=_team_of(teams, n))
        for n, name in enumerate(names)
    ]
    services.player_time_set(room_id=room_id, player_id=joined[1].player.pk, time_percent=150)
    answered = {player.player.pk: {} for player in joined}
    parts = set()  # every part a `you` can have, seen at least once
    for step, action in enumerate([None, Action.START, None, Action.CLOSE, Action.NEXT, Action.NEXT]):
        if action is not None:
            services.game_act(room_id=room_id, action=action)
        if step == 2:  # two players answer the first question: the next broadcast finds them answered
            for player, option in ((joined[0], 1), (joined[4], 0)):
                services.answer_submit(player_id=player.player.pk, question_index=0, option=option)
                answered[player.player.pk] = {0: option}
        picture = room_picture(room_id=room_id)
        common = _broadcast(picture.snapshot, sent_at=2000.0 + step)
        for player in joined:
            pk = player.player.pk
            text = frames.broadcast_text(common, picture.standings, pk, answered[pk], player_you_texts)
            you = player_you(common, picture.standings, player_id=pk, answered=answered[pk])
            assert text == frames.player_text(common, you)
            frame = json.loads(text)
            assert frame["you"]["id"] == pk and frame["you"]["nickname"] == player.player.nickname
            parts |= {key for key, value in frame["you"].items() if value not in (None, False, 100)}
            # Nobody else's own part: another player's name is only where the common part has it (the top places).
            board = {line["nickname"] for line in frame.get("top", [])}
            for other in joined:
                if other is not player and other.player.nickname not in board:
                    assert json.dumps(other.player.nickname) not in text
    assert {"answered", "option", "result", "time_percent", "asks_more_time", "remaining_ms"} <= parts
    assert ("team" in parts) is with_teams
    # A player removed from the picture gets no frame of its standings.
    assert frames.broadcast_text(common, picture.standings, -1, {}, player_you_texts) is None


@pytest.mark.django_db
def test_a_broadcasts_texts_serve_only_the_standings_they_were_built_from(make_room):
    created = make_room(timer_seconds=20)
    joined = services.player_join(code=created.room.code, nickname="Ann")
    first = room_picture(room_id=created.room.pk)
    common = _broadcast(first.snapshot, sent_at=3000.0)
    before = frames.broadcast_text(common, first.standings, joined.player.pk, {}, player_you_texts)
    # The same broadcast handed out with another picture (a heal's, read later): its own scores, not the kept ones.
    other = Standings(players={joined.player.pk: ("Ann", 500, 1)})
    after = frames.broadcast_text(common, other, joined.player.pk, {}, player_you_texts)
    assert json.loads(before)["you"]["score"] == 0 and json.loads(after)["you"]["score"] == 500
