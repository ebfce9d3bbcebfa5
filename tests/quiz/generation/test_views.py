"""The host's pages for model-written rounds."""

import re
from unittest import mock

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from django.utils import translation
from django.utils.html import escape

from quiz.generation.jobs import generation_run
from quiz.kinds import kind_choices
from quiz.models import GenerationJob, GenerationStatus
from tests.fakes.writer_server import *  # noqa: F403
from tests.fakes.writer_server import WriterServer

pytestmark = pytest.mark.django_db


@pytest.fixture
def configured(settings):
    settings.OPENAI_API_KEY = "test-key"
    settings.OPENAI_BASE_URL = "http://127.0.0.1:9/v1"
    settings.QUIZ_WRITER_MODEL = "writer-2025-01-01"
    settings.VERIFIER_BACKEND = "off"


def test_without_a_model_the_page_says_what_to_set_and_offers_the_alternatives(client, settings):
    settings.OPENAI_API_KEY = ""
    settings.OPENAI_BASE_URL = ""
    page = client.get(reverse("quiz:generate_new")).content.decode()
    assert "OPENAI_API_KEY" in page and "OPENAI_BASE_URL" in page
    assert 'href="/"' in page and 'href="/rounds/"' in page
    assert "<form" not in page.split('id="no-model"', 1)[1]


def test_the_no_model_page_suggests_a_vllm_port_that_is_not_quizgates_and_names_the_checker_settings(client, settings):
    settings.OPENAI_API_KEY = ""
    settings.OPENAI_BASE_URL = ""
    page = client.get(reverse("quiz:generate_new")).content.decode()
    assert "localhost:8000/v1" not in page
    assert "http://localhost:8001/v1" in page and "--port 8001" in page
    for name in ("VERIFIER_BACKEND", "VERIFIER_MODEL", "VERIFIER_BASE_URL", "VERIFIER_API_KEY"):
        assert name in page


def test_posting_the_form_creates_a_job_and_queues_it_after_commit(
    client, configured, started_jobs, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        response = client.post(
            reverse("quiz:generate_new"), {"topic": "Birds", "count": 12, "difficulty": "hard", "language": "de"}
        )
        assert started_jobs == []  # not before the job's row is committed
    job = GenerationJob.objects.get()
    assert response.status_code == 302 and response["Location"] == reverse("quiz:generate_detail", args=[job.pk])
    assert (job.topic, job.count, job.difficulty, job.language, job.status) == ("Birds", 12, "hard", "de", "queued")
    assert job.owner_key == client.session["owner_key"]
    assert len(callbacks) == 1
    assert started_jobs == [job.pk]


def test_with_a_broker_the_task_is_fired_with_delay_on_commit(
    client, configured, settings, django_capture_on_commit_callbacks
):
    settings.QUIZ_GENERATION_RUNNER = "quiz.generation.runner.generation_start_on_celery"
    # The patch outlives the captured callbacks, which run as their block ends.
    with mock.patch("quiz.tasks.generate_round.delay") as delay, django_capture_on_commit_callbacks(execute=True):
        client.post(
            reverse("quiz:generate_new"), {"topic": "Birds", "count": 5, "difficulty": "easy", "language": "en"}
        )
        delay.assert_not_called()  # not before the job's row is committed
    delay.assert_called_once_with(GenerationJob.objects.get().pk)


@pytest.mark.parametrize(
    ("data", "error"),
    [
        ({"topic": "", "count": 10}, "Give a topic"),
        ({"topic": "x" * 201, "count": 10}, "at most 200 characters"),
        ({"topic": "Birds", "count": 31}, "less than or equal to 30"),
        ({"topic": "Birds", "count": 2}, "greater than or equal to 3"),
        ({"topic": "", "count": 10, "source_text": "x" * 50_001}, "longer than 50,000"),
    ],
)
def test_the_form_refuses_what_it_cannot_write(client, configured, data, error):
    page = client.post(reverse("quiz:generate_new"), {"difficulty": "medium", "language": "en", **data})
    assert page.status_code == 200 and error in page.content.decode()
    assert not GenerationJob.objects.exists()


def test_an_uploaded_markdown_file_becomes_the_source(client, configured, started_jobs):
    upload = SimpleUploadedFile("notes.md", b"# Kestrels\n\nThe kestrel hovers.")
    client.post(
        reverse("quiz:generate_new"),
        {"topic": "", "count": 5, "difficulty": "medium", "language": "en", "source_file": upload},
    )
    job = GenerationJob.objects.get()
    assert job.source_text.endswith("The kestrel hovers.") and job.source_name == "notes.md"


def test_an_unsupported_upload_is_refused(client, configured):
    upload = SimpleUploadedFile("notes.docx", b"PK...")
    page = client.post(
        reverse("quiz:generate_new"),
        {"topic": "Birds", "count": 5, "difficulty": "medium", "language": "en", "source_file": upload},
    )
    assert "Upload a .txt, .md or .pdf file." in page.content.decode()


def test_another_sessions_job_is_not_found(client, configured):
    job = GenerationJob.objects.create(owner_key="someone-else", count=5, topic="Birds")
    assert client.get(reverse("quiz:generate_detail", args=[job.pk])).status_code == 404
    assert client.post(reverse("quiz:generate_cancel", args=[job.pk])).status_code == 404


def _own_session(client) -> str:
    session = client.session
    session["owner_key"] = "my-key"
    session.save()
    return "my-key"


def test_the_host_can_cancel(client, configured):
    job = GenerationJob.objects.create(owner_key=_own_session(client), count=5, topic="Birds", status="running")
    client.post(reverse("quiz:generate_cancel", args=[job.pk]))
    job.refresh_from_db()
    assert job.status == GenerationStatus.CANCELLED
    page = client.get(reverse("quiz:generate_detail", args=[job.pk])).content.decode()
    assert "Cancelled" in page and "Try again" in page


def test_retry_starts_a_fresh_copy_of_the_job_after_commit(
    client, configured, started_jobs, django_capture_on_commit_callbacks
):
    failed = GenerationJob.objects.create(
        owner_key=_own_session(client), count=7, topic="Birds", difficulty="hard", status="failed"
    )
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        response = client.post(reverse("quiz:generate_retry", args=[failed.pk]))
        assert started_jobs == []
    fresh = GenerationJob.objects.exclude(pk=failed.pk).get()
    assert response.status_code == 302 and response["Location"] == reverse("quiz:generate_detail", args=[fresh.pk])
    assert (fresh.count, fresh.topic, fresh.difficulty, fresh.status) == (7, "Birds", "hard", "queued")
    assert len(callbacks) == 1 and started_jobs == [fresh.pk]


def test_a_running_job_page_shows_stored_progress_and_a_cancel_button(client, configured):
    job = GenerationJob.objects.create(
        owner_key=_own_session(client), count=10, topic="Birds", status="running", asked=15, written=7, gated=True
    )
    page = client.get(reverse("quiz:generate_detail", args=[job.pk])).content.decode()
    assert 'data-field="written">7<' in page and 'data-field="asked">15<' in page
    assert ">Cancel<" in page and "js/generate.js" in page
    status = client.get(reverse("quiz:generate_status", args=[job.pk])).json()
    assert status["job"]["written"] == 7


@pytest.mark.django_db(transaction=True)
def test_the_finished_page_shows_each_question_with_its_check_and_a_play_link(
    client, settings, writer_server: WriterServer, started_jobs
):
    settings.OPENAI_BASE_URL = f"{writer_server.url}/v1"
    settings.OPENAI_API_KEY = "test-key"
    settings.QUIZ_WRITER_MODEL = "writer-2025-01-01"
    settings.VERIFIER_BACKEND = "off"
    client.post(reverse("quiz:generate_new"), {"topic": "Birds", "count": 3, "difficulty": "easy", "language": "en"})
    job = GenerationJob.objects.get()
    assert started_jobs == [job.pk]
    generation_run(job_id=job.pk)
    job.refresh_from_db()
    page = client.get(reverse("quiz:generate_detail", args=[job.pk])).content.decode()
    assert f'href="/?round={job.round_id}"' in page and "Play this round" in page
    # The badge in the host's words, not the mark's code.
    assert page.count('class="check-badge" data-status="unchecked">Not checked<') == 3
    # The home page offers it to this session.
    assert f"round:{job.round_id}" in client.get(f"/?round={job.round_id}").content.decode()


# --- the kinds of question ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("language", "legend", "single"),
    [
        ("en", "Question kinds", "One right option"),
        ("de", "Fragenarten", "Eine richtige Antwort"),
        ("es", "Tipos de pregunta", "Una opción correcta"),
    ],
)
def test_the_form_offers_every_kind_as_a_checkbox_in_the_pages_language(client, configured, language, legend, single):
    page = client.get(reverse("quiz:generate_new"), HTTP_ACCEPT_LANGUAGE=language).content.decode()
    group = page.split(f"<legend>{legend}</legend>", 1)[1].split("</fieldset>", 1)[0]
    with translation.override(language):
        choices = kind_choices()
    assert choices[0] == ("single", single)
    boxes = re.findall(
        r'<input type="checkbox" name="kinds" value="(\w+)" id="id_kinds_\d+"( checked)?>\s*([^<]+)<', group
    )
    # Each kind, labelled in the page's language; only the default is ticked.
    assert [(name, label.strip()) for name, _checked, label in boxes] == [(n, escape(label)) for n, label in choices]
    assert [name for name, checked, _label in boxes if checked] == ["single"]
    assert '<input type="hidden" name="kinds_shown" value="1"' in page


def _post(client, **data):
    return client.post(reverse("quiz:generate_new"), {"topic": "Birds", "count": 5, "difficulty": "easy", **data})


def test_the_ticked_kinds_are_stored_on_the_job_in_the_registrys_order(client, configured, started_jobs):
    response = _post(client, language="en", kinds=["number", "typed", "single"], kinds_shown="1")
    job = GenerationJob.objects.get()
    assert response.status_code == 302 and job.kinds == ["single", "typed", "number"]


@pytest.mark.parametrize(
    ("language", "error"),
    [
        ("en", "Tick at least one kind of question."),
        ("de", "Kreuze mindestens eine Fragenart an."),
        ("es", "Marca al menos un tipo de pregunta."),
    ],
)
def test_no_kind_ticked_is_refused_in_the_pages_language(client, configured, language, error):
    page = client.post(
        reverse("quiz:generate_new"),
        {"topic": "Birds", "count": 5, "difficulty": "easy", "language": "en", "kinds_shown": "1"},
        HTTP_ACCEPT_LANGUAGE=language,
    )
    assert page.status_code == 200 and error in page.content.decode()
    assert not GenerationJob.objects.exists()


def test_an_unknown_kind_is_refused(client, configured):
    page = _post(client, language="en", kinds=["single", "essay"], kinds_shown="1")
    assert "essay is not one of the available choices" in page.content.decode()
    assert not GenerationJob.objects.exists()


def test_a_post_without_the_checkboxes_writes_the_default_kind(client, configured, started_jobs):
    # A script, or a page from before kinds: it sends neither the boxes nor the field that comes with them.
    _post(client, language="en")
    assert GenerationJob.objects.get().kinds == ["single"]
