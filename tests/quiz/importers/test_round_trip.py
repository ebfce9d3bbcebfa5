"""Export to another tool's format, import the file back: the same questions, for every kind the format holds."""

import base64
from dataclasses import replace

import pytest

from quiz import importers
from quiz.importers import gift, kahoot, moodle_export
from quiz.validation import QuestionData, clean_question

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAgAAAAGCAIAAABxZ0isAAAAFElEQVR4nGM8ISfHgA0wYRWlkwQAmxQBECiKgAAAAAAASUVORK5CYII="
)


@pytest.fixture
def questions() -> list[QuestionData]:
    raw = [
        {
            "question": 'Capital of Australia? (not "Sydney" & <b>not</b> Perth)',
            "options": ["Sydney", "Canberra", "Perth {west}"],
            "correct": "B",
            "explanation": "Chosen in 1908: a compromise = fair.",
            "seconds": 30,
            "image": {"data": "data:image/png;base64," + base64.b64encode(PNG).decode(), "alt": "A red flag"},
        },
        {"kind": "multi", "question": "Primes?", "options": ["2", "3", "4", "9"], "correct_indexes": [0, 1]},
        {"kind": "multi", "question": "Odd ones?", "options": ["1", "3", "5", "6"], "correct_indexes": [0, 1, 2]},
        {"kind": "true_false", "question": "The Sun is a star.", "answer": True, "seconds": 10},
        {"kind": "true_false", "question": "Pluto is a planet: yes~no?", "answer": False},
        {"kind": "typed", "question": "Red planet?", "answers": ["Mars", "planet Mars"]},
        {"kind": "number", "question": "Moon landing year?", "answer": 1969, "tolerance": 1, "min": 1900, "max": 2000},
        {"kind": "poll", "question": "Favourite season?", "options": ["Spring", "Summer"]},
        {"kind": "order", "question": "Oldest first", "items": ["Rome", "Paris", "Brasília"]},
    ]
    return [clean_question(item) for item in raw]


def comparable(question: QuestionData, *, keeps_time: bool, keeps_image: bool = True) -> QuestionData:
    # A number question's slider bounds are not in GIFT or Moodle: they are drawn anew around the answer.
    key = dict(question.key)
    if question.kind == "number":
        key = {name: key[name] for name in ("answer", "tolerance", "unit")}
    return replace(
        question,
        key=key,
        seconds=question.seconds if keeps_time else None,
        image=question.image if keeps_image else None,
    )


@pytest.mark.parametrize("writer", [gift.export, moodle_export.export], ids=["gift", "moodle"])
def test_gift_and_moodle_round_trip(questions, writer):
    content, left_out = writer("Mixed bag", questions)
    back = importers.read("", content)
    assert back.errors == []
    assert back.title == "Mixed bag"
    assert left_out == ["Favourite season?", "Oldest first"]
    keeps_image = writer is moodle_export.export  # GIFT carries no pictures
    expected = [comparable(q, keeps_time=False, keeps_image=keeps_image) for q in questions[:7]]
    assert [comparable(q, keeps_time=False) for q in back.questions] == expected
    number = back.questions[6]
    assert number.key["min"] < 1968 and number.key["max"] > 1970


def test_kahoot_round_trip_keeps_time(questions):
    content, left_out = kahoot.export("Mixed bag", questions)
    back = importers.read("round.xlsx", content)
    assert back.format_label == "Kahoot! spreadsheet"
    assert back.errors == []
    assert left_out == ["Red planet?", "Moon landing year?", "Favourite season?", "Oldest first"]
    # Kahoot!'s spreadsheet holds no pictures nor explanations, and a question without its own time gets its
    # default of 20 s.
    expected = [replace(q, image=None, explanation="", seconds=q.seconds or 20) for q in questions[:5]]
    assert back.questions == expected
