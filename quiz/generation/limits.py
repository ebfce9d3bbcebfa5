"""How many model-written rounds may be started: each one spends the operator's model key.

Per client network and per browser session, both "being written at once" and "started in the last hour",
and site-wide "started in the last 24 hours". Everything is counted from the jobs in the database (the same
numbers in every process, and after a restart), over sliding windows, so a refusal can say exactly when
the oldest counted job leaves the window. A lock in the shared cache (Redis when REDIS_URL is set) makes
"count, then create" one step across processes.

A setting of 0 turns that limit off. Settings are read at call time (tests and deployments tune them).
"""

import logging
import math
import secrets
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta

from django.conf import settings
from django.core.cache import caches
from django.db import transaction
from django.db.models import Q, QuerySet
from django.utils import timezone

from quiz.exceptions import QuizError
from quiz.jobs import conf
from quiz.models import GenerationJob, GenerationStatus, JobKind

logger = logging.getLogger(__name__)

HOUR = timedelta(hours=1)
DAY = timedelta(days=1)
# A queued job no worker took within this long was lost (e.g. the process went away before starting it):
# it stops holding a "being written" slot, so a host is not locked out for good.
QUEUED_HOLDS_FOR = timedelta(minutes=10)
# When a slot frees is not known in advance; a round usually takes well under a minute to write.
RUNNING_RETRY_SECONDS = 30
LOCK_KEY = "quiz:generation-admission"
LOCK_SECONDS = 10
LOCK_WAIT_SECONDS = 3.0


class GenerationLimited(QuizError):
    """Refused for now; `retry_after` is how many seconds until trying again can succeed."""

    def __init__(self, message: str, *, retry_after: int):
        super().__init__(message)
        self.retry_after = max(1, int(retry_after))


def _limit(name: str) -> int:
    return int(getattr(settings, name))  # the default is in config/settings_writer.py, once


def _rounds(count: int) -> str:
    return "1 round" if count == 1 else f"{count} rounds"


def wait_text(seconds: int) -> str:
    if seconds < 60:
        return "1 second" if seconds == 1 else f"{seconds} seconds"
    if seconds < 90 * 60:
        minutes = math.ceil(seconds / 60)
        return "1 minute" if minutes == 1 else f"{minutes} minutes"
    return f"{math.ceil(seconds / 3600)} hours"


def _holding_a_slot(now: datetime) -> Q:
    # A running job whose heartbeat stopped lost its worker (it is reaped or taken over): it holds nothing.
    alive = now - timedelta(seconds=conf.stale_after_seconds())
    return Q(status=GenerationStatus.RUNNING, updated_at__gte=alive) | Q(
        status=GenerationStatus.QUEUED, created_at__gte=now - QUEUED_HOLDS_FOR
    )


def _window_refusal(jobs: QuerySet, *, limit: int, window: timedelta, now: datetime, message: str):
    """A refusal when `jobs` started within `window` reach `limit`, or None."""
    if limit <= 0:
        return None
    started = list(jobs.filter(created_at__gt=now - window).order_by("created_at").values_list("created_at", flat=True))
    if len(started) < limit:
        return None
    # Trying again succeeds once enough of the oldest have left the window to leave room for one more.
    frees_at = started[len(started) - limit] + window
    retry_after = math.ceil((frees_at - now).total_seconds())
    return GenerationLimited(
        message.format(rounds=_rounds(len(started)), wait=wait_text(max(1, retry_after))), retry_after=retry_after
    )


def _running_refusal(jobs: QuerySet, *, limit: int, now: datetime, one: str, many: str):
    if limit <= 0:
        return None
    running = jobs.filter(_holding_a_slot(now)).count()
    if running < limit:
        return None
    return GenerationLimited(
        (one if running == 1 else many).format(rounds=_rounds(running)), retry_after=RUNNING_RETRY_SECONDS
    )


def generation_limits_check(*, client_network: str, owner_key: str, now: datetime | None = None) -> None:
    """Raise GenerationLimited when one more job may not start now; its message says when to try again.

    An empty `client_network` (a job not started by a request) is limited per session and site-wide only.
    """
    now = now or timezone.now()
    # Only writing spends the model key: a check of a host's round (quiz/checking/rounds.py) calls the checker.
    jobs = GenerationJob.objects.filter(kind=JobKind.WRITE)
    mine = jobs.filter(owner_key=owner_key)
    network = jobs.filter(client_network=client_network) if client_network else None
    refusals = [
        _running_refusal(
            mine,
            limit=_limit("QUIZ_GENERATION_RUNNING_PER_SESSION"),
            now=now,
            one="A round is already being written in this browser; try again when it has finished.",
            many="{rounds} are already being written in this browser; try again when one has finished.",
        ),
        _window_refusal(
            mine,
            limit=_limit("QUIZ_GENERATION_PER_HOUR_PER_SESSION"),
            window=HOUR,
            now=now,
            message="You have started {rounds} in the last hour in this browser; try again in {wait}.",
        ),
        _window_refusal(
            jobs,
            limit=_limit("QUIZ_GENERATION_PER_DAY"),
            window=DAY,
            now=now,
            message="This site has started {rounds} today, as many as it allows a day; try again in {wait}.",
        ),
    ]
    if network is not None:
        refusals += [
            _running_refusal(
                network,
                limit=_limit("QUIZ_GENERATION_RUNNING_PER_IP"),
                now=now,
                one="A round is already being written from this network; try again when it has finished.",
                many="{rounds} are already being written from this network; try again when one has finished.",
            ),
            _window_refusal(
                network,
                limit=_limit("QUIZ_GENERATION_PER_HOUR_PER_IP"),
                window=HOUR,
                now=now,
                message="You have started {rounds} in the last hour from this network; try again in {wait}.",
            ),
        ]
    refusals = [refusal for refusal in refusals if refusal is not None]
    if refusals:
        # The longest wait: trying again sooner would only meet another of the limits.
        raise max(refusals, key=lambda refusal: refusal.retry_after)


@contextmanager
def generation_admission(*, client_network: str, owner_key: str) -> Iterator[None]:
    """Check the limits and create the job (the body) as one step: no two requests both take the last slot.

    The lock is held until the job's transaction commits, so the next request counts it.
    """
    with _admission_lock(), transaction.atomic():
        generation_limits_check(client_network=client_network, owner_key=owner_key)
        yield


@contextmanager
def _admission_lock() -> Iterator[None]:
    cache = caches["default"]
    token = secrets.token_hex(8)
    deadline = time.monotonic() + LOCK_WAIT_SECONDS
    try:
        # add is atomic on every shared backend; the timeout frees the lock of a process that died holding it.
        while not cache.add(LOCK_KEY, token, timeout=LOCK_SECONDS):
            if time.monotonic() > deadline:
                raise GenerationLimited(
                    "Many rounds are being started right now; try again in a few seconds.", retry_after=5
                )
            time.sleep(0.02)
        locked = True
    except GenerationLimited:
        raise
    except Exception:
        # A cache outage must not stop every host: the limits still hold, two racing requests may both pass.
        logger.warning("generation admission lock unavailable; counting without it", exc_info=True)
        locked = False
    try:
        yield
    finally:
        if locked:
            _release(cache, token)


def _release(cache, token: str) -> None:
    try:
        if cache.get(LOCK_KEY) == token:
            cache.delete(LOCK_KEY)
    except Exception:
        logger.warning("generation admission lock not released; it expires by itself", exc_info=True)
