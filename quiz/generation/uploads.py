"""A host's uploaded source file (.txt, .md, .pdf) read as the round's source text.

A PDF is read in a child process (quiz/generation/pdf_text.py) with a page limit, a limit on what its content
streams unpack to, a memory limit and a deadline at which it is killed: a small file can unpack to gigabytes, or
take minutes to walk, and neither may land in the web process."""

import json
import subprocess
import sys

from django.conf import settings
from django.utils.translation import gettext as _

from quiz.exceptions import QuizError
from quiz.jobs import conf

UPLOAD_SUFFIXES = (".txt", ".md", ".pdf")


def generation_source_from_upload(*, name: str, data: bytes) -> str:
    lowered = name.lower()
    if not lowered.endswith(UPLOAD_SUFFIXES):
        raise QuizError(_("Upload a .txt, .md or .pdf file."))
    if len(data) > conf.upload_max_bytes():
        raise QuizError(_("That file is larger than %(size)s MB.") % {"size": conf.upload_max_bytes() // (1024 * 1024)})
    if lowered.endswith(".pdf"):
        text = pdf_text(data)
    else:
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError:
            text = data.decode("latin-1")
    text = text.strip()
    if not text:
        raise QuizError(_("That file has no text in it (a scanned PDF has only pictures of text)."))
    return text


def pdf_text(data: bytes) -> str:
    """The PDF's text, read by quiz/generation/pdf_text.py in a child process within the QUIZ_PDF_* limits;
    QuizError with the reason when it is refused."""
    limits = conf.pdf_limits()
    command = [sys.executable, "-m", "quiz.generation.pdf_text"]
    command += [str(limits.max_pages), str(limits.max_unpacked_bytes), str(conf.source_max_chars())]
    command += [str(limits.max_memory_bytes)]
    child = subprocess.Popen(  # noqa: S603 - our own module, arguments are numbers
        command,
        cwd=settings.BASE_DIR,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        out, _err = child.communicate(data, timeout=limits.timeout)
    except subprocess.TimeoutExpired:
        child.kill()
        child.communicate()
        raise QuizError(
            _("Reading that PDF took longer than %(seconds)s seconds, so it was stopped.")
            % {"seconds": f"{limits.timeout:g}"}
        ) from None
    try:
        result = json.loads(out or b"{}")
    except ValueError:
        result = {}
    if isinstance(result.get("text"), str):
        return result["text"]
    refused = result.get("refused") or ("memory" if child.returncode else "unreadable")
    if refused == "pages":
        raise QuizError(
            _("That PDF has %(pages)s pages; at most %(limit)s are read. Upload the part you need.")
            % {"pages": result.get("pages", "too many"), "limit": limits.max_pages}
        )
    if refused == "content":
        raise QuizError(
            _("That PDF's pages unpack to more than %(size)s MB, so it is not read. Upload the part you need.")
            % {"size": f"{limits.max_unpacked_bytes / (1024 * 1024):g}"}
        )
    if refused == "complex":
        raise QuizError(_("That PDF is too complex to read, so it is not read. Upload the part you need."))
    if refused == "memory":
        raise QuizError(_("That PDF needs too much memory to read, so it is not read."))
    raise QuizError(_("That PDF could not be read."))
