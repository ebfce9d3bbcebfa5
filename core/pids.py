"""Process ids of this machine: which are gone, and a server worker that stops when its supervisor is gone.

A worker killed outright is a zombie until its parent reaps it, and `os.kill(pid, 0)` takes a zombie for alive.
uvicorn's supervisor reaps a dead worker only between its health checks, and a check waits up to
SERVER_WORKER_HEALTHCHECK_SECONDS for a worker's answer: a worker killed while being asked stays a zombie that long.
So a zombie counts as gone (`gone`), for the metrics' sum of sockets (core/metrics.py) and the registry of live
processes (core/processes.py) alike.

While its supervisor is stuck so, a SIGTERM to the supervisor waits too; whoever then kills the supervisor outright
leaves its other workers running with no parent, holding the port, their game clocks closing questions. A worker
started by a supervisor (a multiprocessing child: `uvicorn --workers N`) therefore watches its parent from a thread
(`follow_parent`) and, when the parent is gone, stops as a SIGTERM stops it: its sockets are closed with 1012 (the
page reconnects, to a live server behind the balancer) and its lifespan's shutdown runs. Should that shutdown hang,
the worker exits ORPHAN_GRACE_SECONDS later.
"""

import logging
import multiprocessing
import os
import signal
import threading

logger = logging.getLogger(__name__)

ORPHAN_GRACE_SECONDS = 30.0

_following: list[int] = []  # the process id that follows its parent (a forked child would follow again)


def gone(pid: int) -> bool:
    """True when no process of this id runs on this machine, or it is a zombie (killed, not yet reaped)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rpartition(")")[2].split()[0] in ("Z", "X")
    except FileNotFoundError:
        if os.path.isdir("/proc/self"):
            return True
    except (OSError, ValueError, IndexError):
        return False
    try:  # no /proc on this system
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # someone else's process of that number: alive
        return False
    return False


def follow_parent() -> bool:
    """In a worker a supervisor started, stop this process when the supervisor is gone; True when it now follows."""
    parent = multiprocessing.parent_process()
    if parent is None or _following == [os.getpid()]:
        return False
    _following[:] = [os.getpid()]
    threading.Thread(target=_stop_when_gone, args=(parent,), name="quizgate-follow-parent", daemon=True).start()
    return True


def _stop_when_gone(parent) -> None:
    parent.join()  # returns when the parent's end of the sentinel pipe closes: the parent exited, however it died
    logger.warning("the server's supervisor (process %s) is gone: this worker stops", parent.pid)
    os.kill(os.getpid(), signal.SIGTERM)
    threading.Event().wait(ORPHAN_GRACE_SECONDS)
    logger.error("this worker's shutdown took over %s s with its supervisor gone: it exits", ORPHAN_GRACE_SECONDS)
    os._exit(1)
