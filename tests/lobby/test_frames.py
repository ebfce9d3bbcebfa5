"""A broadcast's common part is encoded once per process and each player's frame is that text plus their own
`you` (issue 31): the text is exactly the frame the sockets sent before, for every phase, and a cached common part
is never reused for another broadcast."""

import json

import pytest

from lobby import services
from lobby.reads.selectors import player_frame, player_you, room_picture
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
