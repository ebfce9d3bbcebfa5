"""The round editor holds every question kind: a kind picker and the fields of each. A mixed round opened in the
editor and saved as it is comes back unchanged; a question of each kind written from blank is stored as that
kind; a kind's own mistakes are shown by question number."""

import pytest

from quiz.models import Round
from tests.quiz.test_kinds import MIXED, _file
from tests.quiz.test_views import editor_data

pytestmark = pytest.mark.django_db


def _import(client) -> Round:
    response = client.post("/rounds/import/", {"title": "Mixed", "text": _file(MIXED)})
    assert f"Imported {len(MIXED)} questions" in response.content.decode()
    return Round.objects.get(title="Mixed")


def _as_posted(formset) -> dict:
    """What a browser sends back for the editor as the server drew it (every field at its shown value)."""
    data = {"title": "Mixed"}
    management = formset.management_form
    for name in ("TOTAL_FORMS", "INITIAL_FORMS", "MIN_NUM_FORMS", "MAX_NUM_FORMS"):
        data[management[name].html_name] = management[name].value()
    for form in formset:
        for field in form:
            value = field.value()
            if value in (None, False, [], ""):
                continue
            data[field.html_name] = value
    return data


def _questions(round_: Round):
    return [entry.question.as_data() for entry in round_.entries.select_related("question")]


def test_a_mixed_round_saved_from_the_editor_unchanged_is_the_same_round(client):
    round_ = _import(client)
    before = _questions(round_)
    page = client.get(f"/rounds/{round_.pk}/edit/")
    html = page.content.decode()
    assert page.status_code == 200
    for label in ("Kind of question", "The right options (one or more)", "The statement is",
                  "Accepted answers, separated by |", "The right number", "Counts as right within ±"):  # fmt: skip
        assert label in html
    response = client.post(f"/rounds/{round_.pk}/edit/", _as_posted(page.context["formset"]))
    assert response.status_code == 302
    round_.refresh_from_db()
    assert _questions(round_) == before
    assert [question.kind for question in before] == [item.get("kind", "single") for item in MIXED]


def test_each_kind_written_in_the_editor_is_stored_as_that_kind(client):
    blocks = [
        {"kind": "true_false", "text": "Ice floats on water.", "truth": "true"},
        {
            "kind": "multi",
            "text": "Which are mammals?",
            "option_0": "Whale",
            "option_1": "Shark",
            "option_2": "Bat",
            "correct_many": ["0", "2"],
        },  # fmt: skip
        {"kind": "typed", "text": "Capital of Italy?", "answers": "Rome | Roma"},
        {"kind": "order", "text": "Smallest first.", "option_0": "1", "option_1": "10", "option_2": "100"},
        {"kind": "number", "text": "Legs of a spider?", "number_answer": "8", "minimum": "0", "maximum": "20"},
        {"kind": "poll", "text": "Cats or dogs?", "option_0": "Cats", "option_1": "Dogs"},
    ]
    response = client.post("/rounds/new/", editor_data("Kinds", blocks))
    assert response.status_code == 302, response.content.decode()[:3000]
    stored = _questions(Round.objects.get(title="Kinds"))
    assert [(q.kind, q.options, q.key) for q in stored] == [
        ("true_false", (), {"answer": True}),
        ("multi", ("Whale", "Shark", "Bat"), {"correct_indexes": [0, 2]}),
        ("typed", (), {"answers": ["Rome", "Roma"]}),
        ("order", ("1", "10", "100"), {}),
        ("number", (), {"answer": 8, "tolerance": 0, "min": 0, "max": 20, "unit": ""}),
        ("poll", ("Cats", "Dogs"), {}),
    ]


def test_a_kinds_own_mistakes_are_shown_by_question_number_and_nothing_is_saved(client):
    blocks = [
        {"kind": "true_false", "text": "Ice floats on water."},
        {"kind": "number", "text": "Legs of a spider?", "number_answer": "80", "minimum": "0", "maximum": "20"},
        {"kind": "multi", "text": "Which?", "option_0": "A", "option_1": "B"},
    ]
    response = client.post("/rounds/new/", editor_data("Bad kinds", blocks))
    html = response.content.decode()
    assert response.status_code == 200
    assert "Question 1: a true/false question&#x27;s answer must be true or false" in html
    assert "Question 2: a number question&#x27;s answer must lie between its min and max" in html
    assert "Question 3: mark at least one option as right" in html and "correct_indexes" not in html
    assert not Round.objects.filter(title="Bad kinds").exists()
