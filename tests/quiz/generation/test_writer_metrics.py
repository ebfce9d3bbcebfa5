"""What the writer counts in the metrics (core/metrics.py): the tokens its server reports and seconds per round."""

import pytest
from prometheus_client import REGISTRY

from quiz.generation.jobs import generation_job_create, generation_run
from quiz.models import GenerationStatus
from tests.fakes.writer_server import Turn

pytestmark = pytest.mark.django_db(transaction=True)


def _value(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


def _figures() -> dict[str, float]:
    return {
        "input": _value("quizgate_writer_tokens_total", kind="input"),
        "output": _value("quizgate_writer_tokens_total", kind="output"),
        "full": _value("quizgate_writer_round_seconds_count", outcome="full"),
        "full_seconds": _value("quizgate_writer_round_seconds_sum", outcome="full"),
        "failed": _value("quizgate_writer_round_seconds_count", outcome="failed"),
    }


def _grown(before: dict[str, float]) -> dict[str, float]:
    return {key: value - before[key] for key, value in _figures().items()}


def test_a_written_round_counts_its_tokens_and_its_seconds(writer):
    before = _figures()
    job = generation_job_create(owner_key="k", count=5, topic="Birds")
    generation_run(job_id=job.pk)
    job.refresh_from_db()
    assert job.status == GenerationStatus.DONE, job.message
    body = writer.writer_bodies[0]
    assert body["stream_options"] == {"include_usage": True}
    prompt_tokens = sum(len(m["content"]) for m in body["messages"]) // 4
    grown = _grown(before)
    assert grown["input"] == prompt_tokens > 0
    assert grown["output"] > 0  # one a streamed piece, as the server said
    assert grown["full"] == 1 and grown["full_seconds"] > 0


def test_a_server_that_refuses_stream_options_still_writes_the_round_uncounted(writer):
    writer.writer.reject_stream_options = True
    before = _figures()
    job = generation_job_create(owner_key="k", count=5, topic="Birds")
    generation_run(job_id=job.pk)
    job.refresh_from_db()
    assert job.status == GenerationStatus.DONE, job.message
    assert "stream_options" in writer.writer_bodies[0] and "stream_options" not in writer.writer_bodies[1]
    grown = _grown(before)
    assert (grown["input"], grown["output"], grown["full"]) == (0, 0, 1)


def test_a_failed_round_counts_its_seconds_as_failed(writer, settings):
    settings.QUIZ_WRITER_TIMEOUT = 1.0
    writer.writer.default = Turn(status=500)
    before = _figures()
    job = generation_job_create(owner_key="k", count=5, topic="Birds")
    generation_run(job_id=job.pk)
    grown = _grown(before)
    assert (grown["failed"], grown["full"]) == (1, 0)
