import os
import signal
import threading

from celery import Celery
from celery.signals import beat_init, worker_init

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


def _stop_beat(signum, frame) -> None:
    """Stop beat on the first SIGTERM or SIGINT and ignore every later one, touching no lock here: the loop's own
    `except SystemExit` and `finally` save the schedule, outside the handler."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    raise SystemExit()


@beat_init.connect
def stop_beat_once(sender, **kwargs) -> None:
    """Celery's own beat handler saves the schedule inside the handler, and that takes an Event's lock: a second
    SIGTERM arriving while the first handler holds it runs the handler again on the same thread, which waits for
    that lock for good. A host's stop delivers more than one (its group's signal and the host script's), and such a
    beat hung until it was killed. beat_init comes after Celery installs its handler, so this one replaces it."""
    if threading.current_thread() is threading.main_thread():  # an embedded beat in a thread cannot set handlers
        signal.signal(signal.SIGTERM, _stop_beat)
        signal.signal(signal.SIGINT, _stop_beat)
