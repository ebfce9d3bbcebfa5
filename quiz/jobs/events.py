"""Group names and the one generation event. Sent only after the transaction that caused it commits."""

import logging
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.db import transaction

logger = logging.getLogger(__name__)

GENERATION_PROGRESS = "generation.progress"


def generation_group(job_id: int) -> str:
    # Built from a database id only, so it always fits Channels' group-name rules.
    return f"generation.{int(job_id)}"


def generation_changed(*, job_id: int, snapshot: dict[str, Any]) -> None:
    transaction.on_commit(lambda: generation_broadcast(job_id=job_id, snapshot=snapshot))


def generation_broadcast(*, job_id: int, snapshot: dict[str, Any]) -> None:
    layer = get_channel_layer()
    if layer is None:
        return
    try:
        async_to_sync(layer.group_send)(generation_group(job_id), {"type": GENERATION_PROGRESS, "job": snapshot})
    except Exception:
        # The database already holds the progress; a page catches up from the snapshot on (re)connect.
        logger.exception("broadcast for generation %s failed", job_id)
