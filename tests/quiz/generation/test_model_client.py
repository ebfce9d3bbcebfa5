"""The writer's model connection. A hostile model's reply, compressed or endless, costs neither the job's
deadline nor the worker's memory, and the questions complete before an over-long reply was cut are kept; a
server that fails is retried within the job's budget, and one that rejects the JSON schema is asked without it.

The model runs in a process of its own (tests.fakes.process), so the memory measured is the writer's alone.
"""

import pytest

from quiz.generation.prompts import RoundSpec
from quiz.generation.writer import RoundWriter
from quiz.jobs.conf import writer_config
from tests.fakes.fixtures import fault_server  # noqa: F401 - the fixture
from tests.fakes.process import marker
from tests.fakes.writer_server import ENDLESS_COMPLETE, Turn, good_reply
from tests.quiz.generation import write as write_round
from tests.support.memory import peak_allocation
from tests.support.timing import LoopLag, timed
from verifier.conf import gate_config
from verifier.gate import Gate

TIMEOUT = 3.0  # QUIZ_WRITER_TIMEOUT here
CAP = 256 * 1024  # QUIZ_WRITER_MAX_REPLY_BYTES here
# The cap, and the SDK's and the writer's own buffers; every bomb here decodes to 128 MiB, and the endless
# replies would go on until the deadline (gigabytes over loopback).
GROWTH_LIMIT = 4 * 1024 * 1024


@pytest.fixture
def hostile_writer(settings, fault_server: str) -> str:  # noqa: F811
    settings.OPENAI_BASE_URL = f"{fault_server}/v1"
    settings.OPENAI_API_KEY = "test-key"
    settings.QUIZ_WRITER_MODEL = "writer-2025-01-01"
    settings.QUIZ_WRITER_TIMEOUT = TIMEOUT
    # One attempt's deadline is the whole job's here: what a hostile reply costs is bounded by one of them.
    settings.QUIZ_WRITER_JOB_BUDGET = TIMEOUT
    settings.QUIZ_MAX_ATTEMPTS = 3
    settings.QUIZ_WRITER_MAX_REPLY_BYTES = CAP
    settings.VERIFIER_BACKEND = "off"
    return fault_server


async def write(topic: str, count: int = 3):
    gate = Gate(config=gate_config(), threshold=0.6, calibrated=False)
    async with gate:
        return await RoundWriter(spec=RoundSpec(count=count, topic=topic), config=writer_config(), gate=gate).run()


async def measured(topic: str) -> tuple:
    """The outcome of a round on `topic`, its wall time, and a clean round's (the baseline)."""
    # A clean round first: the server answers, and the SDK's imports and caches are in place before measuring.
    warm = await write("Birds of Europe")
    assert warm.kind == "full" and len(warm.played) == 3
    # The baseline, in the same test: what a clean round costs on this machine now.
    _, baseline = await timed(lambda: write("Birds of Europe"))
    with peak_allocation() as memory:
        async with LoopLag() as lag:
            outcome, wall = await timed(lambda: write(topic))
    # However hostile the reply, the round ends at its deadline, give or take a clean round's own cost and how
    # late this loop's timers ran meanwhile.
    assert wall <= TIMEOUT + 2 * baseline + 2 * lag.worst, (wall, baseline, lag.worst)
    assert memory["peak"] < GROWTH_LIMIT, f"the writer grew by {memory['peak'] / 2**20:.1f} MiB"
    return outcome, wall, baseline


REFUSED = [
    ("gzip_gzip_bomb", "The model server sent a compressed reply (Content-Encoding: gzip, gzip;"),
    ("gzip_bomb", "The model server sent a compressed reply (Content-Encoding: gzip;"),
    ("deflate_bomb", "The model server sent a compressed reply (Content-Encoding: deflate;"),
    ("gzip_sse", "The model server sent a compressed reply (Content-Encoding: gzip;"),
    ("endless_line", "The model's reply went past 256 KiB (QUIZ_WRITER_MAX_REPLY_BYTES)"),
]


@pytest.mark.parametrize(("fault", "message"), REFUSED, ids=[fault for fault, _ in REFUSED])
async def test_a_hostile_reply_fails_the_job_at_once_with_its_reason(hostile_writer, fault, message):
    outcome, wall, baseline = await measured(f"Birds {marker(fault)}")
    assert outcome.kind == "failed" and not outcome.played
    assert outcome.message.startswith(message)
    # Refused from the headers or at the cap, not by waiting out the job's time, and not retried.
    assert wall - baseline < TIMEOUT / 2
    assert outcome.progress.attempt == 1


async def test_an_endless_reply_is_cut_at_the_cap_and_keeps_its_complete_questions(hostile_writer):
    outcome, wall, baseline = await measured(f"Birds {marker('endless')}")
    assert outcome.kind == "short" and len(outcome.played) == ENDLESS_COMPLETE
    assert "went past 256 KiB (QUIZ_WRITER_MAX_REPLY_BYTES)" in outcome.message
    assert "questions completed before that are kept" in outcome.message
    assert wall - baseline < TIMEOUT / 2


async def test_a_trickling_reply_is_cut_at_the_jobs_deadline(hostile_writer):
    outcome, wall, baseline = await measured(f"Birds {marker('trickle')}")
    assert outcome.kind == "failed"
    assert outcome.message == (
        f"The model was too slow: it was cut off after {TIMEOUT:g} s, with 0 of 3 questions written. "
        f"The round's time limit of {TIMEOUT:g} s was used up after 1 attempt. No usable question was written. "
        "Try again."
    )
    assert wall >= TIMEOUT - 0.1


@pytest.mark.parametrize("fault", ["gzip_bomb_500", "endless_500"])
async def test_a_hostile_error_reply_is_retried_within_the_budget(hostile_writer, fault):
    # An error reply is read for its message only: an encoded body is dropped, a long one cut at 64 KiB.
    outcome, _wall, _baseline = await measured(f"Birds {marker(fault)}")
    assert outcome.kind == "failed"
    assert outcome.message.startswith("The model server kept failing (500)")


async def test_a_reply_nested_past_the_recursion_limit_keeps_the_questions_around_it(hostile_writer):
    outcome, wall, baseline = await measured(f"Birds {marker('nested')}")
    # Two from each reply (every prompt carries the topic, so the second is nested too): 3 of 3 in 2 attempts.
    assert outcome.kind == "full" and len(outcome.played) == 3
    assert outcome.progress.attempt == 2 and outcome.progress.invalid == 0
    assert wall - baseline < TIMEOUT / 2


# --- retries and the schema fallback, against the scripted writer server ---------------------------------


async def test_schema_rejected_falls_back_to_plain_text(writer):
    writer.writer.reject_schema = True
    writer.writer.default = Turn(content="Here is your quiz!\n```json\n" + good_reply(10) + "\n```\nHave fun.")
    outcome = await write_round(10)
    assert outcome.kind == "full" and len(outcome.played) == 10
    assert "response_format" in writer.writer_bodies[0]
    assert "response_format" not in writer.writer_bodies[1]
    assert len(writer.writer_bodies) == 2


async def test_429_then_success(writer):
    writer.writer.turns = [Turn(status=429), Turn(status=429)]
    outcome = await write_round(5)
    assert outcome.kind == "full" and len(writer.writer_bodies) == 3


async def test_500_until_the_budget_runs_out(writer, settings):
    settings.QUIZ_WRITER_TIMEOUT = 1.5
    # The baseline, in the same test: a clean round's cost on this machine now.
    clean, baseline = await timed(lambda: write_round(5))
    assert clean.kind == "full"
    asked_before = len(writer.writer_bodies)
    writer.writer.default = Turn(status=500)
    outcome, elapsed = await timed(lambda: write_round(5))
    assert outcome.kind == "failed" and not outcome.played
    assert "kept failing (500)" in outcome.message
    assert 2 <= len(writer.writer_bodies) - asked_before <= 4
    # Retried until the budget was spent, and not past it by more than two clean rounds' cost.
    assert elapsed <= 1.5 + 2 * baseline, (elapsed, baseline)
