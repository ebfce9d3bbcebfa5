"""A question's own time: validated, kept by the editor, the JSON and the database."""

import json

import pytest

from quiz.exceptions import InvalidQuestion
from quiz.importing import export_json, parse_json
from quiz.models import Round
from quiz.validation import clean_question


def editor_data(title: str, blocks: list[dict[str, str]]) -> dict[str, str]:
    data = {"title": title, "q-TOTAL_FORMS": str(len(blocks)), "q-INITIAL_FORMS": "0"}
    data.update({"q-MIN_NUM_FORMS": "0", "q-MAX_NUM_FORMS": "30"})
    for index, block in enumerate(blocks):
        data.update({f"q-{index}-{key}": value for key, value in block.items()})
    return data


def block(text: str, options: list[str], correct: int, **extra: str) -> dict[str, str]:
    return {
        "text": text,
        **{f"option_{n}": option for n, option in enumerate(options)},
        "correct": str(correct),
        **extra,
    }


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
