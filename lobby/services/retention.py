"""Retention: what players leave behind is deleted RETENTION_DAYS after the game's last activity.

A room goes whole, with its players (their nicknames), their answers, their reports and the room's voided
questions, once nothing has happened in it for RETENTION_DAYS: created, joined, answered and reported all before
the cut-off. A game still being played, or played within the period, keeps everything, so its results, its CSV
and its review are whole; an old one is gone whole rather than left as a room with scores and no names. The round
and its questions stay (they are the host's, not the players'), and so do the reviewers' labels and verdicts: a
report's words go, what the reviewer decided from them stays.

Browser sessions (a host's sign-in, the owner key of an anonymous host's past games) go when they have expired,
or when they were last used more than RETENTION_DAYS ago, whichever comes first. The client network a generation
job was asked from (an address, kept for the per-network limits of the last 24 hours) is blanked on jobs older
than the period; the job itself stays with its round. The pictures no round or pack shows any more go too
(quiz/image_retention.py).
"""

from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.sessions.models import Session
from django.db import transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone

from lobby.models import Answer, Assignment, Player, Report, Room
from quiz.image_retention import orphan_images_purge
from quiz.models import GenerationJob


@dataclass(frozen=True)
class Purged:
    rooms: int
    players: int
    answers: int
    reports: int
    sessions: int
    networks: int
    cutoff: datetime
    pictures: int = 0


def retention_cutoff(*, days: int | None = None, now: datetime | None = None) -> datetime:
    days = settings.RETENTION_DAYS if days is None else days
    if days < 1:
        raise ValueError(f"the retention period must be at least one day, not {days}")
    return (now or timezone.now()) - timedelta(days=days)


def rooms_past_retention(*, cutoff: datetime):
    """Rooms created before `cutoff` in which no one joined, answered or reported since, and that are not
    homework still open then (an assignment's deadline counts as its last activity)."""
    return Room.objects.filter(created_at__lt=cutoff).exclude(
        Exists(Player.objects.filter(room=OuterRef("pk"), joined_at__gte=cutoff))
        | Exists(Answer.objects.filter(room=OuterRef("pk"), created_at__gte=cutoff))
        | Exists(Report.objects.filter(room=OuterRef("pk"), created_at__gte=cutoff))
        | Exists(Assignment.objects.filter(room=OuterRef("pk"), deadline__gte=cutoff))
    )


def old_data_purge(*, days: int | None = None, now: datetime | None = None, dry_run: bool = False) -> Purged:
    """Delete rooms (and all their players left behind) and sessions past the retention period; how many went."""
    now = now or timezone.now()
    cutoff = retention_cutoff(days=days, now=now)
    # A session saved at T expires at T + SESSION_COOKIE_AGE: one last used before the cut-off expires before this.
    session_line = max(now, cutoff + timedelta(seconds=settings.SESSION_COOKIE_AGE))
    with transaction.atomic():
        room_ids = list(rooms_past_retention(cutoff=cutoff).values_list("pk", flat=True))
        jobs = GenerationJob.objects.filter(created_at__lt=cutoff).exclude(client_network="")
        counts = Purged(
            rooms=len(room_ids),
            players=Player.objects.filter(room_id__in=room_ids).count(),
            answers=Answer.objects.filter(room_id__in=room_ids).count(),
            reports=Report.objects.filter(room_id__in=room_ids).count(),
            sessions=Session.objects.filter(expire_date__lt=session_line).count(),
            networks=jobs.count(),
            cutoff=cutoff,
        )
        if not dry_run:
            Room.objects.filter(pk__in=room_ids).delete()
            Session.objects.filter(expire_date__lt=session_line).delete()
            jobs.update(client_network="")
    return replace(counts, pictures=orphan_images_purge(now=now, dry_run=dry_run))
