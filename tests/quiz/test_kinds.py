"""Question kinds (quiz/kinds): each read from the round JSON and the CSV and written back the same, bad fields
refused with the item and the reason, and each kind's answers judged and credited as the README says."""

import csv
import io
import json
import pathlib

import pytest

from quiz.importing import export_csv, export_json, parse_csv, parse_json
from quiz.kinds import KINDS, BadAnswer, kind_of
from quiz.kinds.typed import fold, typed_matches
from quiz.validation import clean_question

# One question of each kind, as a teacher's round file would hold it.
MIXED = [
    {"question": "Capital of France?", "options": ["Paris", "Lyon", "Nice"], "correct": "A"},
    {"kind": "true_false", "question": "The Sun is a star.", "answer": True},
    {"kind": "multi", "question": "Which are even?", "options": ["2", "3", "4", "5"], "correct_indexes": [0, 2]},
    {"kind": "typed", "question": "Capital of Australia?", "answers": ["Canberra", "Canberra City"]},
    {"kind": "order", "question": "Smallest first.", "items": ["ant", "cat", "horse", "whale"]},
    {
        "kind": "number",
        "question": "Moon landing?",
        "answer": 1969,
        "tolerance": 2,
        "min": 1900,
        "max": 2000,
        "unit": "AD",
    },
    {"kind": "poll", "question": "Tea or coffee?", "options": ["Tea", "Coffee"]},
    {"kind": "open", "question": "One word for today?", "max_answers": 2},
    {"kind": "slide", "question": "The end", "explanation": "Thank you for playing."},
]


def _file(items) -> str:
    return json.dumps({"title": "Mixed", "questions": [{**item, "explanation": "", "source": ""} for item in items]})


def test_every_kind_is_in_the_mixed_round_and_the_registry():
    assert {item.get("kind", "single") for item in MIXED} == set(KINDS)


def test_a_mixed_round_imports_and_exports_as_the_same_file():
    result = parse_json(_file(MIXED))
    assert result.errors == []
    assert [question.kind for question in result.questions] == [item.get("kind", "single") for item in MIXED]
    exported = json.loads(export_json(title="Mixed", questions=result.questions))
    assert exported == json.loads(_file(MIXED))
    # ... and what it exported imports as the same questions again
    assert parse_json(json.dumps(exported)).questions == result.questions


def test_a_mixed_round_goes_through_the_csv_and_back_unchanged():
    questions = parse_json(_file(MIXED)).questions
    exported = export_csv(questions)
    header = exported.splitlines()[0].split(",")
    assert header[-5:] == ["kind", "tolerance", "min", "max", "unit"]
    back = parse_csv(exported)
    assert back.errors == [] and back.questions == questions


def test_a_round_file_from_before_kinds_reads_as_single_choice():
    result = parse_json(json.dumps([{"question": "2 + 2?", "options": ["3", "4"], "correct": "B"}]))
    (question,) = result.questions
    assert question.kind == "single" and question.correct_index == 1 and question.key == {}


@pytest.mark.parametrize(
    ("item", "reason"),
    [
        ({"kind": "essay", "question": "Write."}, "unknown question kind 'essay'"),
        ({"kind": "true_false", "question": "Sky is blue.", "answer": "maybe"}, "must be true or false"),
        ({"kind": "multi", "question": "Q?", "options": ["a", "b"], "correct_indexes": []}, "at least one"),
        ({"kind": "multi", "question": "Q?", "options": ["a", "b"], "correct_indexes": [0, 2]}, "points past"),
        (
            {"kind": "multi", "question": "Q?", "options": ["a", "b"], "correct_indexes": [1, 1]},
            "an option is marked right twice",
        ),
        ({"kind": "typed", "question": "Q?", "answers": []}, "list of accepted answers"),
        ({"kind": "typed", "question": "Q?", "answers": ["?!"]}, "no letters or digits"),
        ({"kind": "order", "question": "Q?", "items": ["a", "b"]}, "needs 3 to 6 items, not 2"),
        ({"kind": "order", "question": "Q?", "items": ["a", "b", "A"]}, "two items are the same"),
        ({"kind": "number", "question": "Q?", "answer": 5, "min": 10, "max": 1}, "min must be below its max"),
        ({"kind": "number", "question": "Q?", "answer": 50, "min": 0, "max": 10}, "between its min and max"),
        ({"kind": "number", "question": "Q?", "answer": 5, "min": 0, "max": 10, "tolerance": -1}, "0 or more"),
        ({"kind": "number", "question": "Q?", "answer": True, "min": 0, "max": 10}, "answer must be a number"),
        ({"kind": "poll", "question": "Q?", "options": ["only one"]}, "needs 2 to 6 options, not 1"),
    ],
)
def test_a_bad_field_is_refused_with_its_item_and_the_reason_and_the_good_ones_kept(item, reason):
    result = parse_json(_file([MIXED[0], item]))
    assert len(result.questions) == 1
    (error,) = result.errors
    assert error.where == "item 2" and reason in error.reason


def test_a_bad_csv_row_names_its_line():
    rows = list(csv.reader(io.StringIO(export_csv(parse_json(_file(MIXED)).questions))))
    rows[2][rows[0].index("correct")] = "perhaps"  # the true/false row's answer
    out = io.StringIO()
    csv.writer(out).writerows(rows)
    result = parse_csv(out.getvalue())
    assert [str(error) for error in result.errors] == ["line 3: a true/false question's answer must be true or false"]
    assert len(result.questions) == len(MIXED) - 1


def _question(index: int):
    return parse_json(_file([MIXED[index]])).questions[0]


def test_typed_answers_forgive_case_accents_spaces_punctuation_and_one_typo_in_a_long_word():
    accepted = ["Canberra"]
    for typed in ("canberra", "  CANBERRA. ", "Cánberra", "Canbera", "Canberrra", "Cnaberra", "Canbarra"):
        assert typed_matches(typed, accepted), typed
    for typed in ("Canbe", "Sydney", "Canbxrrx", "", "   "):
        assert not typed_matches(typed, accepted), typed
    # A short answer forgives no typo: "Rom" is not "Rome"; accents and punctuation only.
    assert typed_matches("São-Paulo", ["Sao Paulo"]) and not typed_matches("Rom", ["Rome"])
    assert fold("  Ünïcode—Text! ") == "unicode text"


def test_each_kind_judges_right_partly_right_wrong_and_malformed_answers():
    # Order as shown = the round's order here (no shuffle), so positions are the round's indexes.
    multi = _question(2)
    order4 = tuple(range(4))
    judge = kind_of(multi).judge
    assert judge(multi, {"options": [0, 2]}, order4).credit == 1.0
    partly = judge(multi, {"options": [0]}, order4)
    assert (partly.credit, partly.right) == (0.5, False)
    assert judge(multi, {"options": [0, 1]}, order4).credit == 0.0  # one right, one wrong: nothing
    assert judge(multi, {"options": [0, 1, 2, 3]}, order4).credit == 0.0  # every option: nothing
    for bad in ({"options": []}, {"options": [7]}, {"option": 0}, {"options": [0, 0]}):
        with pytest.raises(BadAnswer, match="Pick one or more"):
            judge(multi, bad, order4)

    order = _question(4)
    judge = kind_of(order).judge
    assert judge(order, {"order": [0, 1, 2, 3]}, order4).right
    half = judge(order, {"order": [1, 0, 2, 3]}, order4)
    assert (half.credit, half.right) == (0.5, False)
    for bad in ({"order": [0, 1, 2]}, {"order": [0, 0, 1, 2]}, {"order": "0123"}, {}):
        with pytest.raises(BadAnswer, match="every item once"):
            judge(order, bad, order4)

    number = _question(5)  # 1969, tolerance 2, 1900-2000
    judge = kind_of(number).judge
    assert judge(number, {"value": 1969}, ()).credit == 1.0
    assert judge(number, {"value": 1970}, ()).credit == 0.75  # 1 of 2 away: 1 - 1/4
    edge = judge(number, {"value": 1967}, ())
    assert (edge.credit, edge.right) == (0.5, True)
    assert judge(number, {"value": 1972}, ()).credit == 0.0
    for bad in ({"value": 1800}, {"value": "1969"}, {"value": True}, {"text": "1969"}):
        with pytest.raises(BadAnswer, match="from 1900 to 2000"):
            judge(number, bad, ())

    typed = _question(3)
    assert kind_of(typed).judge(typed, {"text": "canberra city"}, ()).right
    with pytest.raises(BadAnswer, match="at most 100"):
        kind_of(typed).judge(typed, {"text": "x" * 101}, ())

    poll = _question(6)
    voted = kind_of(poll).judge(poll, {"option": 1}, (0, 1))
    assert (voted.option, voted.credit) == (1, 0.0) and not kind_of(poll).scored


def test_an_order_question_is_never_shown_in_its_right_order():
    kind = KINDS["order"]
    assert kind.arrange((0, 1, 2, 3)) != (0, 1, 2, 3)
    assert kind.arrange((2, 0, 1, 3)) == (2, 0, 1, 3)


def test_what_a_kind_shows_while_open_holds_nothing_of_its_answer():
    for item in MIXED:
        question = clean_question({**item, "explanation": "", "source": ""})
        kind = kind_of(question)
        shown = json.dumps(kind.public(question, kind.arrange(tuple(range(len(question.options))))))
        for secret in ("correct", "answer", "tolerance", "Canberra", "1969"):
            assert secret not in shown, (kind.name, shown)


def test_the_shipped_mixed_packs_hold_every_kind_at_least_twice():
    packs = pathlib.Path(__file__).resolve().parents[2] / "quiz" / "pack_data"
    for slug in ("mixed-kinds", "gemischte-fragen", "preguntas-variadas"):
        raw = json.loads((packs / f"{slug}.json").read_text(encoding="utf-8"))
        kinds = [clean_question(item).kind for item in raw["questions"]]
        # Every kind of question (a slide asks nothing: not one of them).
        assert all(kinds.count(name) >= 2 for name, kind in KINDS.items() if kind.asks), (slug, kinds)
