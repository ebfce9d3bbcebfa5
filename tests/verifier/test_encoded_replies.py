"""A hostile checker's reply, however it is encoded, costs neither the call's deadline nor the process's memory.

The checker runs in a process of its own (tests.fakes.process), so the memory measured is the gate's alone.
"""

import httpx
import pytest

from tests.fakes.bombs import BOMB_DECODED_BYTES
from tests.fakes.process import marker
from tests.support.memory import peak_allocation
from tests.support.timing import LoopLag, timed
from tests.verifier.helpers import item, stopwatch
from verifier.gate import Gate

TIMEOUT = 2.0  # VERIFIER_TIMEOUT here: long enough that "refused at once" and "cut at the deadline" differ
# What one hostile call may add to the process at its peak: the body cap (256 KiB) and the client's own
# buffers, far below any bomb here (each decodes to BOMB_DECODED_BYTES).
GROWTH_LIMIT = 4 * 1024 * 1024

CASES = [
    ("gzip_gzip_bomb", "encoded_body"),  # 373 bytes that decode to 128 MiB: the break-in's reply
    ("gzip_bomb", "encoded_body"),
    ("deflate_bomb", "encoded_body"),
    ("br_encoded", "encoded_body"),
    ("gzip_small", "encoded_body"),  # a good answer, merely compressed: nothing is ever decoded
    ("gzip_bomb_500", "http_status"),  # an error reply's body is not read, so its encoding does not matter
    ("huge", "body_too_large"),
    ("huge_chunked", "body_too_large"),
    ("trickle", "timeout"),
]


@pytest.fixture(params=["systemone", "llm"])
def backend(request, settings, fault_server: str) -> str:
    settings.VERIFIER_BACKEND = request.param
    settings.VERIFIER_BASE_URL = fault_server if request.param == "systemone" else f"{fault_server}/v1"
    settings.VERIFIER_API_KEY = "test-key"
    settings.VERIFIER_MODEL = "jev-1.13.0"
    settings.VERIFIER_TIMEOUT = TIMEOUT
    settings.VERIFIER_CONCURRENCY = 4
    settings.VERIFIER_MAX_BODY_BYTES = 256 * 1024
    return request.param


async def _check(text: str):
    gate = Gate.from_settings(threshold=0.6)
    async with gate:
        return await gate.check_all([item(1, text=text)])


async def _check_streamed(text: str):
    """As the writer checks a question while the rest of the round is still being written: only the call's own
    deadline bounds it (a round checked at once also races its round budget, which may win by a hair)."""
    gate = Gate.from_settings(threshold=0.6)
    async with gate:
        return [await gate.check(item(1, text=text))]


@pytest.mark.parametrize(("fault", "reason"), CASES, ids=[fault for fault, _ in CASES])
async def test_a_hostile_reply_ends_the_call_in_time_and_in_memory(backend, fault, reason):
    # A clean round first: the server answers, and the client's imports and caches are in place before measuring.
    assert [d.outcome for d in await _check("Question one: which is right?")] == ["passed"]
    # The baseline, in the same test: what a clean check costs on this machine now.
    clean, baseline = await timed(lambda: _check_streamed("Question one: which is right?"))
    assert [d.outcome for d in clean] == ["passed"]
    with peak_allocation() as memory, stopwatch() as timing:
        async with LoopLag() as lag:
            decisions = await _check_streamed(f"Question {marker(fault)}: which is right?")
    assert [(d.outcome, d.reason) for d in decisions] == [("unverified", reason)]
    wall = timing["wall"]
    # Cut at the call's deadline at the latest, give or take what a clean check costs now and how late this
    # loop's timers ran meanwhile.
    assert wall <= TIMEOUT + 2 * baseline + 2 * lag.worst, (wall, baseline, lag.worst)
    if reason != "timeout":
        # Refused from the headers (or at the cap), not by waiting for the deadline.
        assert wall - baseline < TIMEOUT / 2, (wall, baseline)
    assert memory["peak"] < GROWTH_LIMIT, f"the process grew by {memory['peak'] / 2**20:.1f} MiB"


@pytest.mark.parametrize("fixture", ["systemone", "llm"])
async def test_the_gate_asks_for_an_unencoded_reply(fixture, request):
    server = request.getfixturevalue(fixture)
    assert [d.outcome for d in await _check("Question one: which is right?")] == ["passed"]
    assert server.requests and {r.headers.get("accept-encoding") for r in server.requests} == {"identity"}


async def test_the_measure_would_see_a_decoded_bomb(fault_server):
    # The control: the same reply read through httpx's decoding iterator, as the backends did, holds the bomb.
    async with httpx.AsyncClient(timeout=30) as client:
        with peak_allocation() as memory:
            async with client.stream(
                "POST",
                f"{fault_server}/v1/chat/completions",
                json={"model": "m", "messages": [{"role": "user", "content": marker("gzip_gzip_bomb")}]},
            ) as response:
                decoded = 0
                async for chunk in response.aiter_bytes():
                    decoded += len(chunk)
    assert decoded == BOMB_DECODED_BYTES
    assert memory["peak"] > 16 * GROWTH_LIMIT
