"""A host's questions in and out as CSV or JSON. Plain functions: no request, no database.

Every question goes through `clean_question`; a bad row is reported with where it is and why, and the
good rows are kept. A JSON question may carry its picture as `"image": {"data": "data:image/png;base64,...",
"alt": "..."}` (quiz/pictures/images.py); the JSON export writes it the same way, so an export imports back whole. The
CSV carries no pictures (export JSON to keep them).
"""

import csv
import io
import json
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings

from core.spreadsheet import csv_columns, csv_reader, csv_rows, csv_unguard, csv_writer
from core.text import clean_line
from quiz.exceptions import InvalidQuestion
from quiz.kinds import DEFAULT, kind_of, read_kind
from quiz.pictures.images import image_data_url
from quiz.validation import MAX_OPTIONS, OPTION_LETTERS, QuestionData, clean_question

MAX_ROWS = 200
MAX_TEXT_BYTES = 1024 * 1024

NUMBER_COLUMNS = ("tolerance", "min", "max", "unit")
CSV_OPTION_COLUMNS = tuple(f"option_{letter.lower()}" for letter in OPTION_LETTERS[:MAX_OPTIONS])
# A question of any kind in one row (quiz/kinds): `kind` empty is single; `correct` is the right option's letter
# (single), the right ones' letters (multi, "A C"), true or false (true_false), the accepted answers separated by
# "|" (typed) or the value (number, with its tolerance, min, max and unit); an order question's items are its
# options in the right order; a poll's correct is empty.
CSV_COLUMNS = ("question", *CSV_OPTION_COLUMNS, "correct", "explanation", "source", "kind", *NUMBER_COLUMNS)
CSV_REQUIRED_COLUMNS = ("question", "option_a", "option_b", "correct")


@dataclass(frozen=True)
class RowError:
    # `line` is a physical line of the file; for a JSON question it is the 1-based item number
    # (unit "item"). Line 0 means the file as a whole.
    line: int
    reason: str
    unit: str = "line"

    @property
    def where(self) -> str:
        return "whole file" if self.line == 0 else f"{self.unit} {self.line}"

    def __str__(self) -> str:
        return f"{self.where}: {self.reason}"


@dataclass
class ImportResult:
    questions: list[QuestionData] = field(default_factory=list)
    errors: list[RowError] = field(default_factory=list)
    # A JSON file may carry its round's title.
    title: str = ""
    # What came in only in part (a picture link not fetched, a category left behind), per question.
    notes: list[RowError] = field(default_factory=list)
    # The format it was read as (quiz/importers), for the report.
    format_label: str = ""


def _too_large(text: str) -> ImportResult | None:
    if len(text.encode("utf-8", errors="replace")) > MAX_TEXT_BYTES:
        return ImportResult(errors=[RowError(0, f"the text is larger than {MAX_TEXT_BYTES // 1024} KB")])
    return None


def max_json_bytes() -> int:
    """A JSON file carries its pictures inside it: it may be larger than a CSV, up to QUIZ_IMPORT_MAX_BYTES."""
    return max(MAX_TEXT_BYTES, settings.QUIZ_IMPORT_MAX_BYTES)


def _too_many_rows_error(line: int, unit: str) -> RowError:
    return RowError(
        line, f"only {MAX_ROWS} questions can be imported at once; this one and the rest were skipped", unit
    )


def parse_csv(text: str) -> ImportResult:
    if (too_large := _too_large(text)) is not None:
        return too_large
    reader = csv_reader(text)
    result = ImportResult()
    try:
        columns = csv_columns(reader)
        if columns is None:
            result.errors.append(RowError(1, "the file is empty; the first line must be the header"))
            return result
        missing = [name for name in CSV_REQUIRED_COLUMNS if name not in columns]
        if missing:
            result.errors.append(
                RowError(
                    1,
                    f"the header is missing the column(s) {', '.join(missing)}; "
                    f"the first line must be: {','.join(CSV_COLUMNS)}",
                )
            )
            return result
        for rows, (line, cells) in enumerate(csv_rows(reader), start=1):
            if rows > MAX_ROWS:
                result.errors.append(_too_many_rows_error(line, "line"))
                break
            try:
                result.questions.append(_question_from_csv_row(columns, cells))
            except InvalidQuestion as error:
                result.errors.append(RowError(line, str(error)))
    except csv.Error as error:
        result.errors.append(RowError(reader.line_num, f"the CSV cannot be read: {error}"))
    return result


def _question_from_csv_row(columns: list[str], cells: list[str]) -> QuestionData:
    if len(cells) > len(columns) and any(cell.strip() for cell in cells[len(columns) :]):
        raise InvalidQuestion(
            f"the row has {len(cells)} cells but the header has {len(columns)} columns "
            "(put a cell that contains the delimiter in double quotes)"
        )
    # Our own export guarded cells that a spreadsheet would run as a formula: read them back as written.
    row = dict(zip(columns, map(csv_unguard, cells), strict=False))
    options = [row.get(name, "") for name in CSV_OPTION_COLUMNS]
    while options and not options[-1].strip():
        options.pop()
    kind = read_kind({"kind": row.get("kind", "").strip()})
    cells = {"options": options, "correct": row.get("correct", "")}
    cells.update({name: row.get(name, "") for name in NUMBER_COLUMNS})
    return clean_question(
        {
            "kind": kind.name,
            "question": row.get("question", ""),
            **kind.from_csv(cells),
            "explanation": row.get("explanation", ""),
            "source": row.get("source", ""),
        }
    )


def parse_json(text: str) -> ImportResult:
    if len(text.encode("utf-8", errors="replace")) > max_json_bytes():
        size = f"{max_json_bytes() / (1024 * 1024):g}"
        return ImportResult(errors=[RowError(0, f"the file is larger than {size} MB")])
    result = ImportResult()
    try:
        data = json.loads(text.removeprefix("\ufeff"))
    except json.JSONDecodeError as error:
        result.errors.append(RowError(error.lineno, f"not valid JSON: {error.msg} (column {error.colno})"))
        return result
    except RecursionError:
        result.errors.append(RowError(0, "the JSON is nested too deeply"))
        return result
    if isinstance(data, dict):
        title = data.get("title")
        if isinstance(title, str):
            result.title = clean_line(title)[:200]
        data = data.get("questions")
    if not isinstance(data, list):
        result.errors.append(
            RowError(1, 'expected a list of questions, or an object with a "questions" list and an optional "title"')
        )
        return result
    for number, item in enumerate(data, start=1):
        if number > MAX_ROWS:
            result.errors.append(_too_many_rows_error(number, "item"))
            break
        try:
            result.questions.append(clean_question(item))
        except InvalidQuestion as error:
            result.errors.append(RowError(number, str(error), unit="item"))
    return result


# The audit trail's columns after the question's own (quiz/audit.py): the importer ignores them, so an export
# imports back as the same questions and none of its verdicts (a verdict belongs to the check that made it).
AUDIT_CSV_COLUMNS = (
    "origin",
    "pack",
    "writer_model_id",
    "writer_served_model_id",
    "check_count",
    "check_backend",
    "check_served_model_id",
    "check_requested_model_id",
    "check_probabilities",
    "check_score",
    "check_threshold",
    "check_outcome",
    "check_reason",
    "check_message",
    "check_second_opinion",
    "checks",
    # What this question's checks cost in dollars at MODEL_PRICES, every check and role summed ("" with no price).
    "check_cost_usd",
    "review_label",
    "review_note",
    "review_fixed_as",
)


def _json_cell(value: Any) -> str:
    return "" if value in (None, {}, []) else json.dumps(value, ensure_ascii=False, sort_keys=True)


def _number_cell(value: Any) -> Any:
    return "" if value is None else value


def _check_cost_cell(checks: list[dict[str, Any]]) -> Any:
    amounts = [(check.get("cost") or {}).get("total") for check in checks if check.get("cost")]
    if not amounts or any(amount is None for amount in amounts):
        return ""
    return f"{sum(amounts):.10f}".rstrip("0").rstrip(".")


def audit_csv_cells(audit: dict[str, Any]) -> list[Any]:
    """One question's audit as the CSV's audit columns: its latest check in columns, every check as JSON."""
    origin = audit.get("origin") or {}
    checks = audit.get("checks") or []
    last = checks[-1] if checks else {}
    review = audit.get("review") or {}
    return [
        origin.get("provenance", ""),
        (origin.get("pack") or {}).get("slug", ""),
        origin.get("writer_model_id", ""),
        origin.get("writer_served_model_id", ""),
        len(checks),
        last.get("backend", ""),
        last.get("served_model_id", ""),
        last.get("requested_model_id", ""),
        _json_cell(last.get("probabilities")),
        _number_cell(last.get("score")),
        _number_cell(last.get("threshold")),
        last.get("outcome", ""),
        last.get("reason", ""),
        last.get("message", ""),
        _json_cell(last.get("second_opinion")),
        _json_cell(checks),
        _check_cost_cell(checks),
        review.get("label", ""),
        review.get("note", ""),
        review.get("fixed_as", ""),
    ]


def export_csv(questions: list[QuestionData], *, audits: list[dict[str, Any]] | None = None) -> str:
    """The questions in the import's columns; with `audits` (one per question), the audit columns after them."""
    buffer = io.StringIO(newline="")
    writer = csv_writer(buffer)
    writer.writerow(CSV_COLUMNS + (AUDIT_CSV_COLUMNS if audits is not None else ()))
    for number, question in enumerate(questions):
        kind = kind_of(question)
        cells = kind.csv_cells(question)
        options = list(cells["options"]) + [""] * (MAX_OPTIONS - len(cells["options"]))
        row = [
            question.text,
            *options,
            cells["correct"],
            question.explanation,
            question.source,
            "" if kind.name == DEFAULT else kind.name,
            *(cells.get(name, "") for name in NUMBER_COLUMNS),
        ]
        if audits is not None:
            row += audit_csv_cells(audits[number])
        writer.writerow(row)
    return buffer.getvalue()


def question_as_json(question: QuestionData) -> dict[str, Any]:
    kind = kind_of(question)
    # `kind` is left out for a single-choice question: files from before kinds stay as they were.
    item: dict[str, Any] = {} if kind.name == DEFAULT else {"kind": kind.name}
    item["question"] = question.text
    item.update(kind.as_json(question))
    item.update(explanation=question.explanation, source=question.source)
    if question.seconds is not None:
        item["seconds"] = question.seconds
    if question.image is not None:
        item["image"] = {"data": image_data_url(question.image), "alt": question.image.alt}
    return item


def export_json(
    *,
    title: str,
    questions: list[QuestionData],
    audits: list[dict[str, Any]] | None = None,
    about: dict[str, Any] | None = None,
) -> str:
    """With `audits`, each question carries its audit trail whole under "audit" (the importer ignores it), and
    `about` (the round's own record) goes under "round"."""
    items = [question_as_json(question) for question in questions]
    if audits is not None:
        for item, audit in zip(items, audits, strict=True):
            item["audit"] = audit
    payload: dict[str, Any] = {"title": title, "questions": items}
    if about is not None:
        payload["round"] = about
    return json.dumps(payload, ensure_ascii=False, indent=2) + "\n"
