"""What every generation job shares, whatever its kind (writing a round: quiz.generation.jobs; checking one:
quiz.checking.rounds): the heartbeat that proves a run alive, the staleness a takeover reads, the broadcast of its
snapshot, and how a run fails."""

import asyncio
import logging
from datetime import timedelta

from asgiref.sync import sync_to_async
from django.db.models import F
from django.utils import timezone

from quiz.jobs import conf
from quiz.jobs.events import generation_changed
from quiz.models import GenerationJob, GenerationStatus, Round
from quiz.selectors import generation_snapshot

logger = logging.getLogger(__name__)


HEARTBEAT_SECONDS = 5


def heartbeat_seconds() -> float:
    """Every 5 s, and at least three times within QUIZ_JOB_STALE_SECONDS, so a live job never looks dead."""
    return min(HEARTBEAT_SECONDS, conf.stale_after_seconds() / 3)


async def job_heartbeat(job_id: int) -> None:
    """Prove the job is alive even while the model thinks for a long time without writing a question."""
    beat = sync_to_async(
        lambda: GenerationJob.objects.filter(pk=job_id, status=GenerationStatus.RUNNING).update(
            updated_at=timezone.now()
        )
    )
    while True:
        await asyncio.sleep(heartbeat_seconds())
        try:
            await beat()
        except Exception:
            logger.warning("generation %s: heartbeat failed", job_id, exc_info=True)


def job_is_stale(job: GenerationJob) -> bool:
    return job.updated_at < timezone.now() - timedelta(seconds=conf.stale_after_seconds())


def job_broadcast(job_id: int) -> None:
    job = GenerationJob.objects.get(pk=job_id)
    generation_changed(job_id=job_id, snapshot=generation_snapshot(job))


def job_fail(*, job_id: int, message: str) -> None:
    updated = GenerationJob.objects.filter(
        pk=job_id, status__in=(GenerationStatus.QUEUED, GenerationStatus.RUNNING)
    ).update(
        status=GenerationStatus.FAILED,
        message=message[:500],
        revision=F("revision") + 1,
        finished_at=timezone.now(),
        updated_at=timezone.now(),
    )
    if updated:
        # What it published stays playable (a game may be playing it): the round is written no further.
        round_writing_end(round_id=GenerationJob.objects.filter(pk=job_id).values_list("round_id", flat=True).first())
        job_broadcast(job_id)


def round_writing_end(*, round_id: int | None) -> None:
    """The round's writing stopped: a game playing it ends after its last question."""
    if round_id is not None:
        Round.objects.filter(pk=round_id, writing=True).update(writing=False)
