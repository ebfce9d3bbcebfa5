"""Where a generation job runs (writing a round, or checking one: quiz.checking): `QUIZ_GENERATION_RUNNER`
names a function taking the job's id, called once the transaction that created the job commits. Two are shipped:
a Celery worker (with a broker, REDIS_URL), and this process (the embedded default), on the ASGI server's own
event loop so its broadcasts reach the in-memory channel layer there, or in a daemon thread when there is no such
loop. Eager Celery would run the job inside the request that started it. A test may name its own runner.
"""

import asyncio
import contextvars
import threading

from django.conf import settings
from django.db import transaction
from django.utils.module_loading import import_string

from core.server_loop import server_loop
from quiz.checking import job_run, job_run_async
from quiz.tasks import generate_round

# Strong references to in-process runs, so the event loop does not drop a running task.
_running: set[asyncio.Task[None]] = set()


def generation_enqueue(*, job_id: int) -> None:
    """Run the job off the request path, with the runner QUIZ_GENERATION_RUNNER names, once the transaction
    that created it commits."""
    start = import_string(settings.QUIZ_GENERATION_RUNNER)
    transaction.on_commit(lambda: start(job_id))


def generation_start_on_celery(job_id: int) -> None:
    """A Celery worker runs it (acknowledged late: a worker that dies mid-way has it redelivered)."""
    generate_round.delay(job_id)


def generation_start_in_process(job_id: int) -> None:
    """This process runs it: on the ASGI server's event loop when called from a sync view under it, else in a
    daemon thread."""
    loop = server_loop()
    if loop is not None:
        # A fresh context: the request's (its thread-sensitive executor, which quits with the request) must not leak.
        loop.call_soon_threadsafe(_spawn, job_id, context=contextvars.Context())
        return
    threading.Thread(target=job_run, kwargs={"job_id": job_id}, name=f"generation-{job_id}", daemon=True).start()


def _spawn(job_id: int) -> None:
    task = asyncio.get_running_loop().create_task(job_run_async(job_id=job_id), context=contextvars.Context())
    _running.add(task)
    task.add_done_callback(_running.discard)
