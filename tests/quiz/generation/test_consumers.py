"""The host's page over a WebSocket: stored progress on connect, then every step in order, ending in a round."""

import pytest
from channels.db import database_sync_to_async
from channels.routing import URLRouter

from quiz.generation.jobs import generation_job_create, generation_run_async
from quiz.generation.routing import websocket_urlpatterns
from quiz.jobs.tokens import generation_token
from quiz.models import Round
from tests.fakes.writer_server import *  # noqa: F403
from tests.fakes.writer_server import WriterServer


@pytest.fixture
def gated_writer(settings, writer_server: WriterServer) -> WriterServer:
    settings.OPENAI_BASE_URL = f"{writer_server.url}/v1"
    settings.OPENAI_API_KEY = "test-key"
    settings.QUIZ_WRITER_MODEL = "writer-2025-01-01"
    settings.QUIZ_WRITER_TIMEOUT = 10.0
    settings.VERIFIER_BACKEND = "systemone"
    settings.VERIFIER_BASE_URL = writer_server.url
    settings.VERIFIER_API_KEY = "test-key"
    settings.VERIFIER_MODEL = "jev-1.13.0"
    settings.VERIFIER_TIMEOUT = 10.0  # roomy: the checker answers at once; its deadline is not the subject here
    writer_server.writer.token_delay = 0.002
    return writer_server


def communicator(sockets, job_id: int, token: str):
    """The generation socket, closed by the `sockets` fixture when the test ends, passed or failed."""
    return sockets.communicator(URLRouter(websocket_urlpatterns), f"/ws/generation/{job_id}/?t={token}")


@pytest.mark.django_db(transaction=True)
async def test_progress_arrives_in_order_and_ends_in_a_playable_round(gated_writer, sockets):
    job = await database_sync_to_async(generation_job_create)(owner_key="host-session", count=5, topic="Birds")
    ws = communicator(sockets, job.pk, generation_token(job_id=job.pk))
    connected, _ = await ws.connect()
    assert connected
    try:
        first = await ws.receive_json_from()
        assert first["type"] == "progress" and first["job"]["status"] == "queued"
        await generation_run_async(job_id=job.pk)
        events = [first["job"]]
        while not events[-1]["finished"]:
            events.append((await ws.receive_json_from(timeout=5))["job"])
    finally:
        await ws.disconnect()

    revisions = [event["revision"] for event in events]
    assert revisions == sorted(set(revisions)), revisions
    assert [e["status"] for e in events[1:-1]] == ["running"] * (len(events) - 2)
    for name in ("asked", "written", "checked"):
        values = [event[name] for event in events]
        assert values == sorted(values), (name, values)
    assert events[1]["gated"] is True
    # Checking overlapped writing: some step showed a check done while items were still being written.
    assert any(e["checked"] > 0 and e["written"] < 8 for e in events)
    last = events[-1]
    assert last["status"] == "done" and (last["asked"], last["written"], last["checked"]) == (8, 8, 8)
    assert last["play_url"] == f"/?round={last['round_id']}"
    round_ = await Round.objects.aget(pk=last["round_id"])
    assert round_.owner_key == "host-session"
    assert await round_.entries.acount() == 5


@pytest.mark.django_db(transaction=True)
async def test_a_late_page_gets_the_stored_progress(gated_writer, sockets):
    job = await database_sync_to_async(generation_job_create)(owner_key="k", count=3, topic="Birds")
    await generation_run_async(job_id=job.pk)
    ws = communicator(sockets, job.pk, generation_token(job_id=job.pk))
    connected, _ = await ws.connect()
    try:
        snapshot = (await ws.receive_json_from())["job"]
    finally:
        await ws.disconnect()
    assert snapshot["status"] == "done" and snapshot["written"] == 5 and snapshot["round_id"]


@pytest.mark.django_db(transaction=True)
async def test_a_page_without_the_jobs_token_is_refused(gated_writer, sockets):
    job = await database_sync_to_async(generation_job_create)(owner_key="k", count=3, topic="Birds")
    other = generation_token(job_id=job.pk + 1)
    ws = communicator(sockets, job.pk, other)
    connected, code = await ws.connect()
    assert not connected and code == 4403
