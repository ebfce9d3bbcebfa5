import csv
import io
import re
from pathlib import Path

import pytest

from core.spreadsheet import csv_guard, csv_unguard, csv_writer

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("cell", "written"),
    [
        ('=HYPERLINK("http://evil.example","x")', '\'=HYPERLINK("http://evil.example","x")'),
        ("+1+1", "'+1+1"),
        ("-2+3", "'-2+3"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("\t=1", "'\t=1"),
        ("\r=1", "'\r=1"),
        ("Plain text", "Plain text"),
        ("a=1", "a=1"),
        ("'Tis the season", "'Tis the season"),
        ("", ""),
    ],
)
def test_a_cell_a_spreadsheet_would_run_gets_an_apostrophe_and_reads_back_as_written(cell, written):
    assert csv_guard(cell) == written
    assert csv_unguard(csv_guard(cell)) == cell


def test_the_writer_guards_every_text_cell_and_leaves_numbers_alone():
    out = io.StringIO(newline="")
    csv_writer(out).writerow([-3, "=1+1", "ok", 2.5, "-x"])
    assert next(csv.reader(io.StringIO(out.getvalue()))) == ["-3", "'=1+1", "ok", "2.5", "'-x"]


def test_every_csv_the_app_writes_goes_through_the_guarded_writer():
    # A new export built on csv.writer directly would skip the guard: only core/spreadsheet.py may use it.
    raw_writer = re.compile(r"\bcsv\s*\.\s*(writer|DictWriter)\b|from\s+csv\s+import[^\n]*\b(writer|DictWriter)\b")
    offenders = [
        str(path.relative_to(ROOT))
        for app in ("config", "core", "lobby", "quiz", "verifier", "bench")
        for path in (ROOT / app).rglob("*.py")
        if path != ROOT / "core" / "spreadsheet.py" and raw_writer.search(path.read_text(encoding="utf-8"))
    ]
    assert offenders == []
    assert raw_writer.search("writer = csv.writer(out)")  # the pattern itself finds what it must
