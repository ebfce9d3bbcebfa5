import csv
import io
import json

import pytest

from quiz.importing import (
    CSV_COLUMNS,
    MAX_ROWS,
    MAX_TEXT_BYTES,
    RowError,
    export_csv,
    export_json,
    parse_csv,
    parse_json,
)
from quiz.validation import QuestionData

HEADER = ",".join(CSV_COLUMNS)


def test_good_csv_is_read():
    text = (
        f"{HEADER}\n"
        '"What is the capital of France?",Lyon,Paris,Nice,,,,B,"Paris, since 987.",https://example.org\n'
        "2 + 2?,3,4,,,,,2,,\n"
    )
    result = parse_csv(text)
    assert result.errors == []
    assert result.questions == [
        QuestionData(
            text="What is the capital of France?",
            options=("Lyon", "Paris", "Nice"),
            correct_index=1,
            explanation="Paris, since 987.",
            source="https://example.org",
        ),
        QuestionData(text="2 + 2?", options=("3", "4"), correct_index=1),
    ]


def test_csv_optional_columns_may_be_left_out():
    result = parse_csv("question,option_a,option_b,correct\nSky?,Blue,Green,a\n")
    assert result.errors == []
    assert result.questions == [QuestionData(text="Sky?", options=("Blue", "Green"), correct_index=0)]


def test_bad_csv_rows_are_reported_with_line_and_reason_and_good_rows_kept():
    text = (
        f"{HEADER}\n"  # line 1
        "Good one?,Yes,No,,,,,A,,\n"  # line 2
        "One option?,Only,,,,,,A,,\n"  # line 3
        "Out of range?,Yes,No,,,,,C,,\n"  # line 4
        "Duplicates?,Same,same,,,,,A,,\n"  # line 5
        ",Yes,No,,,,,A,,\n"  # line 6
        "\n"  # line 7: blank lines are skipped
        "Good two?,Yes,No,Maybe,,,,3,,\n"  # line 8
    )
    result = parse_csv(text)
    assert [question.text for question in result.questions] == ["Good one?", "Good two?"]
    assert result.errors == [
        RowError(3, "a question needs 2 to 6 options, not 1"),
        RowError(4, "the correct option points past the 2 options"),
        RowError(5, "two options are the same"),
        RowError(6, "question is empty"),
    ]


def test_csv_line_numbers_count_physical_lines_of_multiline_cells():
    text = f'{HEADER}\n"A question\nover two lines",Yes,No,,,,,A,,\nBad,Yes,No,,,,,Z,,\n'
    result = parse_csv(text)
    assert len(result.questions) == 1
    assert result.questions[0].text == "A question over two lines"
    assert [error.line for error in result.errors] == [4]
    assert "'Z' is not a letter A-F" in result.errors[0].reason


def test_csv_missing_required_header_is_one_clear_error():
    result = parse_csv("question,option_a,correct\nQ?,Yes,A\nQ2?,Yes,A\n")
    assert result.questions == []
    assert len(result.errors) == 1
    assert result.errors[0].line == 1
    assert "option_b" in result.errors[0].reason
    assert "header" in result.errors[0].reason


def test_csv_without_header_is_one_error():
    result = parse_csv("Q?,Yes,No,,,,,A,,\n")
    assert len(result.errors) == 1
    assert result.errors[0].line == 1


def test_empty_csv():
    result = parse_csv("")
    assert result.questions == []
    assert len(result.errors) == 1


def test_csv_with_bom():
    result = parse_csv(f"\ufeff{HEADER}\r\nQ?,Yes,No,,,,,B,,\r\n")
    assert result.errors == []
    assert result.questions == [QuestionData(text="Q?", options=("Yes", "No"), correct_index=1)]


def test_csv_with_semicolons():
    header = ";".join(CSV_COLUMNS)
    result = parse_csv(f'{header}\nQ, with a comma?;Yes;No;"Maybe; perhaps";;;;c;;\n')
    assert result.errors == []
    assert result.questions == [
        QuestionData(text="Q, with a comma?", options=("Yes", "No", "Maybe; perhaps"), correct_index=2)
    ]


def test_csv_row_with_too_many_cells_is_rejected():
    result = parse_csv("question,option_a,option_b,correct\nQ, unquoted?,Yes,No,A\n")
    assert result.questions == []
    assert result.errors[0].line == 2
    assert "cells" in result.errors[0].reason


def test_csv_row_limit():
    rows = "".join(f"Q{n}?,Yes,No,,,,,A,,\n" for n in range(MAX_ROWS + 5))
    result = parse_csv(f"{HEADER}\n{rows}")
    assert len(result.questions) == MAX_ROWS
    assert len(result.errors) == 1
    assert result.errors[0].line == MAX_ROWS + 2


def test_text_size_limit():
    result = parse_csv(HEADER + "\n" + "x" * MAX_TEXT_BYTES)
    assert result.questions == []
    assert len(result.errors) == 1
    assert "larger" in result.errors[0].reason


def test_json_list_form():
    text = json.dumps(
        [
            {"question": "Q1?", "options": ["Yes", "No"], "correct": "B"},
            {"text": "Q2?", "options": ["A", "B", "C"], "correct_index": 2, "explanation": "Why", "source": "S"},
        ]
    )
    result = parse_json(text)
    assert result.errors == []
    assert result.title == ""
    assert result.questions == [
        QuestionData(text="Q1?", options=("Yes", "No"), correct_index=1),
        QuestionData(text="Q2?", options=("A", "B", "C"), correct_index=2, explanation="Why", source="S"),
    ]


def test_json_object_form_with_bad_items():
    text = json.dumps(
        {
            "title": "Capitals",
            "questions": [
                {"question": "Good?", "options": ["Yes", "No"], "correct": "A"},
                {"question": "One option?", "options": ["Only"], "correct": "A"},
                "not an object",
                {"question": "Out of range?", "options": ["Yes", "No"], "correct_index": 5},
            ],
        }
    )
    result = parse_json(text)
    assert result.title == "Capitals"
    assert [question.text for question in result.questions] == ["Good?"]
    assert [(error.line, error.unit) for error in result.errors] == [(2, "item"), (3, "item"), (4, "item")]
    assert str(result.errors[0]) == "item 2: a question needs 2 to 6 options, not 1"
    assert result.errors[1].reason == "a question must be an object"
    assert result.errors[2].reason == "the correct option points past the 2 options"


def test_malformed_json_is_one_error_with_its_line():
    result = parse_json('{\n  "title": "T",\n  "questions": [\n    {"question": "Q?",}\n  ]\n}')
    assert result.questions == []
    assert len(result.errors) == 1
    assert result.errors[0].line == 4
    assert result.errors[0].unit == "line"
    assert "not valid JSON" in result.errors[0].reason


def test_deeply_nested_json_is_an_error_not_a_crash():
    result = parse_json("[" * 100_000 + "]" * 100_000)
    assert result.questions == []
    assert len(result.errors) == 1


def test_json_of_the_wrong_shape():
    result = parse_json('{"title": "T"}')
    assert len(result.errors) == 1
    assert "questions" in result.errors[0].reason


QUESTIONS = [
    QuestionData(
        text='Which is "quoted", with a comma; and a semicolon?',
        options=("Ça va", "Naïve, yes", 'He said "no"', "日本"),
        correct_index=3,
        explanation="Line one of an explanation.",
        source="https://example.org/a?b=1&c=2",
    ),
    QuestionData(text="Six options?", options=("1", "2", "3", "4", "5", "6"), correct_index=5),
    QuestionData(text="Two options?", options=("True", "False"), correct_index=0, source="Book, p. 3"),
]


def test_csv_round_trip():
    result = parse_csv(export_csv(QUESTIONS))
    assert result.errors == []
    assert result.questions == QUESTIONS


def test_csv_round_trip_with_bom_as_downloaded():
    result = parse_csv("\ufeff" + export_csv(QUESTIONS))
    assert result.questions == QUESTIONS


def test_json_round_trip():
    result = parse_json(export_json(title="Mixed bag", questions=QUESTIONS))
    assert result.errors == []
    assert result.title == "Mixed bag"
    assert result.questions == QUESTIONS


def test_export_csv_has_the_documented_header():
    assert export_csv([]).splitlines() == [HEADER]


@pytest.mark.parametrize("correct", ["A", "a", "1", " 1 "])
def test_csv_correct_as_letter_or_number(correct):
    result = parse_csv(f"{HEADER}\nQ?,Yes,No,,,,,{correct},,\n")
    assert result.questions[0].correct_index == 0


FORMULA_QUESTIONS = [
    QuestionData(
        text='=HYPERLINK("http://evil.example","Click")',
        options=("+1", "-1", "@SUM(A1)", "Plain"),
        correct_index=3,
        explanation="=1+1",
        source="-source",
    ),
    QuestionData(text="@who?", options=("=A1", "B"), correct_index=0, explanation="+x", source="@cite"),
]


def test_a_round_export_neutralises_every_formula_cell_and_imports_back_the_same_text():
    exported = export_csv(FORMULA_QUESTIONS)
    rows = list(csv.reader(io.StringIO(exported)))
    cells = [cell for row in rows[1:] for cell in row if cell]
    assert cells and not [cell for cell in cells if cell.startswith(("=", "+", "-", "@"))]
    assert rows[1][0] == '\'=HYPERLINK("http://evil.example","Click")'
    assert rows[1][1:5] == ["'+1", "'-1", "'@SUM(A1)", "Plain"]
    explanation = rows[0].index("explanation")
    assert rows[1][explanation : explanation + 2] == ["'=1+1", "'-source"]
    result = parse_csv("\ufeff" + exported)
    assert result.errors == []
    assert result.questions == FORMULA_QUESTIONS


def test_an_apostrophe_the_guard_did_not_add_is_kept():
    result = parse_csv(f"{HEADER}\n'Tis the season?,Yes,No,,,,,A,,\n")
    assert result.questions[0].text == "'Tis the season?"
