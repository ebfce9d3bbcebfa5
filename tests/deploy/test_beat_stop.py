"""Celery beat stops on its first SIGTERM, however many follow. Celery's own handler saves the schedule inside the
handler, which sets an Event and so takes that Event's lock; a later SIGTERM that arrived while the lock was held ran
the handler again on the same thread, which then waited for the lock for good. A whole run found such a beat eight
handlers deep ten minutes after its host was stopped (a host's stop delivers its group's SIGTERM and its script's)."""

import subprocess
import sys
import textwrap

from tests.support.servers import REPO, server_env

# The beat's own objects, put together as `celery beat` does (Celery's handler, then beat_init), in a process of its
# own so that a deadlock is a timeout here and not a hung suite. The SIGTERM arrives while the main thread holds the
# lock of the Event the handler sets: where the deadlock was found.
_BEAT = textwrap.dedent(
    """
    import os, signal, sys
    from celery.apps.beat import Beat
    from celery.beat import Service
    from celery.signals import beat_init
    from config.celery_app import app

    service = Service(app=app, schedule_filename=sys.argv[1])
    Beat(app=app, quiet=True).install_sync_handler(service)
    beat_init.send(sender=service)
    service.scheduler
    try:
        with service._is_stopped._cond:
            os.kill(os.getpid(), signal.SIGTERM)
            for _ in range(100_000):
                pass
        print("not stopped by its SIGTERM", flush=True)
    except SystemExit:
        print("stopping", flush=True)
    for _ in range(5):
        os.kill(os.getpid(), signal.SIGTERM)
    service.sync()
    print("schedule saved", flush=True)
    """
)


def test_a_beat_that_gets_sigterm_mid_stop_still_stops_and_saves_its_schedule(tmp_path):
    try:
        done = subprocess.run(
            [sys.executable, "-c", _BEAT, str(tmp_path / "schedule")],
            cwd=REPO,
            env=server_env(),
            capture_output=True,
            text=True,
            timeout=30,
        )
    except subprocess.TimeoutExpired:
        raise AssertionError("the beat hung in its SIGTERM handler, waiting for a lock its own thread holds") from None
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split("\n")[:2] == ["stopping", "schedule saved"], done.stdout + done.stderr[-3000:]
    assert list(tmp_path.glob("schedule*")), "the schedule was not saved"
