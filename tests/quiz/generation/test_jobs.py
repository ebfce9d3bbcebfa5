"""Generation jobs: the stored progress, the saved round, a cancel, a failure, and what the host's page says."""

import logging
import threading
import time

import pytest
from django.urls import reverse
from django.utils import translation

from quiz.exceptions import QuizError
from quiz.generation.jobs import generation_cancel, generation_job_create, generation_run
from quiz.models import CheckStatus, GenerationJob, GenerationStatus, Provenance
from quiz.selectors import generation_round_questions, generation_snapshot
from tests.fakes.writer_server import Turn
from tests.quiz.generation import WRITER_MODEL, dropping
from verifier import conf as gate_conf
from verifier.backends.base import GateFailure
from verifier.breaker import breaker_for
from verifier.models import Verdict


@pytest.mark.django_db
def test_an_alias_model_id_refuses_to_start_a_job(writer, settings):
    settings.QUIZ_WRITER_MODEL = "chatgpt-4o-latest"
    with pytest.raises(QuizError, match="alias"):
        generation_job_create(owner_key="k", count=5, topic="Cats")


@pytest.mark.django_db(transaction=True)
def test_a_job_saves_a_playable_round_for_the_session(gate_on):
    gate_on.script.probabilities = {"DROPME": 0.1}
    gate_on.writer.make_question = dropping("0.2")
    job = generation_job_create(owner_key="session-key", count=5, topic="Birds")
    generation_run(job_id=job.pk)
    job.refresh_from_db()
    assert job.status == GenerationStatus.DONE, job.message
    assert (job.asked, job.written, job.checked, job.dropped, job.attempt) == (8, 8, 8, 1, 1)
    round_ = job.round
    assert round_.owner_key == "session-key" and round_.provenance == Provenance.MODEL
    assert round_.check_status == CheckStatus.CHECKED
    questions = generation_round_questions(job=job)
    assert len(questions) == 5 and {mark for _, mark in questions} == {"passed"}
    assert {question.model_id for question, _ in questions} == {WRITER_MODEL}
    # The dropped one is kept with its verdict, waiting for review; it is not in the round.
    dropped = Verdict.objects.get(outcome="dropped")
    assert dropped.question.text.startswith("DROPME") and not dropped.question.entries.exists()


@pytest.mark.django_db(transaction=True)
def test_a_drop_everything_job_saves_a_round_rejected_by_the_checker_queued_for_review(gate_on):
    gate_on.script.probabilities = {"DROPME": 0.1}
    gate_on.writer.make_question = dropping("all")
    job = generation_job_create(owner_key="k", count=3, topic="Birds")
    generation_run(job_id=job.pk)
    job.refresh_from_db()
    # The checker answered every one and said no: not "could not be verified".
    assert job.status == GenerationStatus.DONE and job.round.check_status == CheckStatus.REJECTED
    assert {mark for _, mark in generation_round_questions(job=job)} == {"rejected"}
    assert job.round.check_label == "checked: all 3 questions were rejected by the checker"
    assert "rejected all 15 questions" in job.message and "queued for review" in job.message
    assert Verdict.objects.filter(outcome="dropped").count() == 15


@pytest.mark.django_db(transaction=True)
def test_a_failed_job_plays_nothing(writer, settings):
    settings.QUIZ_WRITER_TIMEOUT = 1.0
    writer.writer.default = Turn(status=500)
    job = generation_job_create(owner_key="k", count=5, topic="Birds")
    generation_run(job_id=job.pk)
    job.refresh_from_db()
    assert job.status == GenerationStatus.FAILED and job.round is None
    assert "kept failing" in job.message


@pytest.mark.django_db(transaction=True)
def test_a_cancelled_job_stops_between_items_and_keeps_nothing(writer):
    writer.writer.token_delay = 0.02
    writer.writer.chars_per_token = 8
    job = generation_job_create(owner_key="k", count=10, topic="Birds")
    runner = threading.Thread(target=generation_run, kwargs={"job_id": job.pk})
    runner.start()
    deadline = time.monotonic() + 5
    while GenerationJob.objects.get(pk=job.pk).written < 2 and time.monotonic() < deadline:
        time.sleep(0.02)
    generation_cancel(job_id=job.pk, owner_key="k")
    runner.join(10)
    job.refresh_from_db()
    assert job.status == GenerationStatus.CANCELLED and job.round is None
    assert job.written < 10


@pytest.mark.django_db(transaction=True)
def test_the_hosts_page_says_the_checker_is_unavailable(gate_on, client, settings):
    # Paused after connections refused in a row (a checker paused after timeouts is too slow: test_checker_said.py).
    breaker = breaker_for(backend="systemone", model_id="jev-1.13.0")
    for _ in range(breaker.threshold):
        breaker.record(breaker.allow(), GateFailure("connection_refused", "no connection"))
    session = client.session
    session["owner_key"] = "host-key"
    session.save()
    job = generation_job_create(owner_key="host-key", count=3, topic="Birds")
    generation_run(job_id=job.pk)
    job.refresh_from_db()
    assert job.status == GenerationStatus.DONE and job.round.check_status == CheckStatus.UNVERIFIED
    assert gate_on.requests_to("/v1/systemone") == []
    assert generation_snapshot(job)["message"] == "The checker is unavailable: this round is unchecked."
    page = client.get(reverse("quiz:generate_detail", args=[job.pk])).content.decode()
    assert "The checker is unavailable: this round is unchecked." in page


@pytest.mark.django_db(transaction=True)
def test_each_question_records_the_model_the_server_says_wrote_it(gate_on, caplog, monkeypatch):
    # "Once per process": start from a process that has not warned yet.
    gate_conf.model_mismatch_warnings_forget()

    gate_on.writer.served_model = "qwen2.5-0.5b-instruct"
    gate_on.script.served_model = "jev-1.14.0"
    with caplog.at_level(logging.WARNING):
        for _ in range(2):
            job = generation_job_create(owner_key="k", count=3, topic="Birds")
            generation_run(job_id=job.pk)
    job.refresh_from_db()
    questions = [question for question, _ in generation_round_questions(job=job)]
    assert {(q.model_id, q.served_model_id) for q in questions} == {(WRITER_MODEL, "qwen2.5-0.5b-instruct")}
    verdict = Verdict.objects.filter(question=questions[0]).get()
    assert (verdict.model_id, verdict.requested_model_id) == ("jev-1.14.0", "jev-1.13.0")
    # Logged once per process, however many rounds see it.
    writer_warnings = [r for r in caplog.records if "qwen2.5-0.5b-instruct" in r.getMessage()]
    gate_warnings = [r for r in caplog.records if "served 'jev-1.14.0'" in r.getMessage()]
    assert len(writer_warnings) == 1 and len(gate_warnings) == 1
    assert {r.levelno for r in writer_warnings + gate_warnings} == {logging.WARNING}


@pytest.mark.django_db
def test_writing_needs_a_writer_model_id(writer, settings, client):
    settings.QUIZ_WRITER_MODEL = ""
    with pytest.raises(QuizError, match="QUIZ_WRITER_MODEL"):
        generation_job_create(owner_key="k", count=3, topic="Birds")
    page = client.get(reverse("quiz:generate_new")).content.decode()
    assert "No writer model is set" in page and "QUIZ_WRITER_MODEL" in page
    assert "<form" not in page.split('id="no-model"', 1)[1]


@pytest.mark.django_db(transaction=True)
def test_the_hosts_page_counts_the_repeats_and_says_why_the_round_is_short(writer, settings, client):
    settings.QUIZ_MAX_ATTEMPTS = 1
    planet = {"options": ["Mercury", "Venus", "Mars", "Earth"], "correct_index": 0, "explanation": ""}
    writer.writer.turns = [
        Turn(
            questions=[
                {**planet, "question": "Who is the first planet from the Sun?"},
                {**planet, "question": "What is the first planet from the sun?"},
                {**planet, "question": "Which planet comes first from the Sun, Mercury or Venus?"},
            ]
        )
    ]
    session = client.session
    session["owner_key"] = "host-key"
    session.save()
    job = generation_job_create(owner_key="host-key", count=3, topic="Planets")
    generation_run(job_id=job.pk)
    job.refresh_from_db()
    assert (job.written, job.invalid, job.duplicates) == (3, 0, 1)
    assert generation_snapshot(job)["duplicates"] == 1
    message = (
        "1 question repeated an earlier one and was dropped. This round has 2 usable questions of the 3 you asked for."
    )
    assert job.message == message
    page = client.get(reverse("quiz:generate_detail", args=[job.pk])).content.decode()
    assert 'data-field="duplicates">1<' in page and message in page


def _host_page_job(client, *, count: int, topic: str = "Birds"):
    session = client.session
    session["owner_key"] = "host-key"
    session.save()
    job = generation_job_create(owner_key="host-key", count=count, topic=topic)
    generation_run(job_id=job.pk)
    job.refresh_from_db()
    return job


@pytest.mark.django_db(transaction=True)
def test_a_reply_whose_items_are_none_of_them_questions_tells_the_host_how_many_and_why(writer, settings, client):
    # 30 items the schema calls for as objects, sent as strings: nothing to play, and the host is told why.
    settings.QUIZ_MAX_ATTEMPTS = 1
    writer.writer.default = Turn(questions=[f"Question {n}: which bird hovers?" for n in range(1, 31)])
    job = _host_page_job(client, count=10)
    assert job.status == GenerationStatus.FAILED and job.round is None
    assert job.invalid == 30
    message = "The model's reply had 30 questions, none usable: a question must be an object. Try again."
    assert job.message == message
    assert generation_snapshot(job)["message"] == message
    status = client.get(reverse("quiz:generate_status", args=[job.pk])).json()
    assert status["job"]["message"] == message
    page = client.get(reverse("quiz:generate_detail", args=[job.pk])).content.decode()
    assert message.replace("'", "&#x27;") in page and 'data-field="invalid">30<' in page


@pytest.mark.django_db(transaction=True)
def test_replies_whose_items_all_break_the_schema_name_the_first_reasons(writer, settings, client):
    one_option = [{"question": f"Q{n}?", "options": ["Only"], "correct_index": 0} for n in range(20)]
    no_options = [{"question": f"R{n}?", "choices": ["A", "B"], "answer": 1} for n in range(10)]
    writer.writer.default = Turn(questions=one_option + no_options)
    job = _host_page_job(client, count=10)
    assert job.status == GenerationStatus.FAILED and job.invalid == 90 and job.attempt == 3
    message = (
        "The model's 3 replies had 90 questions, none usable: a question needs 2 to 6 options, not 1; "
        "options must be a list. Try again."
    )
    assert job.message == message
    page = client.get(reverse("quiz:generate_detail", args=[job.pk])).content.decode()
    assert message.replace("'", "&#x27;") in page


@pytest.mark.django_db(transaction=True)
def test_the_none_usable_message_is_translated(writer, settings, client):
    settings.QUIZ_MAX_ATTEMPTS = 1
    writer.writer.default = Turn(questions=["not a question"] * 30)
    with translation.override("de"):
        job = _host_page_job(client, count=10)
    assert job.message.startswith("Die Antwort des Modells hatte 30 Fragen, keine davon brauchbar:")
