"""Start while the round is still being written: questions join the round in the writer's order as they pass the
gate, a game plays the ready ones while later ones are still being checked, a question the gate drops is never
shown, the leaderboard waits (bounded) for the next one, and a writer that dies half way ends the game cleanly
with the questions it had."""

import asyncio
import contextlib
import json
import re
import threading
from datetime import timedelta

import pytest
from channels.db import database_sync_to_async
from django.urls import reverse
from django.utils import timezone

from lobby.models import Room
from lobby.rules import machine
from lobby.rules.machine import Action, Phase, Position
from lobby.services import game_act, room_create, writing_tick
from quiz.exceptions import QuizError
from quiz.generation import jobs
from quiz.generation.jobs import generation_job_create, generation_run, jobs_requeue_stale
from quiz.generation.model_client import ModelClient
from quiz.models import GenerationJob, GenerationStatus, Question, Round
from quiz.pages.host_rounds import host_round_save
from quiz.selectors import generation_snapshot
from tests.factories import SAMPLE, PlayerFactory, RoomFactory, RoundFactory
from tests.fakes.writer_server import Turn, good_question
from tests.quiz.generation import dropping


def _run_in_background(job_id: int) -> threading.Thread:
    runner = threading.Thread(target=generation_run, kwargs={"job_id": job_id}, daemon=True)
    runner.start()
    return runner


async def _wait_for_ready(job_id: int, count: int, timeout: float = 15) -> GenerationJob:
    # Polled from the event loop: the job's own database calls share the thread a blocking wait would hold.
    def ready() -> GenerationJob | None:
        job = GenerationJob.objects.get(pk=job_id)
        return job if job.round_id and job.round.entries.count() >= count else None

    async with asyncio.timeout(timeout):
        while True:
            job = await database_sync_to_async(ready)()
            if job is not None:
                return job
            await asyncio.sleep(0.02)


def _open_room(round_id: int):
    return room_create(round_id=round_id, timer_seconds=10, option_seed="")


def _job(job_id: int) -> GenerationJob:
    return GenerationJob.objects.select_related("round").get(pk=job_id)


async def _question_frame(player, index: int) -> dict:
    return await player.until(
        lambda m: m["type"] == "state" and m["phase"] == "question" and m["question_index"] == index, timeout=30
    )


async def _play_question(host, player, index: int, question: dict | None = None) -> dict:
    """Question `index` shown (`question`: its frame, if already read), answered by the player, closed by the
    host, then its leaderboard."""
    # Up to the slow checks' 8 s and more: a question not ready yet is waited for.
    question = question or await _question_frame(player, index)
    await player.send(type="answer", question=index, option=0)
    await player.until(lambda m: m["type"] == "answered")
    await host.state(phase="reveal", question_index=index)
    await host.send(type="next", phase="reveal", index=index)
    await host.state(phase="leaderboard", question_index=index)
    return question


@pytest.mark.django_db(transaction=True)
async def test_the_first_question_is_played_while_later_ones_are_still_checked_and_a_dropped_one_is_never_shown(
    gate_on, sockets, host_socket, game_clock
):
    # Asked 3 (the writer asks 5): the 1st passes at once, the 2nd is dropped at once, the rest take 8 s each to
    # check, so the game has played its first question long before the round is complete.
    gate_on.script.probabilities = {"DROPME": 0.1}
    gate_on.script.latencies = {"question 3:": 8.0, "question 4:": 8.0, "question 5:": 8.0}
    gate_on.writer.make_question = dropping("0.2")
    job = await database_sync_to_async(generation_job_create)(owner_key="k", count=3, topic="Birds")
    runner = _run_in_background(job.pk)
    job = await _wait_for_ready(job.pk, 1)
    created = await database_sync_to_async(_open_room)(job.round_id)
    host = await host_socket(created)
    assert host.snapshot["writing"] is True and host.snapshot["question_count"] == 1
    player, _ = await sockets.join(created.room.code, "Ann")
    await host.send(type="start")

    first = await _play_question(host, player, 0)
    assert first["question"]["text"] == good_question(0, 1)["question"]
    during = await database_sync_to_async(_job)(job.pk)
    # Played and scored while the checker still had later questions: the round is still being written.
    assert during.status == GenerationStatus.RUNNING and during.round.writing
    assert during.checked < during.asked

    # Its next question is not ready: the host's screen says so and waits, and the clock moves it on once it is.
    await host.send(type="next", phase="leaderboard", index=0)
    waiting = await host.state(phase="leaderboard", question_index=0, waiting=True)
    assert waiting["question_count"] == 1
    second = await _question_frame(player, 1)
    assert second["question"]["text"] == good_question(0, 3)["question"]
    await _play_question(host, player, 1, second)
    await host.send(type="next", phase="leaderboard", index=1)
    await _play_question(host, player, 2)
    await host.send(type="next", phase="leaderboard", index=2)
    finished = await host.state(phase="finished")
    # All three asked for were played: no early end.
    assert finished["question_count"] == 3 and finished["end_note"] == ""
    await asyncio.to_thread(runner.join, 20)

    done = await database_sync_to_async(_job)(job.pk)
    assert done.status == GenerationStatus.DONE and not done.round.writing
    texts = [q.text for q in await database_sync_to_async(lambda: list(done.round.questions.order_by("entries")))()]
    assert texts == [good_question(0, i)["question"] for i in (1, 3, 4)]
    # Never more than asked for: the 5th passed too and is not in the round.
    assert good_question(0, 5)["question"] not in texts
    for frame in host.received + player.received:
        assert "DROPME" not in json.dumps(frame)


@pytest.mark.django_db(transaction=True)
async def test_a_writer_that_dies_half_way_ends_the_game_cleanly_with_the_questions_it_had(
    writer, sockets, host_socket, game_clock, monkeypatch, settings
):
    # The first attempt writes 2 of the 4 asked; the second dies once the game has started: the model's stream,
    # the writer's one way to its server, fails with an error nobody expects, after the first question is played.
    writer.writer.turns = [Turn(questions=[good_question(0, 1), good_question(0, 2)])]
    release = threading.Event()
    settings.QUIZ_WRITER_TIMEOUT = 30.0  # the second attempt waits for the release within its own deadline
    original = ModelClient.stream_text
    attempts = 0

    async def stream_text(self, messages, *, deadline):
        nonlocal attempts
        attempts += 1
        if attempts == 2:
            await asyncio.to_thread(release.wait, 20)
            raise RuntimeError("the writer died half way")
        async with contextlib.aclosing(original(self, messages, deadline=deadline)) as stream:
            async for text in stream:
                yield text

    monkeypatch.setattr(ModelClient, "stream_text", stream_text)
    job = await database_sync_to_async(generation_job_create)(owner_key="k", count=4, topic="Birds")
    runner = _run_in_background(job.pk)
    job = await _wait_for_ready(job.pk, 2)
    snapshot = await database_sync_to_async(lambda: generation_snapshot(_job(job.pk)))()
    assert snapshot["status"] == "running" and snapshot["ready"] == 2 and snapshot["play_url"]
    created = await database_sync_to_async(_open_room)(job.round_id)
    host = await host_socket(created)
    player, _ = await sockets.join(created.room.code, "Ann")
    await host.send(type="start")
    await _play_question(host, player, 0)

    release.set()
    await asyncio.to_thread(runner.join, 20)
    failed = await database_sync_to_async(_job)(job.pk)
    assert failed.status == GenerationStatus.FAILED and not failed.round.writing

    await host.send(type="next", phase="leaderboard", index=0)
    await _play_question(host, player, 1)
    await host.send(type="next", phase="leaderboard", index=1)
    finished = await host.state(phase="finished")
    # Ended after its two questions, saying why.
    assert finished["question_count"] == 2 and finished["end_note"] == "short"
    assert not [m for m in host.received + player.received if m["type"] == "error"]


@pytest.mark.django_db
def test_a_leaderboard_waits_for_the_next_question_no_longer_than_the_bound(settings):
    settings.ROOM_WRITING_WAIT_SECONDS = 60
    round_ = RoundFactory()
    Round.objects.filter(pk=round_.pk).update(writing=True, expected_count=8)
    created = room_create(round_id=round_.pk, timer_seconds=10, option_seed="")
    room = created.room
    PlayerFactory(room=room)
    total = room.question_count
    Room.objects.filter(pk=room.pk).update(phase=Phase.LEADERBOARD, question_index=total - 1)
    assert game_act(room_id=room.pk, action=Action.NEXT)
    room.refresh_from_db()
    assert (room.phase, room.waiting_since is not None) == (Phase.LEADERBOARD, True)
    # 59 s on, it still waits; 61 s on, the game ends with the questions it had, saying why.
    Room.objects.filter(pk=room.pk).update(waiting_since=timezone.now() - timedelta(seconds=59))
    assert writing_tick() == 0
    Room.objects.filter(pk=room.pk).update(waiting_since=timezone.now() - timedelta(seconds=61))
    assert writing_tick() == 1
    room.refresh_from_db()
    assert (room.phase, room.end_note, room.question_count) == (Phase.FINISHED, "timeout", total)


@pytest.mark.django_db
def test_a_room_on_a_finished_round_ends_as_before():
    room = RoomFactory(phase=Phase.LEADERBOARD)
    PlayerFactory(room=room)
    Room.objects.filter(pk=room.pk).update(question_index=room.question_count - 1)
    assert game_act(room_id=room.pk, action=Action.NEXT)
    room.refresh_from_db()
    assert (room.phase, room.end_note, room.written_live) == (Phase.FINISHED, "", False)


def test_a_leaderboard_with_more_coming_stays_instead_of_finishing():
    at = Position(Phase.LEADERBOARD, 2)
    assert machine.transition(at, Action.NEXT, total=3, more_coming=True) == at
    assert machine.transition(at, Action.NEXT, total=3) == Position(Phase.FINISHED, 2)
    assert machine.transition(at, Action.NEXT, total=4, more_coming=True) == Position(Phase.QUESTION, 3)


@pytest.mark.django_db(transaction=True)
def test_a_job_taken_over_after_its_worker_died_does_not_repeat_what_it_published(writer):
    job = generation_job_create(owner_key="k", count=4, topic="Birds")
    # The dead worker's run had published the first two questions the writer writes.
    round_ = RoundFactory(questions=[], title="Birds", provenance="model")
    for position, index in enumerate((1, 2)):
        data = good_question(0, index)
        question = Question.objects.create(
            text=data["question"], options=data["options"], correct_index=0, provenance="model"
        )
        round_.entries.create(question=question, position=position)
    Round.objects.filter(pk=round_.pk).update(writing=True, expected_count=4)
    GenerationJob.objects.filter(pk=job.pk).update(
        status=GenerationStatus.RUNNING, round=round_, updated_at=timezone.now() - timedelta(hours=1)
    )
    assert jobs_requeue_stale() == [job.pk]
    generation_run(job_id=job.pk)
    job.refresh_from_db()
    assert job.status == GenerationStatus.DONE, job.message
    texts = list(job.round.questions.order_by("entries").values_list("text", flat=True))
    assert len(texts) == 4 and len(set(texts)) == 4
    assert texts[:2] == [good_question(0, 1)["question"], good_question(0, 2)["question"]]
    assert not job.round.writing
    # The new run was told what was already there.
    assert good_question(0, 1)["question"] in writer.user_prompt(0)


@pytest.mark.django_db
def test_the_generate_page_offers_the_room_once_the_first_question_is_ready(writer, client):
    session = client.session
    session["owner_key"] = "host-key"
    session.save()
    job = generation_job_create(owner_key="host-key", count=5, topic="Birds")
    page = client.get(reverse("quiz:generate_detail", args=[job.pk])).content.decode()
    assert re.search(r'data-show="ready"\s+hidden', page)
    round_ = RoundFactory(questions=[], title="Birds", provenance="model")
    data = good_question(0, 1)
    question = Question.objects.create(
        text=data["question"], options=data["options"], correct_index=0, provenance="model"
    )
    round_.entries.create(question=question, position=0)
    Round.objects.filter(pk=round_.pk).update(writing=True, expected_count=5)
    GenerationJob.objects.filter(pk=job.pk).update(status=GenerationStatus.RUNNING, round=round_)
    page = client.get(reverse("quiz:generate_detail", args=[job.pk])).content.decode()
    assert not re.search(r'data-show="ready"\s+hidden', page)
    assert "1 question ready to play" in page
    assert f'id="open-room" href="/?round={round_.pk}"' in page and "Open the room now" in page
    # The round's questions are listed once it is finished, not while it is still being written.
    assert "Play this round" not in page


@pytest.mark.django_db
def test_a_round_still_being_written_cannot_be_edited_until_it_is_finished():
    round_ = RoundFactory(owner_key="host-key")
    Round.objects.filter(pk=round_.pk).update(writing=True, expected_count=5)
    before = list(round_.entries.values_list("question_id", flat=True))
    with pytest.raises(QuizError, match="still being written"):
        host_round_save(owner_key="host-key", round_id=round_.pk, title="Mine", questions=[SAMPLE[0]])
    assert list(round_.entries.values_list("question_id", flat=True)) == before


@pytest.mark.django_db(transaction=True)
def test_a_fresh_job_writes_the_whole_round_whatever_questions_wait_outside_rounds(writer):
    # A question in no round (one the gate dropped, kept for review) is not a question this job published.
    data = good_question(9, 9)
    Question.objects.create(text=data["question"], options=data["options"], correct_index=0, provenance="model")
    job = generation_job_create(owner_key="k", count=3, topic="Birds")
    generation_run(job_id=job.pk)
    job.refresh_from_db()
    assert job.round.entries.count() == 3 and writer.asked() == [3]
    assert data["question"] not in writer.user_prompt(0)


@pytest.mark.django_db(transaction=True)
async def test_a_writer_whose_server_fails_mid_round_ends_the_wait_well_under_the_attempts_deadline(
    writer, sockets, host_socket, game_clock, monkeypatch, settings
):
    # The old wait: a failing server was retried for the attempt's whole deadline (and the room waited as long).
    settings.QUIZ_WRITER_TIMEOUT = settings.ROOM_WRITING_WAIT_SECONDS = old_wait = 60.0
    settings.QUIZ_WRITER_JOB_BUDGET = 180.0
    # The first attempt writes 3 of the 6 asked; then the model server answers 500 to every request, from the
    # moment the game waits at its third leaderboard.
    writer.writer.turns = [Turn(questions=[good_question(0, i) for i in (1, 2, 3)])]
    writer.writer.default = Turn(status=500)
    release = threading.Event()
    original = ModelClient.stream_text
    calls = 0

    # The model's stream (the writer's one way to its server) holds its second call until the game waits.
    async def stream_text(self, messages, *, deadline):
        nonlocal calls
        calls += 1
        if calls == 2:
            await asyncio.to_thread(release.wait, 30)
        async with contextlib.aclosing(original(self, messages, deadline=deadline)) as stream:
            async for text in stream:
                yield text

    monkeypatch.setattr(ModelClient, "stream_text", stream_text)
    job = await database_sync_to_async(generation_job_create)(owner_key="k", count=6, topic="Birds")
    runner = _run_in_background(job.pk)
    job = await _wait_for_ready(job.pk, 3)
    created = await database_sync_to_async(_open_room)(job.round_id)
    host = await host_socket(created)
    player, _ = await sockets.join(created.room.code, "Ann")
    await host.send(type="start")
    first = await _question_frame(player, 0)
    # The phone counts the questions planned, not those ready so far.
    assert (first["question_count"], first["planned_count"]) == (3, 6)
    await _play_question(host, player, 0, first)
    for index in (1, 2):
        await host.send(type="next", phase="leaderboard", index=index - 1)
        await _play_question(host, player, index)
    await host.send(type="next", phase="leaderboard", index=2)
    await host.state(phase="leaderboard", question_index=2, waiting=True)

    loop = asyncio.get_running_loop()
    failing_from = loop.time()
    release.set()
    finished = await host.until(lambda m: m["type"] == "state" and m["phase"] == "finished", timeout=old_wait)
    waited = loop.time() - failing_from
    assert waited < old_wait / 6, f"the game waited {waited:.1f} s for a failing writer"
    assert finished["question_count"] == 3 and finished["end_note"] == "short"
    # The phone is told too: its frame carries why the game ended early.
    phone = await player.until(lambda m: m["type"] == "state" and m["phase"] == "finished")
    assert phone["end_note"] == "short" and phone["planned_count"] == 3
    await asyncio.to_thread(runner.join, 20)
    done = await database_sync_to_async(_job)(job.pk)
    assert not done.round.writing and "kept failing (500)" in done.message


@pytest.mark.django_db(transaction=True)
def test_a_job_taken_over_counts_on_from_the_dead_runs_progress_and_says_a_worker_was_lost(writer, client, monkeypatch):
    job = generation_job_create(owner_key="host-key", count=6, topic="Birds")
    # The dead worker's run had asked for 9, written and checked 1 and published it, in its first attempt.
    round_ = RoundFactory(questions=[], title="Birds", provenance="model")
    data = good_question(0, 1)
    question = Question.objects.create(
        text=data["question"], options=data["options"], correct_index=0, provenance="model"
    )
    round_.entries.create(question=question, position=0)
    Round.objects.filter(pk=round_.pk).update(writing=True, expected_count=6)
    GenerationJob.objects.filter(pk=job.pk).update(
        status=GenerationStatus.RUNNING,
        round=round_,
        asked=9,
        written=1,
        checked=1,
        attempt=1,
        updated_at=timezone.now() - timedelta(hours=1),
    )
    stored = []
    save = jobs._job_progress_save

    def recorded(*, job_id, progress):
        stored.append((progress.written, progress.asked))
        return save(job_id=job_id, progress=progress)

    monkeypatch.setattr(jobs, "_job_progress_save", recorded)
    assert jobs_requeue_stale() == [job.pk]
    generation_run(job_id=job.pk)
    job.refresh_from_db()
    assert job.status == GenerationStatus.DONE, job.message
    # The host's page never counts backwards: the new run counts on from what the dead one had.
    written, asked = [w for w, _ in stored], [a for _, a in stored]
    assert written[0] >= 1 and asked[0] >= 9
    assert written == sorted(written) and asked == sorted(asked)
    assert job.written >= 6 and job.asked >= 9 + 5
    assert generation_snapshot(job)["takeovers"] == 1
    session = client.session
    session["owner_key"] = "host-key"
    session.save()
    page = client.get(reverse("quiz:generate_detail", args=[job.pk])).content.decode()
    assert "A worker was lost while writing this round; another took over" in page
