"""The ASGI server's event loop, for synchronous code in the server's worker threads that hands work back to
it (a broadcast after commit, a job a view starts) instead of waiting for it in the thread.

The server's lifespan (config/asgi.py) records the loop it runs on when it starts and forgets it when it shuts
down; `server_loop()` returns it only in that process (a forked child inherits the record, not the loop) and
only while it runs. Anywhere else (a Celery worker, a management command) it returns None and the caller does
the work itself.

Fallback, for servers that run no lifespan (Channels' test communicators, which bench/game_path.py and the
consumer tests use; daphne): the loop asgiref remembers in the threads that `sync_to_async` runs. That is
asgiref's own private thread-local, read here and nowhere else.
"""

import asyncio
import os
from dataclasses import dataclass

from asgiref.sync import SyncToAsync


@dataclass(frozen=True)
class _Recorded:
    loop: asyncio.AbstractEventLoop
    pid: int


_recorded: _Recorded | None = None


def server_loop_started() -> bool:
    """Called on the server's loop as its lifespan starts: records it, unless this process's server loop is
    recorded and running already (then False, and the first record stands)."""
    global _recorded
    if _recorded is not None and _recorded.pid == os.getpid() and _recorded.loop.is_running():
        return False
    _recorded = _Recorded(loop=asyncio.get_running_loop(), pid=os.getpid())
    return True


def server_loop_stopped() -> None:
    """Called on the server's loop as the lifespan that recorded it shuts down."""
    global _recorded
    if _recorded is not None and _recorded.loop is asyncio.get_running_loop():
        _recorded = None


def server_loop() -> asyncio.AbstractEventLoop | None:
    """The running loop of this process's ASGI server, or None outside one."""
    recorded = _recorded
    if recorded is not None and recorded.pid == os.getpid() and recorded.loop.is_running():
        return recorded.loop
    return _sync_to_async_loop()


def _sync_to_async_loop() -> asyncio.AbstractEventLoop | None:
    # Set by asgiref in a thread that sync_to_async runs, with the pid it was set in.
    if getattr(SyncToAsync.threadlocal, "main_event_loop_pid", None) != os.getpid():
        return None
    loop = getattr(SyncToAsync.threadlocal, "main_event_loop", None)
    return loop if loop is not None and loop.is_running() else None
