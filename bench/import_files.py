"""What hostile and oversized question files cost the importer, against a good file read in the same run.

    DJANGO_DEBUG=1 .venv/bin/python bench/import_files.py [--repeat 3]

For each case: the median wall time over --repeat reads, the peak Python memory of one read (tracemalloc), the
ratio of each to the baseline (a 40-question Kahoot! spreadsheet) and what the importer answered. No database.
Cases: a zip bomb named .xlsx (55 MB of spaces packed into ~250 KB), Moodle XML with the billion-laughs entity
bomb, the same with an outside entity, a spreadsheet of 50,000 rows, a 40 MB file of random bytes named .xlsx, and
a GIFT file whose brace is never closed.
"""

import argparse
import io
import os
import statistics
import sys
import time
import tracemalloc
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("DJANGO_DEBUG", "1")

import django  # noqa: E402

django.setup()

from openpyxl import Workbook  # noqa: E402

from quiz import importers  # noqa: E402
from tests.quiz.importers.conftest import kahoot_rows, kahoot_sheet_without_size  # noqa: E402
from tests.quiz.importers.test_bad_input import BILLION_LAUGHS, EXTERNAL  # noqa: E402


def xlsx(rows: list[list]) -> bytes:
    book = Workbook(write_only=True)
    sheet = book.create_sheet()
    for row in rows:
        sheet.append(row)
    buffer = io.BytesIO()
    book.save(buffer)
    return buffer.getvalue()


def zip_bomb() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        archive.writestr("xl/workbook.xml", "<workbook/>")
        with archive.open("xl/worksheets/sheet1.xml", "w", force_zip64=True) as sheet:
            for _ in range(55):
                sheet.write(b" " * (1 << 20))
    return buffer.getvalue()


def cases() -> list[tuple[str, str, bytes]]:
    good = xlsx(kahoot_rows([[f"Question {n}?", "yes", "no", "maybe", None, 20, 1] for n in range(40)]))
    many = kahoot_sheet_without_size(50_000)
    return [
        ("baseline: Kahoot! 40 questions", "quiz.xlsx", good),
        ("zip bomb named .xlsx", "quiz.xlsx", zip_bomb()),
        ("XML entity bomb", "bank.xml", BILLION_LAUGHS),
        ("XML outside entity", "bank.xml", EXTERNAL),
        ("spreadsheet of 50,000 rows", "big.xlsx", many),
        ("40 MB of random bytes as .xlsx", "junk.xlsx", b"PK\x03\x04" + os.urandom(40 * 1024 * 1024)),
        ("GIFT brace never closed", "q.gift", b"::A::Question {=yes ~no\n" * 1000),
    ]


def measure(name: str, raw: bytes, repeat: int) -> tuple[float, int, str]:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        result = importers.read(name, raw)
        times.append(time.perf_counter() - start)
    tracemalloc.start()
    importers.read(name, raw)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    answer = f"{len(result.questions)} imported; " + (str(result.errors[-1])[:70] if result.errors else "no error")
    return statistics.median(times), peak, answer


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    rows = []
    for label, name, raw in cases():
        seconds, peak, answer = measure(name, raw, args.repeat)
        rows.append((label, len(raw), seconds, peak, answer))
        print(f"measured: {label}", file=sys.stderr, flush=True)
    base_time, base_peak = rows[0][2], rows[0][3]
    print(f"{'case':34} {'file':>10} {'median ms':>10} {'x base':>7} {'peak MB':>8} {'x base':>7}  answer")
    for label, size, seconds, peak, answer in rows:
        print(
            f"{label:34} {size / 1048576:9.2f}M {seconds * 1000:10.2f} {seconds / base_time:7.3f} "
            f"{peak / 1048576:8.2f} {peak / base_peak:7.2f}  {answer}"
        )


if __name__ == "__main__":
    main()
