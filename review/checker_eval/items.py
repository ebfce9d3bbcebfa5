"""The labelled questions a checker evaluation runs over: the sample packs with two bad copies of each
(the marked option moved, the explanation made false), or an operator's own labelled set (JSON or CSV)."""

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.spreadsheet import csv_columns, csv_reader, csv_rows
from quiz.exceptions import InvalidQuestion
from quiz.generation.prompts import LANGUAGES
from quiz.kinds import kind_of
from quiz.packs import PACK_DIRECTORY, pack_file_read
from quiz.validation import clean_question
from review.labelled_set import labelled_item_from_row
from review.thresholds.sweep import DEFECTIVE, GOOD

# Kinds of labelled item.
AS_WRITTEN, MOVED, FALSE_EXPLANATION, GIVEN = "as_written", "moved", "false_explanation", "given"


@dataclass(frozen=True)
class EvalItem:
    text: str
    options: tuple[str, ...]
    correct_index: int
    explanation: str
    label: str  # "correct" or "defective"
    kind: str = GIVEN
    language: str = ""  # by name ("German"), as the gate tells the checker


# -- the labelled sets ---------------------------------------------------------------------------------------


def pack_items(*, directory: Path | None = None) -> list[EvalItem]:
    """Every ask the gate sends about a sample pack question (quiz/kinds: a true/false one as two options, a
    `multi` one as a Yes/No ask per option, ...; a poll none), each an item, and its two bad copies (marked option
    moved; explanation false)."""
    items: list[EvalItem] = []
    for path in sorted((directory or PACK_DIRECTORY).glob("*.json")):
        pack = pack_file_read(path)
        language = LANGUAGES.get(pack.language, "")
        for question in pack.questions:
            for ask in kind_of(question).gate_asks(question):
                base = EvalItem(
                    text=ask.text,
                    options=tuple(ask.options),
                    correct_index=ask.correct_index,
                    explanation=question.explanation,
                    label=GOOD,
                    kind=AS_WRITTEN,
                    language=language,
                )
                items.extend(bad_copies(base))
    return items


def bad_copies(item: EvalItem) -> list[EvalItem]:
    """The item itself, then its copy with the marked option moved one place on, then (when it has an explanation)
    its copy with the explanation made false."""
    moved = (item.correct_index + 1) % len(item.options)
    copies = [
        item,
        EvalItem(
            text=item.text,
            options=item.options,
            correct_index=moved,
            explanation=item.explanation,
            label=DEFECTIVE,
            kind=MOVED,
            language=item.language,
        ),
    ]
    if item.explanation.strip():
        copies.append(
            EvalItem(
                text=item.text,
                options=item.options,
                correct_index=item.correct_index,
                explanation=falsified_explanation(item.explanation, item.options, item.correct_index),
                label=DEFECTIVE,
                kind=FALSE_EXPLANATION,
                language=item.language,
            )
        )
    return copies


def falsified_explanation(explanation: str, options: tuple[str, ...], correct_index: int) -> str:
    """The explanation with the right option's name replaced by a wrong option's; when it does not name the right
    option, a false sentence in front: it then says a wrong option is the answer."""
    right = options[correct_index]
    wrong = options[(correct_index + 1) % len(options)]
    pattern = re.compile(re.escape(right), re.IGNORECASE)
    if pattern.search(explanation):
        return pattern.sub(wrong, explanation)
    return f"{wrong} is the answer, not {right}. {explanation}"


def items_from_file(path: Path) -> list[EvalItem]:
    """An operator's labelled set: JSON (a list, or {"items": [...]}) or CSV, in the labelled-set format; only the
    question, its options, the marked option, the explanation and the label are read. Raises ValueError naming
    the first bad item (JSON) or line (CSV)."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as error:
        raise ValueError(f"cannot read {path}: {error}") from None
    if path.suffix.lower() == ".csv":
        return _items_from_csv(text)
    try:
        data = json.loads(text)
    except ValueError as error:
        raise ValueError(f"{path.name} is not valid JSON: {error}") from None
    if isinstance(data, dict) and "items" in data:
        data = data["items"]
    if not isinstance(data, list):
        raise ValueError("a labelled set is a JSON list of objects")
    items = []
    for number, raw in enumerate(data, start=1):
        try:
            items.append(_item(raw))
        except (InvalidQuestion, ValueError, TypeError, KeyError) as error:
            raise ValueError(f"item {number}: {error}") from None
    if not items:
        raise ValueError("the labelled set is empty")
    return items


def _items_from_csv(text: str) -> list[EvalItem]:
    reader = csv_reader(text)
    columns = csv_columns(reader)
    if columns is None:
        raise ValueError("line 1: the file is empty; the first line must be the header")
    missing = [name for name in ("question", "option_a", "option_b", "correct", "label") if name not in columns]
    if missing:
        raise ValueError(f"line 1: the header is missing the column(s) {', '.join(missing)}")
    items = []
    for line, cells in csv_rows(reader):
        try:
            items.append(_item(labelled_item_from_row(columns, cells)))
        except (InvalidQuestion, ValueError, TypeError, KeyError) as error:
            raise ValueError(f"line {line}: {error}") from None
    if not items:
        raise ValueError("the labelled set has no rows")
    return items


def _item(raw: Any) -> EvalItem:
    if not isinstance(raw, Mapping):
        raise ValueError("each item must be an object")
    data = clean_question(
        {
            "text": raw.get("question", raw.get("text")),
            "options": raw.get("options"),
            "correct_index": raw.get("correct_index"),
            "explanation": raw.get("explanation", ""),
        }
    )
    label = str(raw.get("label") or "").strip().lower()
    if label not in (GOOD, DEFECTIVE):
        raise ValueError(f"label must be {GOOD} or {DEFECTIVE}, not {raw.get('label')!r}")
    return EvalItem(
        text=data.text,
        options=tuple(data.options),
        correct_index=data.correct_index,
        explanation=data.explanation,
        label=label,
        language=str(raw.get("language") or ""),
    )
