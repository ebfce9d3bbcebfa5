"""Helpers for the writer's and the jobs' tests: the pinned writer model id, rounds whose chosen questions the
fake checker drops, one round written directly, and a generation runner that only records what it was given."""

from quiz.generation.prompts import RoundSpec
from quiz.generation.writer import RoundWriter
from quiz.jobs.conf import writer_config
from tests.fakes.writer_server import good_question
from verifier.conf import gate_config
from verifier.gate import Gate

WRITER_MODEL = "writer-2025-01-01"
# QUIZ_GENERATION_RUNNER for a test that sees which jobs were started and runs none (the `started_jobs` fixture).
RECORDING_RUNNER = "tests.quiz.generation.record_start"
started: list[int] = []


def record_start(job_id: int) -> None:
    started.append(job_id)


def dropping(*markers: str):
    """Questions whose (request, index) is in `markers` carry DROPME, which the fake checker scores 0.1."""

    def make(request_number: int, index: int, *, grounded: bool = False) -> dict:
        item = good_question(request_number, index, grounded=grounded)
        if f"{request_number}.{index}" in markers or "all" in markers:
            item["question"] = "DROPME " + item["question"]
        return item

    return make


async def write(
    count: int = 10,
    *,
    source_text: str | None = None,
    topic: str = "Birds of Europe",
    gate=None,
    kinds: tuple[str, ...] = ("single",),
):
    gate = gate or Gate(config=gate_config(), threshold=0.6, calibrated=False, source_text=source_text)
    spec = RoundSpec(count=count, topic=topic, source_text=source_text, kinds=kinds)
    async with gate:
        return await RoundWriter(spec=spec, config=writer_config(), gate=gate).run()
