"""What every importer shares: the report it fills, text made plain, numbers read from cells.

An importer turns each question of a file into the fields `clean_question` reads (the round JSON's: "kind",
"question", "options", "correct_index", "answers", ...) and hands them to `Report.add`; whatever cannot be played
here it names with `Report.skip`, and whatever it imported only in part with `Report.note`. A question is never
dropped silently, and one bad question never refuses the file.
"""

import html
import math
import re
from dataclasses import dataclass
from html.parser import HTMLParser
from typing import Any

from django.utils.translation import gettext as _

from quiz.exceptions import InvalidQuestion
from quiz.importing import MAX_ROWS, ImportResult, RowError
from quiz.validation import MAX_SECONDS, MIN_SECONDS, clean_question

# Control characters other than tab, line feed and carriage return: never part of a question.
CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


class FileRefused(Exception):
    """The file as a whole cannot be read; the message says why, naming the line or row where it can."""

    def __init__(self, message: str, line: int = 0, unit: str = "line"):
        super().__init__(message)
        self.line = line
        self.unit = unit


@dataclass
class Report:
    """The questions an importer read, and what it could not import, each named by its number and title."""

    unit: str = "question"

    def __post_init__(self) -> None:
        self.result = ImportResult()
        self.seen = 0
        self.stopped = False

    def full(self) -> bool:
        return self.seen >= MAX_ROWS

    def _where(self, number: int, title: str, reason: str) -> RowError:
        title = " ".join(str(title or "").split())
        if len(title) > 80:
            title = title[:79] + "…"
        return RowError(number, f"“{title}”: {reason}" if title else reason, self.unit)

    def add(self, number: int, title: str, raw: dict[str, Any]) -> bool:
        """Validate one question; a bad one is named with the reason. Whether it was kept."""
        if self.stopped:
            return False  # the error below said "and the rest"
        if self.full():
            self.stopped = True
            self.result.errors.append(
                RowError(
                    number,
                    _("only %(max)s questions can be imported at once; this one and the rest were skipped")
                    % {"max": MAX_ROWS},
                    self.unit,
                )
            )
            return False
        self.seen += 1
        try:
            self.result.questions.append(clean_question(raw))
        except InvalidQuestion as error:
            self.result.errors.append(self._where(number, title, str(error)))
            return False
        return True

    def skip(self, number: int, title: str, reason: str) -> None:
        self.result.errors.append(self._where(number, title, reason))

    def note(self, number: int, title: str, reason: str) -> None:
        self.result.notes.append(self._where(number, title, reason))


def refused(error: FileRefused) -> ImportResult:
    return ImportResult(errors=[RowError(error.line, str(error), error.unit)])


def decode(raw: bytes) -> tuple[str, bool]:
    """The file's text: UTF-8 (with or without its BOM), else Windows-1252 as old Windows tools wrote it; and
    whether it had to fall back. Control characters are taken out."""
    try:
        text, fallback = raw.decode("utf-8-sig"), False
    except UnicodeDecodeError:
        text, fallback = raw.decode("cp1252", errors="replace"), True
    return CONTROL.sub("", text), fallback


class _Text(HTMLParser):
    BREAKS = {"p", "br", "div", "li", "tr", "h1", "h2", "h3", "h4", "h5", "h6"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.images: list[tuple[str, str]] = []
        self.skipping = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("script", "style"):
            self.skipping += 1
        elif tag == "img":
            found = dict(attrs)
            self.images.append((found.get("src") or "", found.get("alt") or ""))
        elif tag in self.BREAKS:
            self.parts.append(" ")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style") and self.skipping:
            self.skipping -= 1
        elif tag in self.BREAKS:
            self.parts.append(" ")

    def handle_data(self, data: str) -> None:
        if not self.skipping:
            self.parts.append(data)


def plain(text: str | None, *, is_html: bool = True) -> str:
    """HTML (Moodle's question text) as one line of plain text."""
    return html_parts(text, is_html=is_html)[0]


def html_parts(text: str | None, *, is_html: bool = True) -> tuple[str, list[tuple[str, str]]]:
    """The plain text of some HTML and the pictures it shows, as (src, alt)."""
    text = CONTROL.sub("", text or "")
    if not is_html:
        return " ".join(html.unescape(text).split()), []
    parser = _Text()
    parser.feed(text)
    parser.close()
    return " ".join("".join(parser.parts).split()), parser.images


def cell_text(value: Any) -> str:
    """A spreadsheet cell as text: a whole number without ".0", nothing for an empty cell."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return " ".join(CONTROL.sub("", str(value)).split())


def seconds(value: Any) -> int | None:
    """A time limit in seconds as a file writes it ("20", 20.0, "20 sec"), brought within the bounds a question's
    time may have; None when there is none."""
    match = re.search(r"\d+(?:[.,]\d+)?", cell_text(value))
    if match is None:
        return None
    number = float(match.group().replace(",", "."))
    if not math.isfinite(number):
        return None
    return min(max(round(number), MIN_SECONDS), MAX_SECONDS) if number > 0 else None


def tidy(value: float) -> int | float:
    return int(value) if float(value).is_integer() and abs(value) < 2**53 else value


def number_range(answer: float, tolerance: float) -> tuple[int | float, int | float]:
    """A slider's bounds for a number question that comes without any: about a tenth of the answer's size (and
    ten tolerances) each way, on round numbers, the answer off the middle; never below 0 for an answer that
    cannot be negative by its tolerance."""
    spread = max(abs(answer) * 0.1, tolerance * 10) or 10.0
    exponent = math.floor(math.log10(spread))
    step = 10.0**exponent
    digits = max(0, -exponent)
    low = round(math.floor((answer - spread) / step) * step, digits)
    high = round(math.ceil((answer + spread / 2) / step) * step, digits)
    if answer >= 0 and low < 0 <= answer - tolerance:
        low = 0
    if high <= answer:
        high = round(answer + step, digits)
    return tidy(low), tidy(high)
