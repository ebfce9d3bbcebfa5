"""Generation jobs' life: create, start, progress, finish, fail, cancel, retry, and a dead worker's job
reaped. Progress is written to the database on every step (so a reloaded page shows it) and broadcast to
`generation.<id>` after it commits. Where a job runs is `quiz.generation.runner`.

The async run touches the database only through small sync functions wrapped in `sync_to_async`;
a transaction never spans an `await`.
"""

import asyncio
import logging
import time
from collections.abc import Sequence
from dataclasses import replace
from datetime import timedelta
from typing import Any

from asgiref.sync import sync_to_async
from django.db import close_old_connections, transaction
from django.db.models import F
from django.utils import timezone

from core import metrics
from quiz.exceptions import GenerationNotFound, QuizError
from quiz.generation import drop_rates, publishing, round_cost
from quiz.generation.limits import generation_admission
from quiz.generation.prompts import DIFFICULTIES, LANGUAGES, MAX_COUNT, MAX_TOPIC, MIN_COUNT, RoundSpec
from quiz.generation.write_outcome import Candidate
from quiz.generation.writer import RoundWriter, WriteOutcome, WriterProgress
from quiz.jobs import conf
from quiz.jobs.checks import model_pin_problem
from quiz.jobs.job_state import job_broadcast, job_fail, job_heartbeat, job_is_stale
from quiz.kinds import DEFAULT, KINDS
from quiz.models import (
    GenerationJob,
    GenerationStatus,
    Question,
)
from quiz.selectors import generation_snapshot
from verifier.gate import Gate

logger = logging.getLogger(__name__)


def generation_job_get(*, job_id: int, owner_key: str) -> GenerationJob:
    job = GenerationJob.objects.filter(pk=job_id, owner_key=owner_key).first() if owner_key else None
    if job is None:
        raise GenerationNotFound("That generation does not exist or is not yours.")
    return generation_reap_if_stale(job)


def generation_snapshot_for(*, job_id: int) -> dict[str, Any] | None:
    job = GenerationJob.objects.filter(pk=job_id).first()
    return generation_snapshot(generation_reap_if_stale(job)) if job else None


def generation_job_create(
    *,
    owner_key: str,
    count: int,
    topic: str = "",
    difficulty: str = "medium",
    language: str = "en",
    source_text: str = "",
    source_name: str = "",
    client_network: str = "",
    kinds: Sequence[str] = (DEFAULT,),
) -> GenerationJob:
    """Raises GenerationLimited (quiz/generation/limits.py) when this session, network or site may not start one now.
    `kinds`: the kinds of question to write (quiz/kinds names), at least one."""
    topic = " ".join(topic.split())
    source_text = source_text.strip()
    if not owner_key:
        raise QuizError("This browser session has no key; reload the page.")
    if not conf.writer_configured():
        raise QuizError("No model is configured: set OPENAI_API_KEY, or OPENAI_BASE_URL for a local server.")
    if problem := model_pin_problem():
        raise QuizError(problem)
    if not topic and not source_text:
        raise QuizError("Give a topic or a source text.")
    if len(topic) > MAX_TOPIC:
        raise QuizError(f"The topic is longer than {MAX_TOPIC} characters.")
    if not MIN_COUNT <= count <= MAX_COUNT:
        raise QuizError(f"Ask for {MIN_COUNT} to {MAX_COUNT} questions.")
    if difficulty not in DIFFICULTIES:
        raise QuizError("Pick a difficulty: easy, medium or hard.")
    if language not in LANGUAGES:
        raise QuizError("Pick a language from the list.")
    if len(source_text) > conf.source_max_chars():
        raise QuizError(f"The source text is longer than {conf.source_max_chars():,} characters.")
    if not kinds:
        raise QuizError("Tick at least one kind of question.")
    if unknown := sorted(set(kinds) - set(KINDS)):
        raise QuizError(f"Unknown kinds of question: {', '.join(unknown)} (one of: {', '.join(KINDS)}).")
    with generation_admission(client_network=client_network, owner_key=owner_key):
        return GenerationJob.objects.create(
            owner_key=owner_key,
            client_network=client_network,
            topic=topic,
            count=count,
            difficulty=difficulty,
            language=language,
            source_text=source_text,
            source_name=source_name[:200],
            kinds=[name for name in KINDS if name in kinds],
            model_id=conf.writer_model(),
        )


def generation_run(*, job_id: int) -> None:
    """Sync entry point (the Celery task, or a daemon thread)."""
    try:
        asyncio.run(generation_run_async(job_id=job_id))
    finally:
        close_old_connections()


async def generation_run_async(*, job_id: int) -> WriteOutcome | None:
    started = await sync_to_async(_job_start)(job_id=job_id)
    if started is None:
        return None
    spec, config, gate, already, progress = started
    # Candidate key -> the question stored for it, for what this run published while writing.
    published: dict[str, int] = {}
    publish = sync_to_async(publishing.job_publish)

    waiting: list[Candidate] = []

    async def publish_ready(candidates: list[Candidate]) -> None:
        # In order: what a failed store left waiting goes first with the next ones (or at the finish).
        waiting.extend(candidates)
        try:
            await publish(job_id=job_id, candidates=list(waiting), gated=gate.enabled, published=published)
        except Exception:
            logger.warning(
                "generation %s: storing ready questions failed; tried again with the next", job_id, exc_info=True
            )
        waiting[:] = [candidate for candidate in waiting if candidate.key not in published]

    writer = RoundWriter(
        spec=spec,
        config=config,
        gate=gate,
        report=sync_to_async(_job_progress_save_for(job_id)),
        source_limit=conf.source_max_chars(),
        publish=publish_ready,
        already=already,
        progress=progress,
    )
    heartbeat = asyncio.create_task(job_heartbeat(job_id))
    began = time.monotonic()
    try:
        async with gate:
            outcome = await writer.run()
    except Exception:
        logger.exception("generation %s failed", job_id)
        metrics.writer_round(outcome="error", seconds=time.monotonic() - began)
        await sync_to_async(job_fail)(job_id=job_id, message="Something went wrong while writing the round. Try again.")
        return None
    finally:
        heartbeat.cancel()
    metrics.writer_round(outcome=outcome.kind, seconds=time.monotonic() - began)
    round_cost.writer_counted(outcome, gate.config.prices)
    await sync_to_async(publishing.job_finish)(job_id=job_id, outcome=outcome, gated=gate.enabled, published=published)
    return outcome


def _is_abandoned(job: GenerationJob) -> bool:
    """Stale, and left so long that no worker took it over: with Celery workers, which take over a stale job
    within QUIZ_JOB_STALE_SECONDS more (`jobs_requeue_stale`), twice the stale time; in-process, the stale time."""
    wait = conf.stale_after_seconds() * (2 if conf.jobs_taken_over() else 1)
    return job.updated_at < timezone.now() - timedelta(seconds=wait)


def generation_reap_if_stale(job: GenerationJob) -> GenerationJob:
    """A job whose worker died and that no other worker took over is reported as failed (with a retry button),
    never left spinning."""
    if job.status == GenerationStatus.RUNNING and _is_abandoned(job):
        job_fail(
            job_id=job.pk,
            message="Writing this round stopped unexpectedly (the worker went away). Retry to start again.",
        )
        job.refresh_from_db()
    return job


def jobs_requeue_stale() -> list[int]:
    """Running jobs whose heartbeat stopped (their worker died: killed, out of memory, its host lost) go back to
    QUEUED, each by one caller only (a compare-and-set on the heartbeat read): the caller sends each returned job
    to the queue again, and the worker that takes it runs it on. What the dead run published stays in its round
    (a game may be playing it) and the new run writes only the rest, told those questions so it does not repeat
    them (`_job_start`), so the job ends in one round, every question in it gated once. Each Celery worker calls
    this every third of QUIZ_JOB_STALE_SECONDS (quiz/tasks.py)."""
    cutoff = timezone.now() - timedelta(seconds=conf.stale_after_seconds())
    requeued = []
    stale = GenerationJob.objects.filter(status=GenerationStatus.RUNNING, updated_at__lt=cutoff)
    for job_id, updated_at in list(stale.values_list("pk", "updated_at")):
        if GenerationJob.objects.filter(pk=job_id, status=GenerationStatus.RUNNING, updated_at=updated_at).update(
            status=GenerationStatus.QUEUED,
            takeovers=F("takeovers") + 1,
            revision=F("revision") + 1,
            updated_at=timezone.now(),
        ):
            logger.warning("generation %s: its worker went away; queued again for another worker", job_id)
            job_broadcast(job_id)
            requeued.append(job_id)
    return requeued


def _job_start(*, job_id: int) -> tuple[RoundSpec, conf.WriterConfig, Gate, list[str], WriterProgress] | None:
    job = GenerationJob.objects.filter(pk=job_id).first()
    if job is None:
        return None
    # A RUNNING job whose heartbeat stopped was left by a worker that died: a redelivered task takes it over.
    takeover = job.status == GenerationStatus.RUNNING and job_is_stale(job)
    if job.status != GenerationStatus.QUEUED and not takeover:
        return None
    problem = model_pin_problem()
    if problem:
        job_fail(job_id=job_id, message=problem)
        return None
    gate = Gate.from_settings(source_text=job.source_text or None)
    config = conf.writer_config()
    if gate.enabled:
        writer_over_ask = drop_rates.over_ask_for(writer_model=config.model, checker_model=gate.config.model_id)
        config = replace(config, over_ask=writer_over_ask)
    # Compare-and-set on what we read, so two deliveries of the same task never both run it.
    updated = GenerationJob.objects.filter(pk=job_id, status=job.status, updated_at=job.updated_at).update(
        status=GenerationStatus.RUNNING,
        gated=gate.enabled,
        checker_model_id=gate.config.model_id if gate.enabled else "",
        over_ask=config.over_ask if gate.enabled else None,
        takeovers=F("takeovers") + (1 if takeover else 0),
        revision=F("revision") + 1,
        updated_at=timezone.now(),
    )
    if updated and takeover:
        logger.warning("generation %s: its worker went away; restarting it", job_id)
    if not updated:
        return None
    job_broadcast(job_id)
    # A run before this one (its worker died) may have published some: this one writes the rest.
    already = (
        list(
            Question.objects.filter(entries__round_id=job.round_id)
            .order_by("entries__position")
            .values_list("text", flat=True)
        )
        if job.round_id is not None
        else []
    )
    spec = RoundSpec(
        count=max(1, job.count - len(already)),
        topic=job.topic,
        difficulty=job.difficulty,
        language=job.language,
        source_text=job.source_text or None,
        # A kind no longer in the registry is left out; none left, the default.
        kinds=tuple(name for name in KINDS if name in job.kinds) or (DEFAULT,),
    )
    # The host's page counts on from what a dead run had counted (never backwards): the new run adds to it.
    progress = WriterProgress(
        asked=job.asked,
        written=job.written,
        checked=job.checked,
        dropped=job.dropped,
        invalid=job.invalid,
        duplicates=job.duplicates,
        attempt=job.attempt,
        problems=list(job.problems or []),
    )
    return spec, config, gate, already, progress


def _job_progress_save_for(job_id: int):
    def save(progress: WriterProgress) -> bool:
        return _job_progress_save(job_id=job_id, progress=progress)

    return save


def _job_progress_save(*, job_id: int, progress: WriterProgress) -> bool:
    """Store one step; False when the job is no longer running (the host cancelled it)."""
    updated = GenerationJob.objects.filter(pk=job_id, status=GenerationStatus.RUNNING).update(
        asked=progress.asked,
        written=progress.written,
        checked=progress.checked,
        dropped=progress.dropped,
        invalid=progress.invalid,
        duplicates=progress.duplicates,
        attempt=progress.attempt,
        problems=progress.problems,
        revision=F("revision") + 1,
        updated_at=timezone.now(),
    )
    if updated:
        job_broadcast(job_id)
    return bool(updated)


def generation_cancel(*, job_id: int, owner_key: str) -> GenerationJob:
    job = generation_job_get(job_id=job_id, owner_key=owner_key)
    with transaction.atomic():
        updated = GenerationJob.objects.filter(
            pk=job.pk, status__in=(GenerationStatus.QUEUED, GenerationStatus.RUNNING)
        ).update(
            status=GenerationStatus.CANCELLED,
            message="Cancelled by the host.",
            revision=F("revision") + 1,
            finished_at=timezone.now(),
            updated_at=timezone.now(),
        )
        if updated:
            publishing.published_discard(job_id=job.pk)
            job_broadcast(job.pk)
    job.refresh_from_db()
    return job


def generation_retry(*, job_id: int, owner_key: str, client_network: str = "") -> GenerationJob:
    """A fresh copy of the host's job, queued: the caller starts it (`quiz.generation.runner.generation_enqueue`)."""
    job = generation_job_get(job_id=job_id, owner_key=owner_key)
    fresh = generation_job_create(
        owner_key=owner_key,
        count=job.count,
        topic=job.topic,
        difficulty=job.difficulty,
        language=job.language,
        source_text=job.source_text,
        source_name=job.source_name,
        client_network=client_network,
        kinds=job.kinds,
    )
    return fresh
