"""A Celery worker killed in the middle of writing a round: the job is taken over by another worker (the task
was acknowledged late, so the broker redelivers it), or, with no worker to take it, reported failed."""

import time
from collections import Counter
from datetime import timedelta

import pytest
from django.conf import settings
from django.utils import timezone
from kombu import Connection

from quiz.generation.jobs import generation_job_create, generation_job_get, generation_snapshot_for
from quiz.jobs.checks import check_job_takeover
from quiz.models import GenerationJob, GenerationStatus, Round
from quiz.tasks import generate_round
from tests.fakes.writer_server import *  # noqa: F403
from tests.fakes.writer_server import WriterServer
from tests.support.servers import start_celery_worker, start_redis
from verifier.models import Verdict

pytestmark = pytest.mark.django_db(transaction=True)


def _wait(predicate, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.mark.skipif(not settings.REDIS_URL, reason="a Celery worker needs the Redis broker (REDIS_URL)")
def test_a_worker_killed_mid_generation_is_replaced_and_the_job_finishes(
    writer_server: WriterServer, tmp_path, settings
):
    settings.OPENAI_BASE_URL = f"{writer_server.url}/v1"  # the job is created here, run by the workers
    settings.QUIZ_WRITER_MODEL = "writer-2025-01-01"  # no default model id
    writer_server.writer.token_delay = 0.03  # a few seconds of writing: time to kill the worker mid-way
    broker = start_redis()  # the test's own broker, so no other run's worker takes the task
    env = {
        "REDIS_URL": f"redis://127.0.0.1:{broker.port}/0",
        "OPENAI_BASE_URL": f"{writer_server.url}/v1",
        "OPENAI_API_KEY": "test-key",
        "QUIZ_WRITER_MODEL": "writer-2025-01-01",
        "VERIFIER_BACKEND": "off",
        "QUIZ_JOB_STALE_SECONDS": "2",
        "CELERY_VISIBILITY_TIMEOUT": "3",
        "CELERY_UNACKED_RESTORE_INTERVAL": "1",
    }
    first = start_celery_worker("worker-1", log_path=tmp_path / "worker-1.log", env=env)
    second = None
    try:
        job = generation_job_create(owner_key="host", count=6, topic="Birds")
        with Connection(env["REDIS_URL"]) as connection:
            generate_round.apply_async(args=[job.pk], connection=connection)
        _wait(lambda: GenerationJob.objects.get(pk=job.pk).written >= 1, 30, "the first question to be written")
        first.kill()
        killed = GenerationJob.objects.get(pk=job.pk)
        assert killed.status == GenerationStatus.RUNNING and killed.written < 6

        second = start_celery_worker("worker-2", log_path=tmp_path / "worker-2.log", env=env)
        done = _wait(
            lambda: (j := GenerationJob.objects.get(pk=job.pk)).status not in ("queued", "running") and j, 60, "the job"
        )
        assert done.status == GenerationStatus.DONE, (done.status, done.message)
        assert done.round.entries.count() == 6
        assert len(writer_server.asked()) >= 2  # the second worker wrote the round again
    finally:
        for worker in (first, second):
            if worker is not None:
                worker.stop()
        broker.stop()


def _receiver(workers, tmp_path) -> int:
    """Which worker took the task (its log says so)."""
    for n, worker in enumerate(workers):
        if "Task quiz.generate_round[" in (tmp_path / f"{worker.name}.log").read_text(errors="replace"):
            return n
    return -1


@pytest.mark.skipif(not settings.REDIS_URL, reason="Celery workers need the Redis broker (REDIS_URL)")
def test_a_worker_killed_mid_generation_has_its_job_taken_over_by_the_other_worker_one_round_gated_once(
    writer_server: WriterServer, tmp_path, settings
):
    """Two workers up; the one writing the round is killed outright. The other takes the job over (a stale-job
    takeover: the broker would hand the unacknowledged task out again only after the 300 s visibility timeout)
    and writes it: one round, each of its questions with one verdict of the gate. Before, nothing took the job
    over, and the host was told it had failed."""
    settings.OPENAI_BASE_URL = f"{writer_server.url}/v1"
    settings.QUIZ_WRITER_MODEL = "writer-2025-01-01"
    writer_server.writer.token_delay = 0.03
    broker = start_redis()
    env = {
        "REDIS_URL": f"redis://127.0.0.1:{broker.port}/0",
        "OPENAI_BASE_URL": f"{writer_server.url}/v1",
        "OPENAI_API_KEY": "test-key",
        "QUIZ_WRITER_MODEL": "writer-2025-01-01",
        "VERIFIER_BACKEND": "systemone",
        "VERIFIER_BASE_URL": writer_server.url,
        "VERIFIER_API_KEY": "test-key",
        "VERIFIER_MODEL": "jev-1.13.0",
        "VERIFIER_TIMEOUT": "2",
        "QUIZ_JOB_STALE_SECONDS": "2",
    }
    workers = [start_celery_worker(f"worker-{n}", log_path=tmp_path / f"worker-{n}.log", env=env) for n in (1, 2)]
    try:
        job = generation_job_create(owner_key="host", count=6, topic="Birds")
        with Connection(env["REDIS_URL"]) as connection:
            generate_round.apply_async(args=[job.pk], connection=connection)
        _wait(lambda: GenerationJob.objects.get(pk=job.pk).written >= 1, 30, "the first question to be written")
        doomed = _wait(lambda: _receiver(workers, tmp_path) + 1, 10, "the worker that took the task") - 1
        workers[doomed].kill()
        killed = time.monotonic()
        assert GenerationJob.objects.get(pk=job.pk).written < 6
        done = _wait(
            lambda: (j := GenerationJob.objects.get(pk=job.pk)).status not in ("queued", "running") and j, 60, "the job"
        )
        took = time.monotonic() - killed
        assert done.status == GenerationStatus.DONE, (done.status, done.message)
        assert len(writer_server.asked()) >= 2  # the other worker wrote it again
        survivor_log = (tmp_path / f"{workers[1 - doomed].name}.log").read_text(errors="replace")
        assert "queued again for another worker" in survivor_log
        assert Round.objects.filter(owner_key="host").count() == 1
        questions = [entry.question_id for entry in done.round.entries.all()]
        assert len(questions) == 6
        verdicts = Counter(Verdict.objects.filter(question_id__in=questions).values_list("question_id", flat=True))
        assert verdicts == dict.fromkeys(questions, 1), verdicts
        print(f"the job finished {took:.1f} s after its worker was killed (QUIZ_JOB_STALE_SECONDS=2)")
    finally:
        for worker in workers:
            worker.stop()
        broker.stop()


def test_a_visibility_timeout_not_longer_than_the_stale_time_is_refused_at_start_up(settings, tmp_path):
    settings.QUIZ_GENERATION_RUNNER = "quiz.generation.runner.generation_start_on_celery"
    settings.QUIZ_JOB_STALE_SECONDS = 30
    settings.CELERY_BROKER_TRANSPORT_OPTIONS = {**settings.CELERY_BROKER_TRANSPORT_OPTIONS, "visibility_timeout": 20}
    errors = check_job_takeover()
    assert [e.id for e in errors] == ["quiz.E004"]
    assert "CELERY_VISIBILITY_TIMEOUT=20 s is not longer than QUIZ_JOB_STALE_SECONDS=30 s" in errors[0].msg
    settings.CELERY_BROKER_TRANSPORT_OPTIONS = {**settings.CELERY_BROKER_TRANSPORT_OPTIONS, "visibility_timeout": 300}
    assert check_job_takeover() == []
    # The worker itself does not start on such settings, and says why.
    worker = start_celery_worker(
        "refused",
        log_path=tmp_path / "refused.log",
        env={"REDIS_URL": "redis://127.0.0.1:9/0", "CELERY_VISIBILITY_TIMEOUT": "20", "QUIZ_JOB_STALE_SECONDS": "30"},
    )
    assert worker.popen.wait(60) != 0
    assert "quiz.E004: CELERY_VISIBILITY_TIMEOUT=20 s" in (tmp_path / "refused.log").read_text(errors="replace")


@pytest.mark.parametrize(
    ("runner", "reported_after"),
    [
        ("quiz.generation.runner.generation_start_in_process", 31),
        ("quiz.generation.runner.generation_start_on_celery", 61),
    ],
    ids=["in-process", "celery"],
)
def test_a_job_whose_worker_went_away_is_reported_not_left_spinning(settings, runner, reported_after):
    """In-process nothing takes a job over: it is reported once stale. With Celery workers, which take a stale
    job over (quiz/tasks.py), only once it has been stale as long again with no worker taking it."""
    settings.QUIZ_GENERATION_RUNNER = runner
    settings.QUIZ_JOB_STALE_SECONDS = 30
    settings.OPENAI_BASE_URL = "http://127.0.0.1:9/v1"
    settings.QUIZ_WRITER_MODEL = "writer-2025-01-01"  # no default model id
    job = generation_job_create(owner_key="host", count=5, topic="Birds")
    GenerationJob.objects.filter(pk=job.pk).update(status=GenerationStatus.RUNNING, written=2)
    assert generation_snapshot_for(job_id=job.pk)["status"] == "running"  # alive: a beat is recent
    if reported_after > 31:
        GenerationJob.objects.filter(pk=job.pk).update(updated_at=timezone.now() - timedelta(seconds=31))
        assert generation_snapshot_for(job_id=job.pk)["status"] == "running"  # a worker may take it over yet
    GenerationJob.objects.filter(pk=job.pk).update(updated_at=timezone.now() - timedelta(seconds=reported_after))
    snapshot = generation_snapshot_for(job_id=job.pk)
    assert snapshot["status"] == "failed" and snapshot["finished"]
    assert "stopped unexpectedly" in snapshot["message"] and "Retry" in snapshot["message"]
    assert generation_job_get(job_id=job.pk, owner_key="host").status == GenerationStatus.FAILED
