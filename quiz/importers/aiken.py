"""Aiken, Moodle's simplest text format: a question on one line, its options `A.` or `A)` one a line, then
`ANSWER: B`. Every Aiken question is a single-choice question."""

import re

from django.utils.translation import gettext as _

from quiz.importers.common import Report, decode
from quiz.importing import ImportResult

OPTION = re.compile(r"^([A-Z])[.)]\s+(.*)$")
ANSWER = re.compile(r"^ANSWER\s*:\s*([A-Z])\s*$", re.I)


def detect(name: str, raw: bytes) -> bool:
    text = raw[:20000].decode("utf-8", errors="replace")
    return bool(re.search(r"(?m)^ANSWER\s*:\s*[A-Z]\s*$", text)) and bool(re.search(r"(?m)^[A-Z][.)]\s", text))


def parse(raw: bytes) -> ImportResult:
    text, fallback = decode(raw)
    report = Report(unit="line")
    if fallback:
        report.note(0, "", _("the file is not UTF-8; it was read as Windows-1252 (check accented letters)"))
    question, start, options = "", 0, []
    for number, line in enumerate(text.splitlines(), start=1):
        line = line.strip()
        if not line:
            continue
        option = OPTION.match(line)
        answer = ANSWER.match(line)
        if answer and question:
            _finish(report, start, question, options, answer.group(1).upper())
            question, options = "", []
        elif option and question:
            options.append((option.group(1), option.group(2)))
        elif question and not options:
            question += " " + line  # a question over several lines
        else:
            if question:
                report.skip(start, question, _("the question has no ANSWER: line"))
            question, start, options = line, number, []
    if question:
        report.skip(start, question, _("the question has no ANSWER: line"))
    return report.result


def _finish(report: Report, line: int, question: str, options: list[tuple[str, str]], letter: str) -> None:
    letters = [mark for mark, _text in options]
    if letter not in letters:
        report.skip(line, question, _("ANSWER: %(letter)s names no option of this question") % {"letter": letter})
        return
    report.add(
        line,
        question,
        {
            "kind": "single",
            "question": question,
            "options": [t for _m, t in options],
            "correct_index": letters.index(letter),
        },
    )
