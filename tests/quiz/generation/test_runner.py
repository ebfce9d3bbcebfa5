"""Where a generation job runs: a Celery worker with a broker, this process without one (the embedded default),
on the ASGI server's event loop when it is started from under it, else in a thread of its own."""

import asyncio
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from asgiref.sync import sync_to_async

from quiz.generation.jobs import generation_job_create
from quiz.generation.runner import generation_start_in_process
from quiz.models import GenerationJob, GenerationStatus, RoundQuestion
from tests.fakes.writer_server import WriterServer

ROOT = Path(__file__).resolve().parents[3]


def runner_for(redis_url: str) -> tuple[str, str]:
    """QUIZ_GENERATION_RUNNER and CELERY_TASK_ALWAYS_EAGER as `config.settings` reads them from this environment."""
    env = {**os.environ, "DJANGO_DEBUG": "1", "DJANGO_READ_DOT_ENV_FILE": "0", "REDIS_URL": redis_url}
    env.pop("QUIZ_GENERATION_RUNNER", None)
    code = "from config import settings; print(settings.QUIZ_GENERATION_RUNNER, settings.CELERY_TASK_ALWAYS_EAGER)"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    runner, eager = out.stdout.split()
    return runner, eager


def test_the_embedded_default_runs_jobs_in_process_and_a_broker_hands_them_to_celery():
    assert runner_for("") == ("quiz.generation.runner.generation_start_in_process", "True")
    assert runner_for("redis://127.0.0.1:6379/0") == ("quiz.generation.runner.generation_start_on_celery", "False")


def _wait_finished(job_id: int, timeout: float = 20) -> GenerationJob:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job = GenerationJob.objects.get(pk=job_id)
        if job.finished:
            return job
        time.sleep(0.05)
    raise AssertionError("the job did not finish")


def _generation_threads() -> list[str]:
    return [thread.name for thread in threading.enumerate() if thread.name.startswith("generation-")]


@pytest.mark.django_db(transaction=True)
def test_without_a_server_loop_the_job_is_written_in_a_thread_of_its_own(writer: WriterServer):
    job = generation_job_create(owner_key="host", count=3, topic="Birds")
    generation_start_in_process(job.pk)
    assert f"generation-{job.pk}" in _generation_threads()  # started, not run inside the caller
    done = _wait_finished(job.pk)
    assert done.status == GenerationStatus.DONE, done.message
    assert done.round.entries.count() == 3


@pytest.mark.django_db(transaction=True)
async def test_from_under_the_asgi_server_the_job_runs_on_its_event_loop(writer: WriterServer):
    job = await sync_to_async(generation_job_create)(owner_key="host", count=3, topic="Birds")
    # As a sync view under the server calls it: in a thread that sync_to_async runs for this event loop.
    await sync_to_async(generation_start_in_process)(job.pk)
    assert _generation_threads() == []
    for _ in range(400):  # 20 s
        done = await GenerationJob.objects.aget(pk=job.pk)
        if done.finished:
            break
        await asyncio.sleep(0.05)
    assert done.status == GenerationStatus.DONE, done.message
    assert await RoundQuestion.objects.filter(round_id=done.round_id).acount() == 3
