import logging

from celery import shared_task

from lobby.services.retention import old_data_purge

logger = logging.getLogger(__name__)


@shared_task(name="lobby.tasks.purge_old_data")
def purge_old_data() -> None:
    """Celery beat's daily run of `manage.py purge_old_data` (CELERY_BEAT_SCHEDULE)."""
    purged = old_data_purge()
    logger.info(
        "retention: deleted %d rooms (%d players, %d answers, %d reports) and %d sessions; blanked %d job networks",
        purged.rooms,
        purged.players,
        purged.answers,
        purged.reports,
        purged.sessions,
        purged.networks,
    )
