"""A host's uploaded source file (.txt, .md, .pdf) read as the round's source text."""

import io

from quiz import conf
from quiz.exceptions import QuizError

UPLOAD_SUFFIXES = (".txt", ".md", ".pdf")


def generation_source_from_upload(*, name: str, data: bytes) -> str:
    lowered = name.lower()
    if not lowered.endswith(UPLOAD_SUFFIXES):
        raise QuizError("Upload a .txt, .md or .pdf file.")
    if len(data) > conf.upload_max_bytes():
        raise QuizError(f"That file is larger than {conf.upload_max_bytes() // (1024 * 1024)} MB.")
    if lowered.endswith(".pdf"):
        try:
            from pypdf import PdfReader

            reader = PdfReader(io.BytesIO(data))
            text = "\n".join(page.extract_text() or "" for page in reader.pages)
        except Exception as error:  # noqa: BLE001 - pypdf raises many kinds for a damaged file
            raise QuizError("That PDF could not be read.") from error
    else:
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError:
            text = data.decode("latin-1")
    text = text.strip()
    if not text:
        raise QuizError("That file has no text in it (a scanned PDF has only pictures of text).")
    return text
