"""Where a generation job runs (writing a round, or checking one: quiz.checking.rounds): `QUIZ_GENERATION_RUNNER`
names a function taking the job's id, called once the transaction that created the job commits. Two are shipped:
a Celery worker (with a broker, REDIS_URL), and this process (the embedded default), on the ASGI server's own
event loop so its broadcasts reach the in-memory channel layer there, or in a daemon thread when there is no such
loop. Eager Celery would run the job inside the request that started it. A test may name its own runner.
"""

import asyncio
import contextvars
import threading
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import close_old_connections, transaction
from django.utils.module_loading import import_string

from core.server_loop import server_loop
from quiz.checking.rounds import check_run_async
from quiz.generation.jobs import generation_run_async
from quiz.models import GenerationJob, JobKind

# -- running ----------------------------------------------------------------------------------------------


def job_run(*, job_id: int) -> None:
    """Sync entry point of any generation job (the Celery task, or a daemon thread)."""
    try:
        asyncio.run(job_run_async(job_id=job_id))
    finally:
        close_old_connections()


async def job_run_async(*, job_id: int) -> Any:
    kind = await sync_to_async(lambda: GenerationJob.objects.filter(pk=job_id).values_list("kind", flat=True).first())()
    if kind == JobKind.CHECK:
        return await check_run_async(job_id=job_id)
    return await generation_run_async(job_id=job_id)


# Strong references to in-process runs, so the event loop does not drop a running task.
_running: set[asyncio.Task[None]] = set()


def generation_enqueue(*, job_id: int) -> None:
    """Run the job off the request path, with the runner QUIZ_GENERATION_RUNNER names, once the transaction
    that created it commits."""
    start = import_string(settings.QUIZ_GENERATION_RUNNER)
    transaction.on_commit(lambda: start(job_id))


def generation_start_on_celery(job_id: int) -> None:
    """A Celery worker runs it (acknowledged late: a worker that dies mid-way has it redelivered)."""
    # By name: quiz.tasks imports this module for `job_run`, and a task's module must stay where its queued name
    # points (quiz.tasks.generate_round).
    import_string("quiz.tasks.generate_round").delay(job_id)


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
