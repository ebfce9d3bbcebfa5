"""A PDF bomb uploaded as a grounded round's source: 400 pages sharing one content stream that unpacks to 40 MB.
Read in the web process it took seconds and hundreds of MB before "could not be read"; read in its own process
within the QUIZ_PDF_* limits it is refused at once, with the limit it met, and the web process does not grow."""

import time
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from quiz.exceptions import QuizError
from quiz.generation.uploads import generation_source_from_upload
from quiz.models import GenerationJob
from tests.fakes.bombs import PDF_BOMB_DECODED_BYTES, PDF_BOMB_PAGES, pdf_bomb
from tests.quiz.generation.test_uploads import pdf_with_text

MIB = 1024 * 1024


def _peak_rss_reset() -> None:
    # "5" resets this process's peak resident size (VmHWM) to its current size (Linux 4.0 and later).
    Path("/proc/self/clear_refs").write_text("5")


def _peak_rss_kb() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError("no VmHWM")


def _timed(function, *args, **kwargs) -> tuple[float, object]:
    started = time.monotonic()
    try:
        result = function(*args, **kwargs)
    except QuizError as error:
        result = error
    return time.monotonic() - started, result


def _post(client, upload: SimpleUploadedFile):
    data = {"topic": "", "count": 5, "difficulty": "medium", "language": "en", "source_file": upload}
    return client.post(reverse("quiz:generate_new"), data)


@pytest.fixture
def configured(settings):
    settings.OPENAI_API_KEY = "test-key"
    settings.OPENAI_BASE_URL = "http://127.0.0.1:9/v1"
    settings.QUIZ_WRITER_MODEL = "writer-2025-01-01"
    settings.VERIFIER_BACKEND = "off"


def test_the_bomb_is_what_it_claims():
    bomb = pdf_bomb()
    assert len(bomb) < 256 * 1024
    assert bomb.count(b"/Type /Page ") == PDF_BOMB_PAGES and bomb.count(b"/FlateDecode") == 1
    assert PDF_BOMB_DECODED_BYTES == 40 * MIB


@pytest.mark.django_db
def test_a_pdf_bomb_is_refused_at_once_on_the_page_and_the_web_process_does_not_grow(client, configured):
    bomb = pdf_bomb()
    small = pdf_with_text("The kestrel hovers.")
    # The baseline: a small good PDF read the same way, twice (the first read warms the imports).
    _timed(generation_source_from_upload, name="notes.pdf", data=small)
    small_seconds, text = _timed(generation_source_from_upload, name="notes.pdf", data=small)
    assert text == "The kestrel hovers."

    _peak_rss_reset()
    before_kb = _peak_rss_kb()
    started = time.monotonic()
    page = _post(client, SimpleUploadedFile("bomb.pdf", bomb, content_type="application/pdf"))
    bomb_seconds = time.monotonic() - started
    grown_kb = _peak_rss_kb() - before_kb

    assert page.status_code == 200
    assert f"That PDF has {PDF_BOMB_PAGES} pages; at most 200 are read." in page.content.decode()
    assert not GenerationJob.objects.exists()
    assert bomb_seconds < 4 * small_seconds + 0.5, (bomb_seconds, small_seconds)
    assert grown_kb < 8 * 1024, f"the web process's peak grew by {grown_kb} KB reading a {len(bomb)} byte PDF"


def test_with_the_page_limit_lifted_the_unpacked_size_refuses_it(settings):
    settings.QUIZ_PDF_MAX_PAGES = 1000
    _peak_rss_reset()
    before_kb = _peak_rss_kb()
    with pytest.raises(QuizError, match=r"That PDF's pages unpack to more than 20 MB, so it is not read."):
        generation_source_from_upload(name="bomb.pdf", data=pdf_bomb())
    assert _peak_rss_kb() - before_kb < 8 * 1024


def test_a_pdf_that_takes_too_long_is_killed_at_the_deadline(settings):
    # Every size limit lifted: walking 40 MB of text operators takes far longer than the deadline.
    settings.QUIZ_PDF_MAX_PAGES = 1000
    settings.QUIZ_PDF_MAX_UNPACKED_BYTES = 1024 * MIB
    settings.QUIZ_PDF_MAX_MEMORY_BYTES = 0
    small_seconds, _ = _timed(generation_source_from_upload, name="notes.pdf", data=pdf_with_text("Kestrels."))
    settings.QUIZ_PDF_TIMEOUT = 1.0
    seconds, error = _timed(generation_source_from_upload, name="bomb.pdf", data=pdf_bomb())
    assert isinstance(error, QuizError)
    assert str(error) == "Reading that PDF took longer than 1 seconds, so it was stopped."
    assert seconds < 1.0 + 4 * small_seconds + 0.5, (seconds, small_seconds)


def test_a_pdf_that_needs_more_memory_than_allowed_is_refused(settings):
    settings.QUIZ_PDF_MAX_PAGES = 1000
    settings.QUIZ_PDF_MAX_UNPACKED_BYTES = 1024 * MIB
    settings.QUIZ_PDF_MAX_MEMORY_BYTES = 160 * MIB
    with pytest.raises(QuizError, match="That PDF needs too much memory to read"):
        generation_source_from_upload(name="bomb.pdf", data=pdf_bomb())
    # The same limit reads a good PDF.
    settings.QUIZ_PDF_MAX_MEMORY_BYTES = 160 * MIB
    assert generation_source_from_upload(name="notes.pdf", data=pdf_with_text("Kestrels.")) == "Kestrels."
