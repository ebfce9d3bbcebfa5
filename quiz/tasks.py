"""The generation task, and each Celery worker's watch for jobs whose worker died.

A job survives its worker by a stale-job takeover, not by the broker: a worker killed outright (SIGKILL, out of
memory, its host gone) acknowledges nothing, and Redis would hand its late-acknowledged task to another worker
only after CELERY_VISIBILITY_TIMEOUT (300 s). So every worker, from the moment it is ready, looks every third of
QUIZ_JOB_STALE_SECONDS for running jobs whose heartbeat stopped, puts each back in the queue (once, whichever
worker sees it first: quiz.generation.jobs.jobs_requeue_stale) and sends its task again; a live worker takes it and
writes the round from the start. Late acknowledgement stays, for a task lost before its job started (still QUEUED).
"""

import logging
import threading

from celery import shared_task
from celery.signals import worker_ready, worker_shutdown
from django.db import close_old_connections

from quiz.generation.jobs import jobs_requeue_stale
from quiz.generation.runner import job_run
from quiz.jobs import conf

logger = logging.getLogger(__name__)


@shared_task(name="quiz.generate_round")
def generate_round(job_id: int) -> None:
    job_run(job_id=job_id)


def take_over_stale_jobs() -> list[int]:
    """One look: the jobs put back in the queue, each sent to a worker again."""
    try:
        requeued = jobs_requeue_stale()
    finally:
        close_old_connections()
    for job_id in requeued:
        generate_round.delay(job_id)
    return requeued


_stop = threading.Event()


def _watch() -> None:
    while not _stop.wait(conf.stale_after_seconds() / 3):
        try:
            take_over_stale_jobs()
        except Exception:
            logger.exception("could not look for generation jobs whose worker went away")


@worker_ready.connect
def _start_watch(**kwargs) -> None:
    _stop.clear()
    threading.Thread(target=_watch, name="generation-takeover", daemon=True).start()


@worker_shutdown.connect
def _stop_watch(**kwargs) -> None:
    _stop.set()
