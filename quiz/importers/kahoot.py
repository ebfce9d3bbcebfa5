"""Kahoot!'s quiz spreadsheet (.xlsx), in and out.

Kahoot!'s published template has a few lines of instructions, then a header row — "Question - max 120
characters", "Answer 1 - max 75 characters" … "Answer 4", "Time limit (sec) – 5, 10, 20, 30, 60, 90, 120, or 240
secs", "Correct answer(s) - choose at least one" — and a question a row, its right answers by number ("1" or
"2,4"). The table is found by its header, wherever it is. One right answer is a single-choice question, several a
multi, the answers True and False a true/false question; the time limit is kept.
"""

import io
import re
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


def export(title: str, questions: list[QuestionData]) -> tuple[bytes, list[str]]:
    """The questions in Kahoot!'s template layout, and what could not go in (Kahoot! quizzes hold up to four
    answers, single, multi and true/false questions)."""
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
        row = _export_row(question)
        if row is None:
            left_out.append(question.text)
            continue
        number += 1
        sheet.append([number, *row])
    buffer = io.BytesIO()
    book.save(buffer)
    return buffer.getvalue(), left_out


def _export_row(question: QuestionData) -> list[Any] | None:
    kind = kind_of(question).name
    if kind == "true_false":
        options, marked = ["True", "False"], [0 if question.key["answer"] else 1]
    elif kind == "single":
        options, marked = list(question.options), [question.correct_index]
    elif kind == "multi":
        options, marked = list(question.options), list(question.key["correct_indexes"])
    else:
        return None
    if len(options) > 4:
        return None
    limit = question.seconds
    time = min(KAHOOT_TIMES, key=lambda t: abs(t - limit)) if limit else 20
    cells = options + [""] * (4 - len(options))
    return [question.text, *cells, time, ",".join(str(i + 1) for i in marked)]
