"""Question files from other tools, each format one entry of `FORMATS`: how to recognise it (from its content and
its file name), how to read it, and how large it may be. Every importer hands its questions to `clean_question`
(quiz/validation.py), names what it could not import with the reason, and refuses a broken file with a message.

Adding a format: a module here with `detect(name, raw)` and `parse(raw) -> ImportResult`, and its line in
`FORMATS` (the first whose `detect` says yes reads the file; CSV reads what none claims).
"""

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import PurePath

from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from quiz import importing
from quiz.importers import aiken, gift, kahoot, moodle_export, moodle_xml, quizizz
from quiz.importers.common import FileRefused, decode, refused
from quiz.importers.xlsx import looks_like_xlsx
from quiz.importing import ImportResult, RowError
from quiz.validation import QuestionData


def _text_parser(parse: Callable[[str], ImportResult]) -> Callable[[bytes], ImportResult]:
    def read(raw: bytes) -> ImportResult:
        text, fallback = decode(raw)
        result = parse(text)
        if fallback:
            result.notes.append(
                RowError(0, _("the file is not UTF-8; it was read as Windows-1252 (check accented letters)"))
            )
        return result

    return read


def _is_json(name: str, raw: bytes) -> bool:
    return name.lower().endswith(".json") or raw.lstrip(b"\xef\xbb\xbf \t\r\n")[:1] in (b"[", b"{")


def _is_csv(name: str, raw: bytes) -> bool:
    return name.lower().endswith(".csv")


@dataclass(frozen=True)
class Format:
    name: str
    label: object  # a lazily translated text
    detect: Callable[[str, bytes], bool]
    parse: Callable[[bytes], ImportResult]
    # Formats that carry pictures may be as large as a JSON file; text formats 1 MB.
    carries_pictures: bool = False

    def max_bytes(self) -> int:
        return importing.max_json_bytes() if self.carries_pictures else importing.MAX_TEXT_BYTES


CSV = Format("csv", gettext_lazy("Quizgate CSV"), _is_csv, _text_parser(importing.parse_csv))
FORMATS: tuple[Format, ...] = (
    Format("quizizz", gettext_lazy("Quizizz/Wayground spreadsheet"), quizizz.detect, quizizz.parse, True),
    Format("kahoot", gettext_lazy("Kahoot! spreadsheet"), kahoot.detect, kahoot.parse, True),
    Format("moodle_xml", gettext_lazy("Moodle XML"), moodle_xml.detect, moodle_xml.parse, True),
    Format("json", gettext_lazy("Quizgate JSON"), _is_json, _text_parser(importing.parse_json), True),
    CSV,
    Format("gift", gettext_lazy("GIFT"), gift.detect, gift.parse),
    Format("aiken", gettext_lazy("Aiken"), aiken.detect, aiken.parse),
)


@dataclass(frozen=True)
class Export:
    """A round written in another tool's format: the file's bytes and the texts of the questions it cannot hold."""

    extension: str
    content_type: str
    write: Callable[[str, list[QuestionData]], tuple[bytes, list[str]]]


EXPORTS: dict[str, Export] = {
    "gift": Export("gift.txt", "text/plain; charset=utf-8", gift.export),
    "moodle": Export("moodle.xml", "application/xml; charset=utf-8", moodle_export.export),
    "kahoot": Export("kahoot.xlsx", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", kahoot.export),
}


def format_of(name: str, raw: bytes) -> Format:
    for fmt in FORMATS:
        if fmt.detect(name, raw):
            return fmt
    return CSV


def max_upload_bytes() -> int:
    return max(fmt.max_bytes() for fmt in FORMATS)


def read(name: str, raw: bytes) -> ImportResult:
    """A file (or pasted text, `name` ""), its format recognised, read; never raises for what a person sends."""
    suffix = PurePath(name).suffix.lower()
    if suffix in (".xlsx", ".xls", ".xlsm") and not looks_like_xlsx(raw):
        message = _("the file is named %(suffix)s but is not an .xlsx spreadsheet (an old .xls? save it as .xlsx)")
        return refused(FileRefused(message % {"suffix": suffix}))
    fmt = format_of(name, raw)
    if len(raw) > fmt.max_bytes():
        size = f"{fmt.max_bytes() / (1024 * 1024):g}"
        return refused(FileRefused(_("the file is larger than %(size)s MB") % {"size": size}))
    result = fmt.parse(raw)
    result.format_label = str(fmt.label)
    return result


def read_pasted(text: str) -> ImportResult:
    return read("", text.encode("utf-8"))
