"""The server process's garbage collector (core/collector.py): set once as the process starts serving."""

import asyncio
import gc
import os
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest
from django.conf import settings
from prometheus_client import REGISTRY

from core import collector
from tests.support.communicator import server_lifespan

ROOT = Path(__file__).resolve().parents[2]


@contextmanager
def full_collections_counted():
    """The number of collections of the oldest generation while the block runs, in a list of one."""
    counted = [0]

    def count(phase, info):
        if phase == "stop" and info["generation"] == 2:
            counted[0] += 1

    gc.callbacks.append(count)
    try:
        yield counted
    finally:
        gc.callbacks.remove(count)


@contextmanager
def thresholds(*wanted):
    before = gc.get_threshold()
    gc.set_threshold(*wanted)
    try:
        yield
    finally:
        gc.set_threshold(*before)


def answers_in_flight(rounds: int, *, in_flight: int = 2_000) -> None:
    """What answers do to the heap: each makes a few small objects that live until the batch it waits in is
    written (here, until `in_flight` later answers have come), then go."""
    waiting: list = []
    for index in range(rounds):
        waiting.append({"player": index, "given": [index], "frame": {"type": "answered", "question": 1}})
        if len(waiting) > in_flight:
            del waiting[: in_flight // 2]


@pytest.mark.django_db
async def test_the_servers_lifespan_tunes_the_collector_once_per_process():
    collector._tuned_in = None
    async with server_lifespan():
        assert gc.get_threshold() == tuple(settings.SERVER_GC_THRESHOLDS) == (50_000, 10, 100)
        assert gc.get_freeze_count() > 0  # what the process held as it started is left out of later collections
        frozen = gc.get_freeze_count()
    assert collector._tuned_in == os.getpid()
    async with server_lifespan():  # a second lifespan in the process freezes nothing more
        assert gc.get_freeze_count() <= frozen  # (frozen objects freed since are no longer counted)
    assert not collector.tune()


def test_a_large_heap_is_not_collected_whole_while_answers_come_in():
    """A process holding a room's objects (here 300,000) and answers coming in: with Python's defaults the
    objects in flight are promoted to the oldest generation and the whole heap is collected again and again;
    with the server's thresholds, not once."""
    room = [{"socket": index, "scope": {"path": "/ws/room/"}} for index in range(100_000)]
    gc.collect()
    try:
        with thresholds(700, 10, 10), full_collections_counted() as defaults:
            answers_in_flight(1_000_000)
        gc.collect()
        with thresholds(*settings.SERVER_GC_THRESHOLDS), full_collections_counted() as tuned:
            answers_in_flight(1_000_000)
    finally:
        del room
    assert defaults[0] >= 2, f"the defaults collected the whole heap {defaults[0]} times: the test shows nothing"
    assert tuned[0] == 0


def test_thresholds_that_are_not_three_positive_numbers_are_refused_at_start():
    for wrong in ("50000,20", "0,10,10", "many,10,10"):
        refused = subprocess.run(
            [sys.executable, "-c", "import django; django.setup()"],
            cwd=ROOT,
            env={**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings", "SERVER_GC_THRESHOLDS": wrong},
            capture_output=True,
            text=True,
        )
        assert refused.returncode != 0, wrong
        assert "SERVER_GC_THRESHOLDS" in refused.stderr, (wrong, refused.stderr[-500:])


def _full_collections_counted() -> float:
    return REGISTRY.get_sample_value("quizgate_gc_pause_seconds_count", {"generation": "2"}) or 0.0


def _full_collections_paused() -> float:
    return REGISTRY.get_sample_value("quizgate_gc_pause_seconds_sum", {"generation": "2"}) or 0.0


@pytest.mark.django_db
async def test_each_collection_is_timed_and_reaches_the_metrics_on_the_clocks_next_tick(settings):
    settings.GAME_CLOCK_INTERVAL = 0.05
    async with server_lifespan():
        before, paused_before = _full_collections_counted(), _full_collections_paused()
        gc.collect()
        gc.collect()
        await asyncio.sleep(0.5)  # ten of the clock's ticks
        assert _full_collections_counted() >= before + 2
        assert _full_collections_paused() > paused_before  # each one's pause, timed
