"""Graded sets in and out: a labelled set (questions with recorded scores and labels) imported to calibrate the
gate from, and the labelled questions exported in the same format; as JSON, or as CSV to grade in a spreadsheet
(a bad CSV line is refused with its number, like the round import)."""

import csv
import io
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction

from core.spreadsheet import csv_columns, csv_reader, csv_rows, csv_unguard, csv_writer
from quiz.exceptions import InvalidQuestion
from quiz.importing import CSV_OPTION_COLUMNS, RowError
from quiz.models import Provenance, Question
from quiz.services import question_create
from quiz.validation import OPTION_LETTERS, clean_question, parse_correct
from review.models import Review, ReviewLabel
from review.selectors import IMPORTED, labelled_scores
from review.thresholds.sweep import score_from_probabilities
from verifier import conf, policy
from verifier.models import Verdict, VerdictOutcome
from verifier.prompts import option_letters


@dataclass(frozen=True)
class ImportResult:
    created: int
    skipped: int


def labelled_set_items(data: Any) -> Any:
    """A labelled set is a JSON list of items, or an object {"about": ..., "items": [...]} that says where it
    came from."""
    if isinstance(data, dict) and "items" in data:
        return data["items"]
    return data


def labelled_set_import(*, items: list[dict[str, Any]], note: str = "imported labelled set") -> ImportResult:
    """Load a graded set: a list of {question, options, correct_index, explanation, backend, model_id,
    probabilities: {check: p}, label, [score], [blind: {option letter: p}]}. Each becomes a question, a verdict
    and a review. `blind` (the blind answer per option) adds P(marked) as the `blind` check unless given.

    A question already present with the same text, options, marked option, explanation and model id is skipped, so a set
    can be imported twice. Raises ValueError naming the first bad item; nothing is stored then.
    """
    if not isinstance(items, list):
        raise ValueError("a labelled set is a JSON list of objects")
    created = skipped = 0
    with transaction.atomic():
        for number, raw in enumerate(items, start=1):
            try:
                parsed = _parse_labelled(raw)
            except (InvalidQuestion, ValueError, TypeError, KeyError) as error:
                raise ValueError(f"item {number}: {error}") from None
            data, backend, model_id, probabilities, score, label = parsed
            duplicate = Question.objects.filter(
                text=data.text,
                options=list(data.options),
                correct_index=data.correct_index,
                explanation=data.explanation,
                model_id=model_id,
            ).exists()
            if duplicate:
                skipped += 1
                continue
            question = question_create(data=data, provenance=Provenance.MODEL, model_id=model_id)
            Verdict.objects.create(
                question=question,
                backend=backend,
                model_id=model_id,
                probabilities=probabilities,
                score=score,
                threshold=conf.default_threshold(),
                outcome=VerdictOutcome.PASSED
                if policy.passes(score=score, threshold=conf.default_threshold())
                else VerdictOutcome.DROPPED,
                reason=IMPORTED,
                details={"imported": True},
            )
            Review.objects.create(question=question, label=label, note=note[:500])
            created += 1
    return ImportResult(created=created, skipped=skipped)


def _parse_labelled(raw: Any) -> tuple[Any, str, str, dict[str, float], float, str]:
    if not isinstance(raw, dict):
        raise ValueError("each item must be an object")
    data = clean_question(
        {
            "text": raw.get("question"),
            "options": raw.get("options"),
            "correct_index": raw.get("correct_index"),
            "explanation": raw.get("explanation", ""),
        }
    )
    backend = str(raw.get("backend") or "").strip()
    model_id = str(raw.get("model_id") or "").strip()
    if not backend or not model_id:
        raise ValueError("backend and model_id are required")
    probabilities = raw.get("probabilities")
    if not isinstance(probabilities, dict) or not probabilities:
        raise ValueError("probabilities must be an object of check -> probability")
    if not all(isinstance(check, str) and policy.is_probability(p) for check, p in probabilities.items()):
        raise ValueError("every probability must be a number from 0 to 1")
    probabilities = {check: float(p) for check, p in probabilities.items()}
    blind = raw.get("blind")
    if blind is not None and policy.BLIND not in probabilities:
        probabilities[policy.BLIND] = blind_marked_probability(blind, options=data.options, marked=data.correct_index)
    score = raw.get("score")
    if score is None:
        score = score_from_probabilities(probabilities)
    if not policy.is_probability(score):
        raise ValueError("score must be a number from 0 to 1")
    label = raw.get("label")
    if label not in ReviewLabel.values:
        raise ValueError(f"label must be one of {', '.join(ReviewLabel.values)}")
    return data, backend, model_id, probabilities, round(float(score), 6), label


def blind_marked_probability(blind: Any, *, options: tuple[str, ...], marked: int) -> float:
    """P(marked) from a recorded blind answer {option letter: p}, normalised over the options' letters."""
    letters = option_letters(options)
    if not isinstance(blind, dict) or not all(policy.is_probability(p) for p in blind.values()):
        raise ValueError("blind must be an object of option letter -> probability")
    spread = policy.normalised({str(k): float(p) for k, p in blind.items()}, letters=letters)
    if spread is None:
        raise ValueError("blind gives no probability to any option")
    return round(spread[letters[marked]], 6)


def labelled_set_export() -> list[dict[str, Any]]:
    """Every labelled question with a recorded score, in the import format (to grade offline and share)."""
    items = labelled_scores()
    questions = Question.objects.in_bulk([item.question_id for item in items])
    return [
        {
            "question": questions[item.question_id].text,
            "options": list(questions[item.question_id].options),
            "correct_index": questions[item.question_id].correct_index,
            "explanation": questions[item.question_id].explanation,
            "backend": item.backend,
            "model_id": item.model_id,
            "probabilities": dict(item.probabilities),
            "score": item.score,
            "label": item.label,
        }
        for item in sorted(items, key=lambda item: (item.backend, item.model_id, item.question_id))
    ]


# -- the same as CSV, for grading in a spreadsheet ---------------------------------------------------------

# A check's probability is a column "p_<check>" (p_answer_correct, p_blind, p_supported ...); the blind answer
# per option, if recorded, "blind_a" ... "blind_f". `score` may be left empty (computed from the probabilities).
LABEL_CSV_BASE = ("question", *CSV_OPTION_COLUMNS, "correct", "explanation", "backend", "model_id")
LABEL_CSV_BLIND = tuple(f"blind_{letter.lower()}" for letter in OPTION_LETTERS[: len(CSV_OPTION_COLUMNS)])
LABEL_CSV_REQUIRED = ("question", "option_a", "option_b", "correct", "backend", "model_id", "label")
PROBABILITY_PREFIX = "p_"


@dataclass
class CsvImportResult:
    created: int = 0
    skipped: int = 0
    errors: list[RowError] = field(default_factory=list)


def labelled_set_csv_export() -> str:
    """Every labelled, scored question (as `labelled_set_export`) as CSV, one check per column."""
    items = labelled_set_export()
    checks = sorted({check for item in items for check in item["probabilities"]})
    out = io.StringIO(newline="")
    writer = csv_writer(out)
    writer.writerow([*LABEL_CSV_BASE, *(PROBABILITY_PREFIX + check for check in checks), "score", "label"])
    for item in items:
        options = item["options"] + [""] * (len(CSV_OPTION_COLUMNS) - len(item["options"]))
        writer.writerow(
            [
                item["question"],
                *options,
                OPTION_LETTERS[item["correct_index"]],
                item["explanation"],
                item["backend"],
                item["model_id"],
                *(_number(item["probabilities"].get(check)) for check in checks),
                item["score"],
                item["label"],
            ]
        )
    return out.getvalue()


def _number(value: Any) -> Any:
    return "" if value is None else value


def labelled_set_csv_import(*, text: str, note: str = "imported labelled set") -> CsvImportResult:
    """Load a graded set from CSV. A bad line is refused with its line number and the reason; the good lines are
    imported (a question already present is skipped, as with JSON)."""
    result = CsvImportResult()
    reader = csv_reader(text)
    good: list[dict[str, Any]] = []
    try:
        columns = csv_columns(reader)
        if columns is None:
            result.errors.append(RowError(1, "the file is empty; the first line must be the header"))
            return result
        missing = [name for name in LABEL_CSV_REQUIRED if name not in columns]
        if missing:
            result.errors.append(RowError(1, f"the header is missing the column(s) {', '.join(missing)}"))
            return result
        if not any(name.startswith(PROBABILITY_PREFIX) for name in columns):
            result.errors.append(RowError(1, "the header has no probability column (p_answer_correct, ...)"))
            return result
        for line, cells in csv_rows(reader):
            try:
                item = labelled_item_from_row(columns, cells)
                _parse_labelled(item)
            except (InvalidQuestion, ValueError, TypeError, KeyError) as error:
                result.errors.append(RowError(line, str(error)))
                continue
            good.append(item)
    except csv.Error as error:
        result.errors.append(RowError(reader.line_num, f"the CSV cannot be read: {error}"))
    if good:
        imported = labelled_set_import(items=good, note=note)
        result.created, result.skipped = imported.created, imported.skipped
    return result


def labelled_item_from_row(columns: list[str], cells: list[str]) -> dict[str, Any]:
    if len(cells) > len(columns) and any(cell.strip() for cell in cells[len(columns) :]):
        raise ValueError(f"the row has {len(cells)} cells but the header has {len(columns)} columns")
    row = {name: csv_unguard(cell).strip() for name, cell in zip(columns, cells, strict=False)}
    options = [row.get(name, "") for name in CSV_OPTION_COLUMNS]
    while options and not options[-1]:
        options.pop()
    correct = parse_correct(row.get("correct", ""), len(options))
    probabilities = {}
    for name, value in row.items():
        if name.startswith(PROBABILITY_PREFIX) and value:
            probabilities[name.removeprefix(PROBABILITY_PREFIX)] = _probability(value, name)
    item: dict[str, Any] = {
        "question": row.get("question", ""),
        "options": options,
        "correct_index": correct,
        "explanation": row.get("explanation", ""),
        "backend": row.get("backend", ""),
        "model_id": row.get("model_id", ""),
        "probabilities": probabilities,
        "label": row.get("label", "").lower(),
    }
    if row.get("score"):
        item["score"] = _probability(row["score"], "score")
    blind = {name[-1].upper(): _probability(row[name], name) for name in LABEL_CSV_BLIND if row.get(name)}
    if blind:
        item["blind"] = blind
    return item


def _probability(value: str, name: str) -> float:
    try:
        number = float(value.replace(",", "."))
    except ValueError:
        raise ValueError(f"{name}: {value!r} is not a number") from None
    if not policy.is_probability(number):
        raise ValueError(f"{name}: {value} is not a number from 0 to 1")
    return number
