import os

from celery import Celery
from celery.signals import worker_init

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("quizgate")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@worker_init.connect
def refuse_settings_that_cannot_work_together(**kwargs) -> None:
    """A worker is where a redelivered task would be dropped: it does not start on such settings."""
    from quiz.jobs.checks import check_job_takeover

    errors = check_job_takeover()
    if errors:
        raise SystemExit("\n".join(f"{e.id}: {e.msg}\nHINT: {e.hint}" for e in errors))
