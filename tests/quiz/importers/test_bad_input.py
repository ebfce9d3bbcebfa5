"""Broken and hostile files: a clear message (naming the line or row where there is one), never a crash."""

import io
import zipfile

import pytest

from quiz import importers
from quiz.importers import moodle_xml
from quiz.importers.xlsx import MAX_SHEET_ROWS
from quiz.importing import MAX_ROWS, MAX_TEXT_BYTES
from tests.quiz.importers.conftest import FILES, KAHOOT_HEADER, kahoot_rows, kahoot_sheet_without_size, xlsx


def only_error(result) -> str:
    assert result.questions == []
    assert len(result.errors) == 1
    return str(result.errors[0])


def test_truncated_spreadsheet(kahoot_file):
    message = only_error(importers.read("quiz.xlsx", kahoot_file[: len(kahoot_file) // 2]))
    assert "damaged or cut short" in message


def test_spreadsheet_without_header_row():
    message = only_error(importers.read("quiz.xlsx", xlsx([["just", "some"], ["cells", "here"]])))
    assert "no header row was found" in message and "Correct answer(s)" in message


def test_old_xls_or_renamed_file():
    message = only_error(importers.read("quiz.xls", b"\xd0\xcf\x11\xe0 an old binary workbook"))
    assert "not an .xlsx spreadsheet" in message


@pytest.fixture(scope="module")
def zip_bomb() -> bytes:
    """An .xlsx-shaped zip whose sheet unpacks to 55 MB of spaces from about 250 KB."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        archive.writestr("xl/workbook.xml", "<workbook/>")
        with archive.open("xl/worksheets/sheet1.xml", "w", force_zip64=True) as sheet:
            for _ in range(55):
                sheet.write(b" " * (1 << 20))
    return buffer.getvalue()


def test_zip_bomb_named_xlsx_is_refused_before_unpacking(zip_bomb):
    assert len(zip_bomb) < 1024 * 1024
    message = only_error(importers.read("innocent.xlsx", zip_bomb))
    assert "unpacks to far more than it holds" in message


def test_too_many_rows_stop_at_the_limit_with_the_row_named():
    rows = kahoot_rows([[f"Question {n}?", "yes", "no", None, None, 20, 1] for n in range(MAX_SHEET_ROWS + 50)])
    result = importers.read("big.xlsx", xlsx(rows))
    assert len(result.questions) == MAX_ROWS
    where = [error.where for error in result.errors]
    # Row 209 is the first question past the limit; the sheet is not read past MAX_SHEET_ROWS.
    assert where == [f"row {8 + MAX_ROWS + 1}", f"row {MAX_SHEET_ROWS + 1}"]
    assert "the rest were skipped" in result.errors[0].reason


def test_50000_rows_without_their_size_are_refused_before_opening():
    raw = kahoot_sheet_without_size(50_000)
    assert len(raw) < 1024 * 1024  # small packed: the sheet itself is what is too large
    message = only_error(importers.read("big.xlsx", raw))
    assert "sheets are too large" in message


def test_a_sheet_without_its_size_is_read_when_small():
    result = importers.read("small.xlsx", kahoot_sheet_without_size(3))
    assert [q.text for q in result.questions] == ["Question 0?", "Question 1?", "Question 2?"]


BILLION_LAUGHS = b"""<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
 <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
 <!ENTITY lol5 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;">
 <!ENTITY lol6 "&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;">
 <!ENTITY lol7 "&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;">
 <!ENTITY lol8 "&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;">
 <!ENTITY lol9 "&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;">
]>
<quiz><question type="truefalse"><name><text>&lol9;</text></name></question></quiz>
"""

EXTERNAL = b"""<?xml version="1.0"?>
<!DOCTYPE quiz [<!ENTITY secret SYSTEM "file:///etc/passwd">]>
<quiz><question type="shortanswer"><questiontext><text>&secret;</text></questiontext></question></quiz>
"""


@pytest.mark.parametrize("content", [BILLION_LAUGHS, EXTERNAL], ids=["entity bomb", "external entity"])
def test_xml_entities_are_refused(content):
    assert importers.format_of("bank.xml", content).name == "moodle_xml"
    message = only_error(importers.read("bank.xml", content))
    assert "declares entities or a document type" in message


def test_malformed_xml_names_its_line():
    broken = b'<?xml version="1.0"?>\n<quiz>\n<question type="truefalse">\n<name><text>A\x01B</text></name>\n</quiz>'
    result = moodle_xml.parse(broken)
    assert result.errors[0].line == 4 and "cannot be read" in result.errors[0].reason


def test_text_files_larger_than_the_limit_are_refused():
    big = (FILES / "gift_sample.gift").read_bytes() * (MAX_TEXT_BYTES // 1000)
    message = only_error(importers.read("huge.gift", big))
    assert "larger than 1 MB" in message


def test_control_characters_are_taken_out_and_old_encodings_read():
    text = "::Q1::Caf\xe9 or tea\x00\x07?{=Tea ~Caf\xe9}\n".encode("cp1252")
    result = importers.read("drinks.gift", text)
    assert [(q.text, q.options) for q in result.questions] == [("Café or tea?", ("Tea", "Café"))]
    assert "Windows-1252" in result.notes[0].reason


def test_a_header_only_kahoot_sheet_imports_nothing_and_says_so():
    result = importers.read("empty.xlsx", xlsx([KAHOOT_HEADER]))
    assert result.questions == [] and result.errors == []
