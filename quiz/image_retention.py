"""A picture's file goes when no question shows it any more.

A deleted question takes its file with it once the deletion is committed, unless another question shows the same
picture (one file per content). A deleted round leaves its questions (their checks and reports point at them):
`orphan_images_purge`, which `purge_old_data` runs daily, takes the picture off every question that no round and
no pack holds any more, then deletes every file no question names (a picture uploaded in the editor whose round
was never saved, too). What is younger than ORPHAN_GRACE is left alone: its round may be being saved right now.
"""

from datetime import datetime, timedelta

from django.db import transaction
from django.db.models.signals import post_delete
from django.utils import timezone

from quiz.models import Question
from quiz.pictures.images import NAME_PATTERN, image_forget, image_storage

ORPHAN_GRACE = timedelta(days=1)


def _forget_after_commit(name: str) -> None:
    def forget() -> None:
        image_forget(name, still_used=Question.objects.filter(image_name=name).exists())

    transaction.on_commit(forget)


def question_deleted(sender, instance: Question, **kwargs) -> None:
    if instance.image_name:
        _forget_after_commit(instance.image_name)


def image_receivers_connect() -> None:
    post_delete.connect(question_deleted, sender=Question, dispatch_uid="quiz.image_retention.question_deleted")


def orphan_images_purge(*, now: datetime | None = None, dry_run: bool = False) -> int:
    """Take the pictures off questions no round or pack holds, and delete the stored files no question names (both
    older than ORPHAN_GRACE); how many files (would) go. A dry run counts only the files no question names now."""
    storage = image_storage()
    cutoff = (now or timezone.now()) - ORPHAN_GRACE
    unheld = Question.objects.exclude(image_name="").filter(entries__isnull=True, pack__isnull=True)
    unheld = unheld.filter(created_at__lt=cutoff)
    if not dry_run:
        unheld.update(image_name="", image_alt="")
    try:
        _, files = storage.listdir("")
    except FileNotFoundError:
        return 0
    names = [name for name in files if NAME_PATTERN.match(name)]
    used = set(Question.objects.filter(image_name__in=names).values_list("image_name", flat=True))
    gone = 0
    for name in names:
        if name in used or storage.get_modified_time(name) >= cutoff:
            continue
        if not dry_run:
            storage.delete(name)
        gone += 1
    return gone
