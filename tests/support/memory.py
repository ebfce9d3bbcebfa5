import tracemalloc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def peak_allocation() -> Iterator[dict[str, int]]:
    """`["peak"]`: the most bytes Python held in this process at once above the level on entry (tracemalloc,
    which counts every bytes object a decoder makes; unlike ru_maxrss it is not hidden by an earlier peak)."""
    started_here = not tracemalloc.is_tracing()
    if started_here:
        tracemalloc.start()
    tracemalloc.reset_peak()
    baseline = tracemalloc.get_traced_memory()[0]
    measured: dict[str, int] = {}
    try:
        yield measured
    finally:
        measured["peak"] = tracemalloc.get_traced_memory()[1] - baseline
        if started_here:
            tracemalloc.stop()
