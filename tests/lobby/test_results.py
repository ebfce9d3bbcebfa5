"""A game's results as its host reads them afterwards, and the host's past games (lobby/pages/results.py)."""

from datetime import timedelta

import pytest
from django.utils import timezone

from lobby.models import Player, Room
from lobby.pages.results import game_results, past_games
from lobby.tokens import host_token
from tests.factories import AnswerFactory, FlagFactory, PlayerFactory, ReportFactory, RoomFactory

pytestmark = pytest.mark.django_db


def _finished_game() -> Room:
    """SAMPLE's three questions (marked: 1, 2, 0) played by Ada, Bo, Cy and Di (removed before the end)."""
    room = RoomFactory()
    ada, bo, cy, di = (PlayerFactory(room=room, nickname=name) for name in ("Ada", "Bo", "Cy", "Di"))
    # Q1: Ada and Bo right (1), Cy wrong (0). Q2: only Cy right (2). Q3: nobody answered.
    AnswerFactory(player=ada, question_index=0, option=1, elapsed_ms=2000, points=900)
    AnswerFactory(player=bo, question_index=0, option=1, elapsed_ms=6000, points=700)
    AnswerFactory(player=cy, question_index=0, option=0, elapsed_ms=3000)
    AnswerFactory(player=cy, question_index=1, option=2, elapsed_ms=9000, points=600)
    AnswerFactory(player=di, question_index=1, option=3, elapsed_ms=100)  # removed: not counted
    Player.objects.filter(pk=ada.pk).update(score=900)
    Player.objects.filter(pk=bo.pk).update(score=700)
    Player.objects.filter(pk=cy.pk).update(score=600)
    Player.objects.filter(pk=di.pk).update(removed=True, score=5000)
    ReportFactory(player=bo, question_index=1, text="Mercury is not a planet?")
    question_1 = room.round.entries.get(position=0).question
    crowd = {"answers": 5, "option": 0, "share": 0.8, "marked": 1, "distribution": [4, 1, 0, 0]}
    FlagFactory(question=question_1, kind="crowd", room_code=room.code, detail=crowd)
    FlagFactory(question=question_1, kind="crowd", room_code="OTHER1", detail=crowd)  # another room's
    Room.objects.filter(pk=room.pk).update(phase="finished", question_index=2)
    room.refresh_from_db()
    return room


def test_the_standings_rank_the_players_still_in_the_game_with_their_right_answers():
    results = game_results(room=_finished_game())
    assert results.finished and results.played == 3
    assert [(s.rank, s.nickname, s.score, s.correct) for s in results.standings] == [
        (1, "Ada", 900, 1),
        (2, "Bo", 700, 1),
        (3, "Cy", 600, 1),
    ]


def test_each_question_has_its_share_correct_distribution_and_median_time():
    first, second, third = game_results(room=_finished_game()).questions
    assert first.text == "What is 2 + 2?" and first.answered == 3
    assert first.share_correct == pytest.approx(2 / 3)
    assert first.median_ms == 3000 and first.median_seconds == 3.0
    assert [(o.letter, o.text, o.count, o.correct) for o in first.options] == [
        ("A", "3", 1, False),
        ("B", "4", 2, True),
        ("C", "5", 0, False),
        ("D", "22", 0, False),
    ]
    # The removed player's answer is out, as the reveal left it out.
    assert second.answered == 1 and second.share_correct == 1.0 and second.median_ms == 9000
    assert [o.count for o in second.options] == [0, 0, 1, 0]
    assert third.played and third.answered == 0 and third.share_correct is None and third.median_ms is None


def test_flags_of_this_room_and_player_reports_are_shown_on_their_question():
    first, second, _ = game_results(room=_finished_game()).questions
    assert [(f.kind, f.detail) for f in first.flags] == [("The crowd disagrees", "80% of 5 answers chose A: 3")]
    assert first.reports == []
    assert [(r.nickname, r.text) for r in second.reports] == [("Bo", "Mercury is not a planet?")]
    assert second.flags == []  # the report's own review flag is the report, listed once


def test_a_game_in_progress_counts_only_the_closed_questions():
    room = RoomFactory()
    ada = PlayerFactory(room=room, nickname="Ada")
    AnswerFactory(player=ada, question_index=0, option=1, elapsed_ms=1000)
    AnswerFactory(player=ada, question_index=1, option=2, elapsed_ms=1000)  # the open question
    Room.objects.filter(pk=room.pk).update(phase="question", question_index=1)
    room.refresh_from_db()
    results = game_results(room=room)
    assert not results.finished and results.played == 1
    assert [q.played for q in results.questions] == [True, False, False]
    assert results.questions[1].answered == 0 and results.standings[0].correct == 1


def test_past_games_are_the_owners_and_this_browsers_newest_first():
    old = RoomFactory(owner_key="mine")
    new = RoomFactory(owner_key="mine")
    Room.objects.filter(pk=old.pk).update(created_at=timezone.now() - timedelta(days=2))
    PlayerFactory(room=new, nickname="Ada")
    RoomFactory(owner_key="theirs")
    by_token = RoomFactory()  # from before owner keys, created in this browser
    cohosted = RoomFactory(owner_key="theirs")
    replaced = RoomFactory(owner_key="theirs")
    tokens = {
        by_token.code: host_token(room_code=by_token.code),
        cohosted.code: host_token(room_code=cohosted.code, cohost_generation=0),
        replaced.code: host_token(room_code=replaced.code, cohost_generation=0),
    }
    Room.objects.filter(pk=replaced.pk).update(cohost_generation=1)  # that co-host link was replaced
    games = past_games(owner_key="mine", host_tokens=tokens)
    assert [g.room.code for g in games] == [cohosted.code, by_token.code, new.code, old.code]
    assert [g.players for g in games] == [0, 0, 1, 0]
    assert past_games(owner_key="", host_tokens={}) == []
    assert [g.room.code for g in past_games(owner_key="", host_tokens=tokens)] == [cohosted.code, by_token.code]
