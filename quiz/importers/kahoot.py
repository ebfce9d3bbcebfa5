"""Kahoot!'s quiz spreadsheet (.xlsx), in and out.

Kahoot!'s published template has a few lines of instructions, then a header row — "Question - max 120
characters", "Answer 1 - max 75 characters" … "Answer 4", "Time limit (sec) – 5, 10, 20, 30, 60, 90, 120, or 240
secs", "Correct answer(s) - choose at least one" — and a question a row, its right answers by number ("1" or
"2,4"). The table is found by its header, wherever it is. One right answer is a single-choice question, several a
multi, the answers True and False a true/false question; the time limit is kept.
"""

import io
import re
from dataclasses import dataclass
from typing import Any

from django.utils.translation import gettext as _

from quiz.importers.common import Report, cell_text, seconds
from quiz.importers.xlsx import looks_like_xlsx, read_sheet
from quiz.importing import ImportResult
from quiz.kinds import kind_of
from quiz.validation import QuestionData

HEADERS = {
    "Question": ("question",),
    "Answer 1": ("answer 1",),
    "Answer 2": ("answer 2",),
    "Answer 3": ("answer 3",),
    "Answer 4": ("answer 4",),
    "Time limit (sec)": ("time limit",),
    "Correct answer(s)": ("correct answer",),
}
REQUIRED = ("Question", "Answer 1", "Answer 2", "Correct answer(s)")
ANSWERS = ("Answer 1", "Answer 2", "Answer 3", "Answer 4")
INSTRUCTIONS = (
    "Quiz template",
    "Add questions, at least two answer alternatives, time limits and choose correct answers (at least one).",
    "Have fun creating your awesome quiz!",
    "Remember: questions can have a maximum of 120 characters and answers can have 75 characters max.",
    "And remember, if you're not using Excel you need to export to .xlsx format before you upload to Kahoot!",
)
EXPORT_HEADER = (
    "",
    "Question - max 120 characters",
    "Answer 1 - max 75 characters",
    "Answer 2 - max 75 characters",
    "Answer 3 - max 75 characters",
    "Answer 4 - max 75 characters",
    "Time limit (sec) – 5, 10, 20, 30, 60, 90, 120, or 240 secs",
    "Correct answer(s) - choose at least one",
)
KAHOOT_TIMES = (5, 10, 20, 30, 60, 90, 120, 240)


def detect(name: str, raw: bytes) -> bool:
    # Both spreadsheets are zips: Quizizz's is claimed first, by its header's words; any other spreadsheet is
    # read as Kahoot!'s, whose report names the header it looked for.
    return looks_like_xlsx(raw)


def _correct(cell: Any, count: int) -> list[int]:
    numbers = [int(part) for part in re.findall(r"\d+", cell_text(cell))]
    return sorted({n - 1 for n in numbers if 1 <= n <= count}) if numbers else []


def parse(raw: bytes) -> ImportResult:
    return read_sheet(raw, HEADERS, REQUIRED, _row)


def _row(report: Report, number: int, cells: list[Any], columns: dict[str, int]) -> None:
    def cell(name: str) -> Any:
        index = columns.get(name)
        return cells[index] if index is not None and index < len(cells) else None

    text = cell_text(cell("Question"))
    answers = [cell_text(cell(name)) for name in ANSWERS]
    if not text and not any(answers):
        return  # a template's numbered but empty row
    filled = [(position, answer) for position, answer in enumerate(answers) if answer]
    options = [answer for _, answer in filled]
    marked_positions = _correct(cell("Correct answer(s)"), len(answers))
    marked = [options.index(answers[p]) for p in marked_positions if answers[p]]
    raw: dict[str, Any] = {"question": text}
    limit = seconds(cell("Time limit (sec)"))
    if limit is not None:
        raw["seconds"] = limit
    if not marked:
        report.skip(number, text, _("no correct answer is marked (Correct answer(s) is empty or names no answer)"))
        return
    if sorted(answer.casefold() for answer in options) == ["false", "true"]:
        raw.update(kind="true_false", answer=options[marked[0]].casefold() == "true")
        if len(marked) > 1:
            report.skip(number, text, _("both True and False are marked correct"))
            return
    elif len(marked) == 1:
        raw.update(kind="single", options=options, correct_index=marked[0])
    else:
        raw.update(kind="multi", options=options, correct_indexes=marked)
    report.add(number, text, raw)


# Kahoot!'s template's limits, in characters as a browser counts them (UTF-16 units: an emoji counts two).
MAX_QUESTION = 120
MAX_ANSWER = 75
MAX_ANSWERS = 4
ELLIPSIS = "…"


@dataclass(frozen=True)
class ExportNote:
    """A question the export changed or left out: its number in the round, its text and why."""

    number: int
    text: str
    reason: str
    left_out: bool = False


def _units(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def shortened(text: str, limit: int) -> str:
    """`text` within `limit` UTF-16 units: cut at the last space in its final quarter when there is one, else
    where it reaches the limit (never inside a character), and ended with "…"."""
    if _units(text) <= limit:
        return text
    cut = ""
    for char in text:
        if _units(cut + char) > limit - 1:
            break
        cut += char
    space = cut.rfind(" ")
    if space >= len(cut) * 3 // 4:
        cut = cut[:space]
    return cut.rstrip() + ELLIPSIS


def _fitted(question: QuestionData) -> tuple[list[Any] | None, list[str]]:
    """The question's row for Kahoot!'s template and what was changed to fit it; (None, [why]) when it cannot go
    in at all."""
    kind = kind_of(question).name
    if kind == "true_false":
        options, marked = ["True", "False"], [0 if question.key["answer"] else 1]
    elif kind == "single":
        options, marked = list(question.options), [question.correct_index]
    elif kind == "multi":
        options, marked = list(question.options), list(question.key["correct_indexes"])
    else:
        return None, [_("Kahoot!'s spreadsheet holds no “%(kind)s” question") % {"kind": kind_of(question).label}]
    if len(options) > MAX_ANSWERS:
        return None, [
            _("it has %(count)s answers; Kahoot! holds at most %(max)s") % {"count": len(options), "max": MAX_ANSWERS}
        ]
    changes = []
    text = shortened(question.text, MAX_QUESTION)
    if text != question.text:
        changes.append(_("the question was shortened to Kahoot!'s %(max)s characters") % {"max": MAX_QUESTION})
    fitted = [shortened(option, MAX_ANSWER) for option in options]
    for number, (option, fit) in enumerate(zip(options, fitted, strict=True), start=1):
        if fit != option:
            reason = _("answer %(number)s was shortened to Kahoot!'s %(max)s characters")
            changes.append(reason % {"number": number, "max": MAX_ANSWER})
    if len({option.casefold() for option in fitted}) < len(fitted):
        return None, [
            _("two of its answers read the same once shortened to Kahoot!'s %(max)s characters") % {"max": MAX_ANSWER}
        ]
    limit = question.seconds
    time = min(KAHOOT_TIMES, key=lambda t: abs(t - limit)) if limit else 20
    if limit and time != limit:
        reason = _("its time of %(seconds)s s became %(time)s s, the nearest Kahoot! allows")
        changes.append(reason % {"seconds": limit, "time": time})
    cells = fitted + [""] * (MAX_ANSWERS - len(fitted))
    return [text, *cells, time, ",".join(str(i + 1) for i in marked)], changes


def export_notes(questions: list[QuestionData]) -> list[ExportNote]:
    """Every question the Kahoot! export shortens, changes or leaves out, with why (the export report)."""
    notes = []
    for number, question in enumerate(questions, start=1):
        row, changes = _fitted(question)
        notes += [ExportNote(number, question.text, reason, left_out=row is None) for reason in changes]
    return notes


def export(title: str, questions: list[QuestionData]) -> tuple[bytes, list[str]]:
    """The questions in Kahoot!'s template layout, and the texts of those that could not go in (Kahoot! quizzes
    hold single, multi and true/false questions of up to four answers). A question or answer over the template's
    limits is shortened; each shortened, changed or left-out question is named with why on the workbook's second
    sheet, "Export report" (and on the export's page, `export_notes`), never silently."""
    from openpyxl import Workbook

    book = Workbook()
    sheet = book.active
    sheet.title = "Sheet1"
    sheet.append([""])
    for line in INSTRUCTIONS:
        sheet.append(["", line])
    sheet.append([""])
    sheet.append(list(EXPORT_HEADER))
    left_out: list[str] = []
    number = 0
    for question in questions:
        row, _changes = _fitted(question)
        if row is None:
            left_out.append(question.text)
            continue
        number += 1
        sheet.append([number, *row])
    notes = export_notes(questions)
    if notes:
        report = book.create_sheet(_("Export report")[:31])
        report.append([_("Question"), _("Text"), _("What the export did")])
        for note in notes:
            done = _("left out: %(reason)s") if note.left_out else _("changed: %(reason)s")
            report.append([note.number, note.text, done % {"reason": note.reason}])
    buffer = io.BytesIO()
    book.save(buffer)
    return buffer.getvalue(), left_out
