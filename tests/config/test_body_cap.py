"""Every upload page has a body cap of its own, checked before the body is parsed; over it the host gets the 413
page in the page's language, nothing is saved, and no traceback is logged. (tests/adversarial/test_upload_caps.py
sends the same through a real server; here the Django side, as the test client reaches it.)"""

import asyncio
import logging

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from core.request_body import FORM_ALLOWANCE, cap_for_path
from quiz.importing import MAX_TEXT_BYTES
from quiz.models import GenerationJob, Round
from review.admin import LABELS_MAX_BYTES
from review.models import Review

pytestmark = pytest.mark.django_db

LABELS_URL = "/admin/verifier/threshold/sweep/labels/import/"


def _errors(caplog) -> list[logging.LogRecord]:
    return [record for record in caplog.records if record.levelno >= logging.ERROR or record.exc_info]


def test_each_upload_page_declares_its_cap_and_the_rest_take_the_default(settings):
    settings.QUIZ_UPLOAD_MAX_BYTES = 1024 * 1024
    assert cap_for_path(reverse("quiz:generate_new")) == 1024 * 1024 + FORM_ALLOWANCE
    # The import takes a JSON file with its pictures inside (QUIZ_IMPORT_MAX_BYTES), and pasted text URL-encoded.
    settings.QUIZ_IMPORT_MAX_BYTES = 20 * 1024 * 1024
    assert cap_for_path(reverse("quiz:round_import")) == 20 * 1024 * 1024 + FORM_ALLOWANCE
    # The editor takes pictures too.
    assert cap_for_path(reverse("quiz:round_new")) == 20 * 1024 * 1024 + FORM_ALLOWANCE
    settings.QUIZ_IMPORT_MAX_BYTES = 1024 * 1024
    assert cap_for_path(reverse("quiz:round_import")) == 3 * MAX_TEXT_BYTES + FORM_ALLOWANCE
    assert cap_for_path(LABELS_URL) == LABELS_MAX_BYTES + FORM_ALLOWANCE
    settings.REQUEST_BODY_MAX_BYTES = 12345
    assert cap_for_path("/") == 12345 and cap_for_path("/no/such/page/") == 12345


def test_a_pasted_import_over_its_cap_gets_the_413_page_in_spanish(client, settings, caplog):
    settings.QUIZ_IMPORT_MAX_BYTES = 1024 * 1024  # no pictures: the pasted text's own cap
    client.cookies["django_language"] = "es"
    text = "question,option_a\n" + "x" * (3 * MAX_TEXT_BYTES + FORM_ALLOWANCE)
    with caplog.at_level(logging.INFO):
        response = client.post(reverse("quiz:round_import"), {"text": text})
    assert response.status_code == 413 and response["Connection"] == "close"
    assert "como máximo 3.1 MB se pueden enviar de una vez. No se guardó nada" in response.content.decode()
    assert not Round.objects.exists()
    assert _errors(caplog) == []


def test_a_source_file_over_its_cap_gets_the_413_page_in_german(client, settings, caplog):
    settings.OPENAI_API_KEY = "test-key"
    settings.QUIZ_WRITER_MODEL = "writer-2025-01-01"
    settings.QUIZ_UPLOAD_MAX_BYTES = 256 * 1024
    settings.QUIZ_SOURCE_MAX_CHARS = 10_000
    upload = SimpleUploadedFile("notes.txt", b"x" * (400 * 1024))
    data = {"topic": "Birds", "count": 5, "difficulty": "medium", "language": "en", "source_file": upload}
    response = client.post(reverse("quiz:generate_new"), data, HTTP_ACCEPT_LANGUAGE="de")
    assert response.status_code == 413
    assert "höchstens 0.3 MB können auf einmal gesendet werden" in response.content.decode()
    assert not GenerationJob.objects.exists()
    assert _errors(caplog) == []


def test_a_labels_file_over_its_cap_gets_the_413_page(admin_client, caplog):
    upload = SimpleUploadedFile("graded.csv", b"q" * (LABELS_MAX_BYTES + FORM_ALLOWANCE), content_type="text/csv")
    response = admin_client.post(LABELS_URL, {"labels": upload})
    assert response.status_code == 413
    assert "at most 2.1 MB can be sent at once. Nothing was saved" in response.content.decode()
    assert not Review.objects.exists()
    assert _errors(caplog) == []


def test_a_body_over_djangos_own_limit_gets_the_same_page_not_a_traceback(client, settings, caplog):
    # An operator who sets Django's limit below a page's cap: the same page, not a logged SuspiciousOperation.
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 10_000
    response = client.post(reverse("quiz:round_import"), {"text": "x" * 20_000})
    assert response.status_code == 413 and "Nothing was saved" in response.content.decode()
    assert _errors(caplog) == []


def test_a_request_under_its_cap_is_served_as_before(client):
    response = client.post(reverse("quiz:round_import"), {"text": "question,option_a,option_b,correct\nQ?,A,B,A\n"})
    assert response.status_code == 200 and Round.objects.count() == 1


async def _run(app, *, path: str, chunks: list[bytes], headers=()):
    """`app` wrapped in RequestBodyCap, fed `chunks` as the body and then the client's disconnect."""
    from config.body_cap import RequestBodyCap

    incoming = [{"type": "http.request", "body": c, "more_body": n < len(chunks) - 1} for n, c in enumerate(chunks)]
    incoming.append({"type": "http.disconnect"})
    sent: list[dict] = []

    async def receive():
        return incoming.pop(0)

    async def send(message):
        sent.append(message)

    scope = {"type": "http", "method": "POST", "path": path, "headers": list(headers)}
    async with asyncio.timeout(5):  # an app left waiting for a message that never comes fails, not hangs
        await RequestBodyCap(app)(scope, receive, send)
    return sent


async def test_a_body_within_its_cap_reaches_the_app_whole_and_the_disconnect_after_it(settings):
    settings.REQUEST_BODY_MAX_BYTES = 100
    seen: list[dict] = []

    async def app(scope, receive, send):
        while True:
            message = await receive()
            seen.append(message)
            if message["type"] == "http.disconnect":
                break
        await send({"type": "http.response.start", "status": 204, "headers": []})

    sent = await _run(app, path="/", chunks=[b"a" * 60, b"b" * 40])
    assert [m.get("body") for m in seen] == [b"a" * 60, b"b" * 40, None]
    assert seen[-1]["type"] == "http.disconnect"
    assert sent[0]["headers"] == []  # no Connection: close for a request within its cap


async def test_a_streamed_body_ends_at_its_cap_and_the_answer_closes_the_connection(settings):
    settings.REQUEST_BODY_MAX_BYTES = 100
    seen: list[dict] = []

    async def app(scope, receive, send):
        seen.append(await receive())
        seen.append(await receive())
        assert scope["quizgate.body"]["too_large"]
        await send({"type": "http.response.start", "status": 413, "headers": [(b"connection", b"keep-alive")]})

    sent = await _run(app, path="/", chunks=[b"a" * 60, b"b" * 60, b"c" * 60])
    assert [m["body"] for m in seen] == [b"a" * 60, b""] and not seen[-1]["more_body"]
    assert sent[0]["headers"] == [(b"connection", b"close")]
