"""The garbage collector of a server process, set once as the process starts serving (config/asgi.py's lifespan).

A server process holding thousands of sockets holds millions of objects that Python's cyclic collector tracks. With
the interpreter's defaults (700, 10, 10) the objects an answer makes live just long enough (a batch waiting for its
transaction, a task waiting for its acknowledgement) to be promoted to the oldest generation, which is then collected
whole: in a room of 10,000, full collections of 0.5–1.1 s each, several per question, found nothing to free while
the process's loop stood still and every answer waiting in it waited too (issue 47; `bench/ws_load.py`).

So, once per process:
- what the process holds when it starts serving (Django, the URL table, the templates: it lives as long as the
  process) is collected once and then frozen, left out of every later collection (`gc.freeze`);
- the youngest generation is collected after `SERVER_GC_THRESHOLDS[0]` new objects instead of 700, so what lives
  for one answer's round trip dies young, and the oldest after `[2]` collections of the middle one instead of 10.

Cyclic garbage still goes, a little later: the largest kind in a room filling up is uvicorn's HTTP protocol object
that each WebSocket's handshake leaves behind (it and its parser refer to each other). At most one young
generation of it waits, a few megabytes a process, whatever the room's size.

Every collection's pause is timed and counted (`quizgate_gc_pause_seconds`, by generation; core/metrics.py). The
collector's callback only notes it: the process's game clock moves the notes into the metrics (`flush_pauses`),
outside the collection, where the metrics' own lock may be taken.
"""

import gc
import os
import time
from collections import deque

from django.conf import settings

from core import metrics

_tuned_in: int | None = None  # the process id it was done in (a forked child does it again)
# (generation, seconds) of the collections since the last flush; bounded, should nothing flush them.
_pauses: deque[tuple[int, float]] = deque(maxlen=10_000)
_started = [0.0]


def _timed(phase: str, info: dict) -> None:
    if phase == "start":
        _started[0] = time.perf_counter()
    else:
        _pauses.append((info["generation"], time.perf_counter() - _started[0]))


def flush_pauses() -> None:
    """The collections noted since the last call, into the metrics."""
    while _pauses:
        generation, seconds = _pauses.popleft()
        metrics.gc_paused(generation=generation, seconds=seconds)


def tune() -> bool:
    """Collect, freeze what the process holds and set the thresholds, once per process; True when it did."""
    global _tuned_in
    if _tuned_in == os.getpid():
        return False
    gc.collect()
    gc.freeze()
    gc.set_threshold(*settings.SERVER_GC_THRESHOLDS)
    if _timed not in gc.callbacks:
        gc.callbacks.append(_timed)
    _tuned_in = os.getpid()
    return True
