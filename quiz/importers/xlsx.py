"""A spreadsheet (.xlsx) read safely: openpyxl in read-only mode, after the zip it is has been looked at.

An .xlsx is a zip of XML files. Before openpyxl opens it the zip's directory is read: too many members, too many
bytes once unpacked, a member that unpacks to far more than it is packed (a zip bomb), or sheets larger than
MAX_SHEETS_XML (openpyxl would scan them whole on opening) refuse the file. Then
only the first sheet is read, row by row, at most MAX_SHEET_ROWS rows of MAX_COLUMNS cells.
"""

import io
import zipfile
from collections.abc import Callable, Iterator
from typing import Any

from django.utils.translation import gettext as _

from quiz.importers.common import FileRefused, Report, refused
from quiz.importing import ImportResult

MAX_MEMBERS = 500
MAX_UNPACKED = 50 * 1024 * 1024
MAX_RATIO = 500
MAX_SHEET_ROWS = 1000
# openpyxl scans a whole sheet for its size when the sheet does not say it (a hostile file leaves it out), and it
# does so for every sheet on opening: the sheets' XML is bounded before that. A sheet of 1,000 rows of 30 cells
# is about 1 MB.
MAX_SHEETS_XML = 2 * 1024 * 1024
MAX_COLUMNS = 30


def looks_like_xlsx(raw: bytes) -> bool:
    return raw[:4] == b"PK\x03\x04"


def _check_zip(raw: bytes) -> None:
    try:
        archive = zipfile.ZipFile(io.BytesIO(raw))
    except (zipfile.BadZipFile, OSError, ValueError) as error:
        raise FileRefused(_("the spreadsheet is damaged or cut short (it is not a whole .xlsx file)")) from error
    with archive:
        members = archive.infolist()
        if len(members) > MAX_MEMBERS:
            raise FileRefused(_("the spreadsheet holds too many parts to be read safely"))
        total = sum(member.file_size for member in members)
        bomb = any(
            member.file_size > 10 * 1024 * 1024 and member.file_size > MAX_RATIO * member.compress_size
            for member in members
        )
        if total > MAX_UNPACKED or bomb:
            raise FileRefused(
                _("the spreadsheet unpacks to far more than it holds (over %(size)s MB): it is refused")
                % {"size": MAX_UNPACKED // (1024 * 1024)}
            )
        sheets = sum(member.file_size for member in members if member.filename.startswith("xl/worksheets/"))
        if sheets > MAX_SHEETS_XML:
            raise FileRefused(
                _("the spreadsheet's sheets are too large (over %(size)s MB of cells): split it into smaller files")
                % {"size": MAX_SHEETS_XML // (1024 * 1024)}
            )
        if "xl/workbook.xml" not in archive.namelist():
            raise FileRefused(_("the file is a zip but not an Excel spreadsheet (.xlsx)"))


def head_words(raw: bytes, limit: int = 256 * 1024) -> str:
    """The start of the workbook's strings and of its sheets' XML, case folded, read from the zip without opening
    the workbook (to tell one tool's template from another's); "" for a file that is not a readable zip."""
    if not looks_like_xlsx(raw):
        return ""
    parts = []
    try:
        with zipfile.ZipFile(io.BytesIO(raw)) as archive:
            for member in archive.infolist()[:MAX_MEMBERS]:
                if member.filename == "xl/sharedStrings.xml" or member.filename.startswith("xl/worksheets/sheet"):
                    with archive.open(member) as file:
                        parts.append(file.read(limit).decode("utf-8", errors="replace"))
    except (zipfile.BadZipFile, OSError, ValueError, EOFError, RuntimeError, NotImplementedError):
        return ""
    return " ".join(" ".join(parts).split()).casefold()


def sheet_rows(raw: bytes) -> Iterator[tuple[int, list[Any]]]:
    """(row number, cell values) of the spreadsheet's first sheet, empty rows left out."""
    _check_zip(raw)
    # Imported here: openpyxl takes a while to import, and only a spreadsheet needs it.
    from openpyxl import load_workbook

    try:
        book = load_workbook(io.BytesIO(raw), read_only=True, data_only=True)
    except Exception as error:  # openpyxl raises many kinds (KeyError, ValueError, lxml's...) for a broken file
        raise FileRefused(_("the spreadsheet cannot be read: %(error)s") % {"error": type(error).__name__}) from error
    try:
        sheet = book.worksheets[0]
        for number, row in enumerate(sheet.iter_rows(max_col=MAX_COLUMNS, values_only=True), start=1):
            if number > MAX_SHEET_ROWS:
                raise FileRefused(
                    _("the sheet has more than %(max)s rows; split it into smaller files") % {"max": MAX_SHEET_ROWS},
                    number,
                    "row",
                )
            cells = list(row)
            if any(cell not in (None, "") for cell in cells):
                yield number, cells
    except FileRefused:
        raise
    except Exception as error:
        raise FileRefused(_("the spreadsheet cannot be read: %(error)s") % {"error": type(error).__name__}) from error
    finally:
        book.close()


def find_header(
    rows: Iterator[tuple[int, list[Any]]], wanted: dict[str, tuple[str, ...]], required: tuple[str, ...]
) -> tuple[int, dict[str, int]]:
    """The first row naming every required column (by how its header starts, case folded), and where each wanted
    column is; the rows before it (a template's instructions) are passed over."""
    for number, cells in rows:
        found: dict[str, int] = {}
        for index, cell in enumerate(cells):
            header = " ".join(str(cell or "").split()).casefold()
            for name, starts in wanted.items():
                if name not in found and any(header.startswith(start) for start in starts):
                    found[name] = index
        if all(name in found for name in required):
            return number, found
    raise FileRefused(_("no header row was found: a row naming the columns %(names)s") % {"names": ", ".join(required)})


def read_sheet(
    raw: bytes,
    headers: Any,
    required: Any,
    row: Callable[[Report, int, list[Any], dict[str, int]], None],
) -> ImportResult:
    """A spreadsheet read row by row under its header row: each row through `row`, a file refused part way keeps
    what came before it (and says why the rest did not come)."""
    report = Report(unit="row")
    try:
        rows = sheet_rows(raw)
        _header_row, columns = find_header(rows, headers, required)
        for number, cells in rows:
            row(report, number, cells, columns)
    except FileRefused as error:
        if report.result.questions or report.result.errors:
            report.result.errors.append(refused(error).errors[0])
            return report.result
        return refused(error)
    return report.result
