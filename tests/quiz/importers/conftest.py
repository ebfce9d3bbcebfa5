"""Spreadsheets written in the layouts Kahoot! and Quizizz publish for their imports."""

import io
import zipfile
from pathlib import Path

import pytest
from openpyxl import Workbook

FILES = Path(__file__).parent / "files"

KAHOOT_HEADER = [
    "",
    "Question - max 120 characters",
    "Answer 1 - max 75 characters",
    "Answer 2 - max 75 characters",
    "Answer 3 - max 75 characters",
    "Answer 4 - max 75 characters",
    "Time limit (sec) – 5, 10, 20, 30, 60, 90, 120, or 240 secs",
    "Correct answer(s) - choose at least one",
]

QUIZIZZ_HEADER = [
    "Question Text",
    "Question Type",
    "Option 1",
    "Option 2",
    "Option 3",
    "Option 4",
    "Option 5",
    "Correct Answer",
    "Time in seconds",
    "Image Link",
    "Answer explanation",
]


def xlsx(rows: list[list]) -> bytes:
    book = Workbook()
    sheet = book.active
    for row in rows:
        sheet.append(row)
    buffer = io.BytesIO()
    book.save(buffer)
    return buffer.getvalue()


def kahoot_rows(questions: list[list]) -> list[list]:
    """Kahoot!'s template: a blank line, its instructions in column B, a blank line, the header on row 8."""
    return [
        [],
        ["", "Quiz template"],
        ["", "Add questions, at least two answer alternatives, time limits and choose correct answers (at least one)."],
        ["", "Have fun creating your awesome quiz!"],
        ["", "Remember: questions can have a maximum of 120 characters and answers can have 75 characters max."],
        ["", "And remember, if you're not using Excel you need to export to .xlsx format before you upload to Kahoot!"],
        [],
        KAHOOT_HEADER,
        *[[number, *row] for number, row in enumerate(questions, start=1)],
    ]


def kahoot_sheet_without_size(count: int) -> bytes:
    """A Kahoot! sheet of `count` question rows whose sheet XML, written directly, does not say its size (as a
    hostile file would not): openpyxl would scan it whole on opening."""
    template = xlsx(kahoot_rows([["Question?", "yes", "no", None, None, 20, 1]]))
    header = "".join(f'<c t="inlineStr"><is><t>{cell}</t></is></c>' for cell in kahoot_rows([])[-1])
    row = '<row><c><v>{n}</v></c><c t="inlineStr"><is><t>Question {n}?</t></is></c>'
    row += '<c t="inlineStr"><is><t>yes</t></is></c><c t="inlineStr"><is><t>no</t></is></c><c/><c/>'
    row += "<c><v>20</v></c><c><v>1</v></c></row>"
    sheet = (
        '<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>'
        f"<row>{header}</row>" + "".join(row.format(n=n) for n in range(count)) + "</sheetData></worksheet>"
    )
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(template)) as source, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for item in source.infolist():
            data = sheet.encode() if item.filename.startswith("xl/worksheets/") else source.read(item)
            target.writestr(item.filename, data)
    return out.getvalue()


@pytest.fixture
def kahoot_file() -> bytes:
    return xlsx(
        kahoot_rows(
            [
                ["What is the capital of Australia?", "Sydney", "Canberra", "Melbourne", "Perth", 20, "2"],
                ["Which of these are prime numbers?", "2", "3", "4", "9", 30, "1,2"],
                ["The Sun is a star.", "True", "False", None, None, 10, 1],
                ["Which ocean is the largest?", "Atlantic", "Pacific", None, None, 60, None],
                ["Pick the vowel", "b", "a", None, None, 5, "2"],
            ]
        )
    )


@pytest.fixture
def quizizz_file() -> bytes:
    return xlsx(
        [
            QUIZIZZ_HEADER,
            [
                "Capital of Spain?",
                "Multiple Choice",
                "Lisbon",
                "Madrid",
                "Rome",
                None,
                None,
                2,
                30,
                None,
                "Since 1561.",
            ],
            ["Which are fruits?", "Checkbox", "Apple", "Carrot", "Pear", None, None, "1,3", 45, None, None],
            [
                "Chemical symbol of gold?",
                "Fill-in-the-Blank",
                "Au",
                None,
                None,
                None,
                None,
                None,
                20,
                "https://example.org/gold.png",
                None,
            ],
            ["Your favourite season?", "Poll", "Spring", "Summer", "Autumn", "Winter", None, None, 20, None, None],
            ["Describe your weekend.", "Open-Ended", None, None, None, None, None, None, 60, None, None],
            ["Draw a cat.", "Draw", None, None, None, None, None, None, 60, None, None],
        ]
    )
