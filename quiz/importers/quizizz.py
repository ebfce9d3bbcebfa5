"""Quizizz's (now Wayground's) spreadsheet template (.xlsx).

Its header row names Question Text, Question Type, Option 1 … Option 5, Correct Answer, Time in seconds, Image
Link and Answer explanation; the table is found by that row. Multiple Choice is a single-choice question,
Checkbox a multi ("1,3"), Fill-in-the-Blank a typed answer (its options, or the Correct Answer cell, are the
accepted answers), Poll a poll. An Open-Ended or Draw question has no answer to check: it is named and skipped. An
image link is never fetched (the server makes no request to an address a file names): the question comes without
its picture, and the report says so.
"""

import re
from typing import Any

from django.utils.translation import gettext as _

from quiz.importers.common import Report, cell_text, seconds
from quiz.importers.xlsx import head_words, looks_like_xlsx, read_sheet
from quiz.importing import ImportResult

OPTIONS = tuple(f"Option {n}" for n in range(1, 6))
HEADERS = {
    "Question Text": ("question text",),
    "Question Type": ("question type",),
    **{name: (name.casefold(),) for name in OPTIONS},
    "Correct Answer": ("correct answer",),
    "Time in seconds": ("time in seconds", "time"),
    "Image Link": ("image link", "image"),
    "Answer explanation": ("answer explanation", "explanation"),
}
REQUIRED = ("Question Text", "Question Type", "Option 1", "Correct Answer")


def detect(name: str, raw: bytes) -> bool:
    return looks_like_xlsx(raw) and "question type" in head_words(raw)


def parse(raw: bytes) -> ImportResult:
    return read_sheet(raw, HEADERS, REQUIRED, _row)


def _kind(cell: str) -> str:
    return re.sub(r"[^a-z]", "", cell.casefold())


def _row(report: Report, number: int, cells: list[Any], columns: dict[str, int]) -> None:
    def cell(name: str) -> str:
        index = columns.get(name)
        return cell_text(cells[index]) if index is not None and index < len(cells) else ""

    text = cell("Question Text")
    kind = _kind(cell("Question Type")) or "multiplechoice"
    options = [cell(name) for name in OPTIONS]
    filled = [(position, option) for position, option in enumerate(options) if option]
    raw: dict[str, Any] = {"question": text, "explanation": cell("Answer explanation")}
    limit = seconds(cell("Time in seconds"))
    if limit is not None:
        raw["seconds"] = limit
    numbers = [int(part) - 1 for part in re.findall(r"\d+", cell("Correct Answer"))]
    marked = [i for i, (position, _option) in enumerate(filled) if position in numbers]
    if kind in ("multiplechoice", "mcq", "checkbox", "msq"):
        if not marked:
            report.skip(number, text, _("no correct answer is marked (Correct Answer names no filled option)"))
            return
        options_only = [option for _position, option in filled]
        if kind in ("checkbox", "msq") and len(marked) > 1:
            raw.update(kind="multi", options=options_only, correct_indexes=marked)
        else:
            raw.update(kind="single", options=options_only, correct_index=marked[0])
    elif kind in ("fillintheblank", "fib", "blank"):
        answers = [option for _position, option in filled] or [cell("Correct Answer")]
        raw.update(kind="typed", answers=[answer for answer in answers if answer])
    elif kind == "poll":
        raw.update(kind="poll", options=[option for _position, option in filled])
    elif kind in ("openended", "draw", "open"):
        report.skip(number, text, _("an open-ended question has no answer to check: it cannot be played here yet"))
        return
    else:
        report.skip(
            number, text, _("the question type “%(type)s” cannot be played here") % {"type": cell("Question Type")}
        )
        return
    if report.add(number, text, raw) and cell("Image Link"):
        report.note(
            number,
            text,
            _("its picture is a link (%(link)s) and links are not fetched: add the picture in the editor")
            % {"link": cell("Image Link")[:100]},
        )
