"""A Celery worker killed in the middle of writing a round: the job is taken over by another worker (the task
was acknowledged late, so the broker redelivers it), or, with no worker to take it, reported failed."""

import time
from datetime import timedelta

import pytest
from django.conf import settings
from django.utils import timezone
from kombu import Connection

from quiz.jobs import generation_job_create, generation_job_get, generation_snapshot_for
from quiz.models import GenerationJob, GenerationStatus
from quiz.tasks import generate_round
from tests.fakes.writer_server import *  # noqa: F403
from tests.fakes.writer_server import WriterServer
from tests.support.servers import start_celery_worker, start_redis

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


def test_a_job_whose_worker_went_away_is_reported_not_left_spinning(settings):
    settings.QUIZ_JOB_STALE_SECONDS = 30
    settings.OPENAI_BASE_URL = "http://127.0.0.1:9/v1"
    settings.QUIZ_WRITER_MODEL = "writer-2025-01-01"  # no default model id
    job = generation_job_create(owner_key="host", count=5, topic="Birds")
    GenerationJob.objects.filter(pk=job.pk).update(status=GenerationStatus.RUNNING, written=2)
    assert generation_snapshot_for(job_id=job.pk)["status"] == "running"  # alive: a beat is recent
    GenerationJob.objects.filter(pk=job.pk).update(updated_at=timezone.now() - timedelta(seconds=31))
    snapshot = generation_snapshot_for(job_id=job.pk)
    assert snapshot["status"] == "failed" and snapshot["finished"]
    assert "stopped unexpectedly" in snapshot["message"] and "Retry" in snapshot["message"]
    assert generation_job_get(job_id=job.pk, owner_key="host").status == GenerationStatus.FAILED
