"""CSV that a spreadsheet opens as text. A cell starting with = + - @ (or a tab or carriage return, which
some programs skip before reading a formula) is run as a formula by Excel, LibreOffice and Google Sheets:
`=HYPERLINK(...)` in a nickname or a question would become a link or a data leak on the host's machine.
OWASP's advice (https://owasp.org/www-community/attacks/CSV_Injection): prefix such a cell with an
apostrophe, which spreadsheets read as "this is text" and do not show.

Every CSV the app writes goes through `csv_writer`, so a column added later cannot forget the guard; the
importer reads our own exports back with `csv_unguard`.
"""

import csv
import io
from collections.abc import Iterable, Iterator
from typing import Any, Protocol

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
GUARD = "'"


class _Writable(Protocol):
    def write(self, text: str, /) -> Any: ...


def csv_guard(value: str) -> str:
    return GUARD + value if value.startswith(FORMULA_STARTS) else value


def csv_unguard(value: str) -> str:
    """Undo `csv_guard`: only an apostrophe followed by a formula start was added by it."""
    if value.startswith(GUARD) and value[1:].startswith(FORMULA_STARTS):
        return value[1:]
    return value


class SafeCsvWriter:
    """`csv.writer` whose every text cell is guarded; numbers are written as they are."""

    def __init__(self, out: _Writable, **kwargs: Any):
        self._writer = csv.writer(out, **kwargs)

    def writerow(self, row: Iterable[Any]) -> Any:
        return self._writer.writerow([csv_guard(cell) if isinstance(cell, str) else cell for cell in row])

    def writerows(self, rows: Iterable[Iterable[Any]]) -> None:
        for row in rows:
            self.writerow(row)


def csv_writer(out: _Writable, **kwargs: Any) -> SafeCsvWriter:
    return SafeCsvWriter(out, **kwargs)


def csv_reader(text: str):
    """A reader of a CSV as a spreadsheet exports it: a byte-order mark dropped, the delimiter (";" in many
    locales, "," otherwise) the one its header line uses more."""
    text = text.removeprefix("\ufeff")
    header_line = text.split("\n", 1)[0]
    delimiter = ";" if header_line.count(";") > header_line.count(",") else ","
    return csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)


def csv_columns(reader) -> list[str] | None:
    """The header's column names, trimmed and in lower case; None when there is no header."""
    header = next(reader, None)
    if header is None or not any(cell.strip() for cell in header):
        return None
    return [cell.strip().lower() for cell in header]


def csv_rows(reader) -> Iterator[tuple[int, list[str]]]:
    """(line number, cells) of each row after the header that is not blank. A quoted cell may span lines: a row
    starts on the line after the previous row ended."""
    last_line = reader.line_num
    for cells in reader:
        line, last_line = last_line + 1, reader.line_num
        if any(cell.strip() for cell in cells):
            yield line, cells
