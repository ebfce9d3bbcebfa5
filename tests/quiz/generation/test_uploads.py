"""A host's uploaded source file read as text: PDF pages, UTF-8 (with or without a byte-order mark) or Latin-1."""

import io

import pytest
from pypdf import PdfWriter

from quiz.exceptions import QuizError
from quiz.generation.uploads import generation_source_from_upload


def pdf_with_text(text: str) -> bytes:
    """A one-page PDF whose page shows `text` in Helvetica, written by hand (offsets and all)."""
    stream = f"BT /F1 12 Tf 72 712 Td ({text}) Tj ET".encode()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n%s\nendstream" % (len(stream), stream),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = io.BytesIO()
    out.write(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(out.tell())
        out.write(b"%d 0 obj\n%s\nendobj\n" % (number, body))
    xref = out.tell()
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1))
    for offset in offsets:
        out.write(b"%010d 00000 n \n" % offset)
    out.write(b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref))
    return out.getvalue()


def blank_pdf() -> bytes:
    writer = PdfWriter()
    writer.add_blank_page(width=612, height=792)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def test_a_pdfs_text_becomes_the_source():
    assert generation_source_from_upload(name="Notes.PDF", data=pdf_with_text("The kestrel hovers.")) == (
        "The kestrel hovers."
    )


def test_a_pdf_without_text_or_a_damaged_one_is_refused_with_the_reason():
    with pytest.raises(QuizError, match="no text in it"):
        generation_source_from_upload(name="scan.pdf", data=blank_pdf())
    with pytest.raises(QuizError, match="That PDF could not be read."):
        generation_source_from_upload(name="broken.pdf", data=b"%PDF-1.4 not really")


def test_text_files_are_read_as_utf8_or_latin1():
    assert generation_source_from_upload(name="a.txt", data="\ufeffCafé au lait\n".encode()) == "Café au lait"
    assert generation_source_from_upload(name="a.md", data="Café".encode("latin-1")) == "Café"


def test_what_is_not_a_source_file_is_refused(settings):
    with pytest.raises(QuizError, match="Upload a .txt, .md or .pdf file."):
        generation_source_from_upload(name="notes.docx", data=b"PK")
    settings.QUIZ_UPLOAD_MAX_BYTES = 1024 * 1024
    with pytest.raises(QuizError, match="larger than 1 MB"):
        generation_source_from_upload(name="big.txt", data=b"x" * (1024 * 1024 + 1))
    with pytest.raises(QuizError, match="no text in it"):
        generation_source_from_upload(name="empty.txt", data=b" \n ")
