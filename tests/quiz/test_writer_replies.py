"""A hostile writer model's reply, compressed or endless, costs neither the job's deadline nor the worker's
memory, and the questions complete before an over-long reply was cut are kept.

The model runs in a process of its own (tests.fakes.process), so the memory measured is the writer's alone.
"""

import json
import time

import pytest

from quiz.conf import writer_config
from quiz.writer import ItemExtractor, RoundSpec, RoundWriter, parse_reply
from tests.fakes.fixtures import fault_server  # noqa: F401 - the fixture
from tests.fakes.process import marker
from tests.fakes.writer_server import ENDLESS_COMPLETE, good_question, good_reply
from tests.support.memory import peak_allocation
from verifier.conf import gate_config
from verifier.gate import Gate

TIMEOUT = 3.0  # QUIZ_WRITER_TIMEOUT here
SLACK = 1.0
CAP = 256 * 1024  # QUIZ_WRITER_MAX_REPLY_BYTES here
# The cap, and the SDK's and the writer's own buffers; every bomb here decodes to 128 MiB, and the endless
# replies would go on until the deadline (gigabytes over loopback).
GROWTH_LIMIT = 4 * 1024 * 1024


@pytest.fixture
def writer(settings, fault_server: str) -> str:  # noqa: F811
    settings.OPENAI_BASE_URL = f"{fault_server}/v1"
    settings.OPENAI_API_KEY = "test-key"
    settings.QUIZ_WRITER_MODEL = "writer-2025-01-01"
    settings.QUIZ_WRITER_TIMEOUT = TIMEOUT
    settings.QUIZ_MAX_ATTEMPTS = 3
    settings.QUIZ_WRITER_MAX_REPLY_BYTES = CAP
    settings.VERIFIER_BACKEND = "off"
    return fault_server


async def write(topic: str, count: int = 3):
    gate = Gate(config=gate_config(), threshold=0.6, calibrated=False)
    async with gate:
        return await RoundWriter(spec=RoundSpec(count=count, topic=topic), config=writer_config(), gate=gate).run()


async def measured(topic: str):
    # A clean round first: the server answers, and the SDK's imports and caches are in place before measuring.
    warm = await write("Birds of Europe")
    assert warm.kind == "full" and len(warm.played) == 3
    with peak_allocation() as memory:
        started = time.monotonic()
        outcome = await write(topic)
        wall = time.monotonic() - started
    assert wall <= TIMEOUT + SLACK
    assert memory["peak"] < GROWTH_LIMIT, f"the writer grew by {memory['peak'] / 2**20:.1f} MiB"
    return outcome, wall


REFUSED = [
    ("gzip_gzip_bomb", "The model server sent a compressed reply (Content-Encoding: gzip, gzip;"),
    ("gzip_bomb", "The model server sent a compressed reply (Content-Encoding: gzip;"),
    ("deflate_bomb", "The model server sent a compressed reply (Content-Encoding: deflate;"),
    ("gzip_sse", "The model server sent a compressed reply (Content-Encoding: gzip;"),
    ("endless_line", "The model's reply went past 256 KiB (QUIZ_WRITER_MAX_REPLY_BYTES)"),
]


@pytest.mark.parametrize(("fault", "message"), REFUSED, ids=[fault for fault, _ in REFUSED])
async def test_a_hostile_reply_fails_the_job_at_once_with_its_reason(writer, fault, message):
    outcome, wall = await measured(f"Birds {marker(fault)}")
    assert outcome.kind == "failed" and not outcome.played
    assert outcome.message.startswith(message)
    # Refused from the headers or at the cap, not by waiting out the job's time, and not retried.
    assert wall < TIMEOUT / 2
    assert outcome.progress.attempt == 1


async def test_an_endless_reply_is_cut_at_the_cap_and_keeps_its_complete_questions(writer):
    outcome, wall = await measured(f"Birds {marker('endless')}")
    assert outcome.kind == "short" and len(outcome.played) == ENDLESS_COMPLETE
    assert "went past 256 KiB (QUIZ_WRITER_MAX_REPLY_BYTES)" in outcome.message
    assert "questions completed before that are kept" in outcome.message
    assert wall < TIMEOUT / 2


async def test_a_trickling_reply_is_cut_at_the_jobs_deadline(writer):
    outcome, wall = await measured(f"Birds {marker('trickle')}")
    assert outcome.kind == "failed"
    assert outcome.message == f"The model took longer than {TIMEOUT:g} seconds. Try again."
    assert wall >= TIMEOUT - 0.1


@pytest.mark.parametrize("fault", ["gzip_bomb_500", "endless_500"])
async def test_a_hostile_error_reply_is_retried_within_the_budget(writer, fault):
    # An error reply is read for its message only: an encoded body is dropped, a long one cut at 64 KiB.
    outcome, _wall = await measured(f"Birds {marker(fault)}")
    assert outcome.kind == "failed"
    assert outcome.message.startswith("The model server kept failing (500)")


async def test_a_reply_nested_past_the_recursion_limit_keeps_the_questions_around_it(writer):
    outcome, wall = await measured(f"Birds {marker('nested')}")
    # Two from each reply (every prompt carries the topic, so the second is nested too): 3 of 3 in 2 attempts.
    assert outcome.kind == "full" and len(outcome.played) == 3
    assert outcome.progress.attempt == 2 and outcome.progress.invalid == 0
    assert wall < TIMEOUT / 2


def test_the_readers_neither_recurse_nor_go_quadratic_on_brackets():
    started = time.monotonic()
    extractor = ItemExtractor()
    assert extractor.feed("[" + '{"question": [' * 5000 + "]}" * 5000 + "]") == []
    assert parse_reply("[" * 100_000) == []
    assert parse_reply("[" * 999 + "0," * 100_000) == []
    assert time.monotonic() - started < 1.0
    # Still found: a reply wrapped in chatty text with a few stray braces.
    assert len(parse_reply("Sure {here} you go: " + good_reply(3) + " {enjoy}")) == 3


def test_the_streaming_reader_holds_neither_the_reply_nor_its_brackets():
    extractor = ItemExtractor()
    with peak_allocation() as memory:
        for _ in range(25):
            extractor.feed("[" * 4000)
        for _ in range(500):
            extractor.feed(" " * 4000)
    # 100,000 open brackets and 2 MB of padding: only a few levels and the reply's first 256 KiB are kept.
    assert memory["peak"] < 1024 * 1024, f"the reader grew by {memory['peak'] / 2**20:.1f} MiB"
    assert len(extractor.text) == 256 * 1024


def test_the_streaming_reader_follows_escapes_across_chunks():
    question = good_question(0, 1) | {"question": 'Which "quoted" \\ path {braced} [listed] is right?'}
    reply = json.dumps({"questions": [question, good_question(0, 2)]})
    assert "\\\\" in reply and '\\"' in reply
    extractor = ItemExtractor()
    found = [item for char in reply for item in extractor.feed(char)]
    assert found == [question, good_question(0, 2)]
