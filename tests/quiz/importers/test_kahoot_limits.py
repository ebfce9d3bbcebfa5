"""Kahoot!'s template limits a question to 120 characters and an answer to 75: the export keeps within them and
says, question by question, what it shortened, changed or left out and why (the workbook's "Export report" sheet,
and `export_notes` for the export's page), never silently."""

import io
import json

import pytest
from django.test import Client
from openpyxl import load_workbook

from quiz import importers
from quiz.importers import kahoot
from quiz.models import Round
from quiz.validation import clean_question

LONG_QUESTION = "Which of these rivers, all of them crossing more than one country on their way to the sea, " + (
    "is the longest of those that flow into the Black Sea, measured from its farthest source?"
)
LONG_ANSWER = "The Danube, which rises in the Black Forest and flows through ten countries before its delta"


RAW = [
    {"question": LONG_QUESTION, "options": [LONG_ANSWER, "The Dnieper", "The Don"], "correct": "A"},
    {"question": "Fits as it is?", "options": ["Yes", "No"], "correct": "A", "seconds": 30},
    {"question": "Five options?", "options": ["a", "b", "c", "d", "e"], "correct": "A"},
    {"kind": "typed", "question": "Red planet?", "answers": ["Mars"]},
    {"question": "Odd time?", "options": ["Yes", "No"], "correct": "B", "seconds": 45},
    {"question": "Twins once cut?", "options": ["x" * 80 + " one", "x" * 80 + " two"], "correct": "A"},
]


def _questions():
    return [clean_question(item) for item in RAW]


def _units(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def test_the_export_stays_within_kahoots_limits_and_imports_back():
    content, left_out = kahoot.export("Rivers", _questions())
    assert left_out == ["Five options?", "Red planet?", "Twins once cut?"]
    back = importers.read("rivers.xlsx", content)
    assert back.errors == []
    assert [q.text for q in back.questions][1:] == ["Fits as it is?", "Odd time?"]
    river = back.questions[0]
    assert _units(river.text) <= 120 and river.text.endswith("…")
    assert river.text.startswith("Which of these rivers, all of them crossing more than one country")
    assert _units(river.options[0]) <= 75 and river.options[0].endswith("…")
    assert river.options[1:] == ("The Dnieper", "The Don") and river.correct_index == 0
    # Cut at a word's end, not in the middle of one.
    assert river.options[0][:-1] == LONG_ANSWER[: len(river.options[0]) - 1].rstrip()
    assert LONG_ANSWER[len(river.options[0]) - 1] == " "


def test_every_change_is_named_with_its_reason_in_the_workbook():
    content, _left_out = kahoot.export("Rivers", _questions())
    book = load_workbook(io.BytesIO(content), read_only=True)
    assert book.sheetnames == ["Sheet1", "Export report"]
    rows = list(book["Export report"].iter_rows(values_only=True))
    assert rows[0] == ("Question", "Text", "What the export did")
    assert rows[1:] == [
        (1, LONG_QUESTION, "changed: the question was shortened to Kahoot!'s 120 characters"),
        (1, LONG_QUESTION, "changed: answer 1 was shortened to Kahoot!'s 75 characters"),
        (3, "Five options?", "left out: it has 5 answers; Kahoot! holds at most 4"),
        (4, "Red planet?", "left out: Kahoot!'s spreadsheet holds no “Type the answer” question"),
        (5, "Odd time?", "changed: its time of 45 s became 30 s, the nearest Kahoot! allows"),
        (6, "Twins once cut?", "left out: two of its answers read the same once shortened to Kahoot!'s 75 characters"),
    ]
    assert [(n.number, n.left_out) for n in kahoot.export_notes(_questions())] == [
        (1, False), (1, False), (3, True), (4, True), (5, False), (6, True)
    ]  # fmt: skip


def test_a_round_within_the_limits_has_no_report_sheet():
    content, left_out = kahoot.export("Fine", _questions()[1:2])
    assert left_out == [] and kahoot.export_notes(_questions()[1:2]) == []
    assert load_workbook(io.BytesIO(content), read_only=True).sheetnames == ["Sheet1"]


def test_shortening_counts_as_a_browser_does_and_never_splits_a_character():
    emoji = "🦘" * 70  # 140 UTF-16 units
    cut = kahoot.shortened(emoji, 75)
    assert _units(cut) <= 75 and cut == "🦘" * 37 + "…"
    assert kahoot.shortened("short", 75) == "short"


@pytest.mark.django_db
def test_the_export_page_names_each_change_before_the_download(client):
    pasted = json.dumps({"title": "Rivers", "questions": RAW})
    assert "Imported 6 questions" in client.post("/rounds/import/", {"title": "", "text": pasted}).content.decode()
    round_ = Round.objects.get()
    assert f'href="/rounds/{round_.pk}/export/kahoot/report/"' in client.get("/rounds/").content.decode()
    page = client.get(f"/rounds/{round_.pk}/export/kahoot/report/").content.decode()
    assert "6 changes to fit Kahoot!" in page
    assert "left out: it has 5 answers; Kahoot! holds at most 4" in page
    assert "changed: answer 1 was shortened to Kahoot!&#x27;s 75 characters" in page
    assert f'href="/rounds/{round_.pk}/export/kahoot/"' in page
    # Another browser sees no such round.
    assert Client().get(f"/rounds/{round_.pk}/export/kahoot/report/").status_code == 404
