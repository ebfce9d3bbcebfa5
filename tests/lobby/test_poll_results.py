"""A poll has no right answer anywhere it is reported: the results CSV names each vote without "right" or
"wrong" and its column without a "[correct …]", and the results page shows its votes without a "% correct"."""

import csv
import io
import json
import re
import uuid

import pytest

from lobby import services
from lobby.models import Answer, Room
from quiz.importing import parse_json
from quiz.models import Round

pytestmark = pytest.mark.django_db(transaction=True)

QUESTIONS = [
    {"question": "Capital of France?", "options": ["Paris", "Lyon", "Nice"], "correct": "A"},
    {"kind": "poll", "question": "Where would you rather live?", "options": ["The deep ocean", "The Moon"]},
    {"kind": "multi", "question": "Which are even?", "options": ["2", "3", "4", "5"], "correct_indexes": [0, 2]},
]


@pytest.fixture(autouse=True)
def fresh_rate_limits(settings):
    settings.RATELIMIT_KEY_PREFIX = f"ratelimit-test-{uuid.uuid4().hex}"


def _played(client, make_round) -> Room:
    items = [{**item, "explanation": "", "source": ""} for item in QUESTIONS]
    round_ = make_round(parse_json(json.dumps({"questions": items})).questions, title="Votes")
    Round.objects.filter(pk=round_.pk).update(owner_key="browser-1")
    session = client.session
    session["owner_key"] = "browser-1"
    session.save()
    client.post("/", {"source": f"round:{round_.pk}", "timer_seconds": 20})
    room = Room.objects.get(round=round_)
    ada = services.player_join(code=room.code, nickname="Ada").player
    bo = services.player_join(code=room.code, nickname="Bo").player
    for player, first, vote in ((ada, 0, 0), (bo, 1, 0)):
        Answer.objects.create(
            room=room,
            player=player,
            question_index=0,
            option=first,
            elapsed_ms=1000,
            correct=first == 0,
            points=900 * (first == 0),
        )
        Answer.objects.create(
            room=room, player=player, question_index=1, option=vote, elapsed_ms=1000, correct=False, points=0
        )
    Answer.objects.create(
        room=room, player=ada, question_index=2, option=0, response=[0, 1], elapsed_ms=1000, correct=False, points=0
    )
    Room.objects.filter(pk=room.pk).update(question_index=2, phase="finished")
    return room


def test_the_results_csv_reports_a_poll_vote_without_right_or_wrong(client, make_round):
    room = _played(client, make_round)
    rows = list(csv.reader(io.StringIO(client.get(f"/host/{room.code}/results.csv").content.decode())))
    assert rows[0][3:5] == ["Q1: Capital of France? [correct A: Paris]", "Q2: Where would you rather live? [poll]"]
    by_name = {row[1]: row for row in rows[1:]}
    assert by_name["Ada"][3:5] == ["A: Paris (right, 900)", "A: The deep ocean"]
    assert by_name["Bo"][3:5] == ["B: Lyon (wrong, 0)", "A: The deep ocean"]


def test_the_results_csv_names_a_multi_answers_options_by_their_words(client, make_round):
    # A room shows the options in its own order: the round's letters would name what no phone showed.
    room = _played(client, make_round)
    rows = list(csv.reader(io.StringIO(client.get(f"/host/{room.code}/results.csv").content.decode())))
    assert rows[0][5] == "Q3: Which are even? [correct A: 2; C: 4]"
    assert {row[1]: row[5] for row in rows[1:]} == {"Ada": "2; 3 (wrong, 0)", "Bo": ""}


def test_the_results_page_shows_a_polls_votes_without_a_share_correct(client, make_round):
    room = _played(client, make_round)
    page = client.get(f"/host/{room.code}/results/").content.decode()
    articles = re.findall(r'<article class="card question-result".*?</article>', page, re.S)
    assert len(articles) == 3
    first, poll = articles[0], articles[1]
    assert "50% correct" in first and "(the answer)" in first
    assert "% correct" not in poll and "(the answer)" not in poll and 'class="correct"' not in poll
    assert "A poll: no right answer" in poll
    assert "The deep ocean" in poll and '<span class="count">2</span>' in poll
