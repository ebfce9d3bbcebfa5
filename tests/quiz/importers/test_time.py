"""A question's own time: validated, kept by the editor, the JSON and the database."""

import json

import pytest

from quiz.exceptions import InvalidQuestion
from quiz.importing import export_json, parse_json
from quiz.models import Round
from quiz.validation import clean_question
from tests.quiz.test_views import block, editor_data

BASE = {"question": "2 + 2?", "options": ["3", "4"], "correct": "B"}


@pytest.mark.parametrize(("given", "kept"), [(None, None), ("", None), (30, 30), ("45", 45), (20.0, 20)])
def test_seconds_read(given, kept):
    assert clean_question({**BASE, "seconds": given}).seconds == kept


@pytest.mark.parametrize("given", [0, 4, 241, "soon", 12.5, True])
def test_seconds_refused_with_a_reason(given):
    with pytest.raises(InvalidQuestion, match="time per question"):
        clean_question({**BASE, "seconds": given})


def test_json_round_trip_keeps_the_time():
    question = clean_question({**BASE, "seconds": 90})
    text = export_json(title="T", questions=[question])
    assert json.loads(text)["questions"][0]["seconds"] == 90
    assert parse_json(text).questions == [question]


@pytest.mark.django_db
def test_editor_sets_and_keeps_a_question_time(client):
    data = editor_data("Timed", [block("Quick one?", ["Yes", "No"], 0, seconds="15"), block("Slow?", ["A", "B"], 1)])
    assert client.post("/rounds/new/", data).status_code == 302
    round_ = Round.objects.get()
    assert [q.seconds for q in round_.questions.order_by("entries__position")] == [15, None]
    page = client.get(f"/rounds/{round_.pk}/edit/").content.decode()
    assert 'name="q-0-seconds" value="15"' in page
    bad = editor_data("Timed", [block("Quick one?", ["Yes", "No"], 0, seconds="1000")])
    response = client.post(f"/rounds/{round_.pk}/edit/", bad)
    assert "the time per question must be 5 to 240 seconds, not 1000" in response.content.decode()
