"""Starting model-written rounds is limited per network, per session and site-wide; a refusal says when."""

import threading
from datetime import timedelta

import pytest
from django.db import close_old_connections
from django.urls import reverse
from django.utils import timezone

from quiz.generation.jobs import generation_job_create
from quiz.generation.limits import GenerationLimited, generation_limits_check
from quiz.models import GenerationJob, GenerationStatus


@pytest.fixture
def configured(settings):
    settings.OPENAI_API_KEY = "test-key"
    settings.OPENAI_BASE_URL = "http://127.0.0.1:9/v1"
    settings.QUIZ_WRITER_MODEL = "writer-2025-01-01"
    settings.VERIFIER_BACKEND = "off"
    settings.QUIZ_JOB_STALE_SECONDS = 30


def start(owner: str, network: str = "192.0.2.1") -> GenerationJob:
    return generation_job_create(owner_key=owner, client_network=network, count=5, topic="Birds")


def finish(*jobs: GenerationJob) -> None:
    GenerationJob.objects.filter(pk__in=[job.pk for job in jobs]).update(status=GenerationStatus.DONE)


def started_ago(job: GenerationJob, **ago) -> None:
    GenerationJob.objects.filter(pk=job.pk).update(created_at=timezone.now() - timedelta(**ago))


def refusal(owner: str, network: str = "192.0.2.1") -> GenerationLimited:
    with pytest.raises(GenerationLimited) as caught:
        start(owner, network)
    return caught.value


@pytest.mark.django_db
def test_one_round_at_a_time_per_session_and_the_next_once_it_finished(configured):
    first = start("host-a")
    refused = refusal("host-a")
    assert str(refused) == "A round is already being written in this browser; try again when it has finished."
    assert refused.retry_after == 30
    GenerationJob.objects.filter(pk=first.pk).update(status=GenerationStatus.RUNNING)
    assert "already being written in this browser" in str(refusal("host-a"))
    finish(first)
    assert start("host-a").pk != first.pk
    assert GenerationJob.objects.count() == 2


@pytest.mark.django_db
def test_two_rounds_at_a_time_per_network_whatever_the_sessions(configured):
    start("host-a")
    start("host-b")
    assert str(refusal("host-c")) == (
        "2 rounds are already being written from this network; try again when one has finished."
    )
    start("host-c", network="198.51.100.7")  # another network is not held up


@pytest.mark.django_db
def test_a_lost_job_does_not_hold_a_slot_for_good(configured):
    running = start("host-a")
    queued = start("host-b")
    GenerationJob.objects.filter(pk=running.pk).update(
        status=GenerationStatus.RUNNING, updated_at=timezone.now() - timedelta(seconds=31)
    )  # its worker died: no heartbeat for longer than QUIZ_JOB_STALE_SECONDS
    started_ago(queued, minutes=11)  # queued, never taken by a worker
    start("host-a")
    start("host-b")


@pytest.mark.django_db
def test_twenty_an_hour_per_network_and_the_refusal_says_when(configured):
    jobs = []
    for number in range(20):
        jobs.append(start(f"host-{number}"))
        finish(jobs[-1])
    started_ago(jobs[0], minutes=48)
    refused = refusal("host-new")
    assert str(refused) == "You have started 20 rounds in the last hour from this network; try again in 12 minutes."
    assert 11 * 60 < refused.retry_after <= 12 * 60
    finish(start("host-new", network="198.51.100.7"))  # another network is not held up
    started_ago(jobs[0], minutes=61)
    start("host-new")


@pytest.mark.django_db
def test_ten_an_hour_per_session_from_any_network(configured):
    jobs = []
    for number in range(10):
        jobs.append(start("host-a", network=f"192.0.2.{number}"))
        finish(jobs[-1])
    started_ago(jobs[0], minutes=59, seconds=30)
    refused = refusal("host-a", network="203.0.113.9")
    assert str(refused) == "You have started 10 rounds in the last hour in this browser; try again in 30 seconds."
    start("host-b", network="203.0.113.9")


@pytest.mark.django_db
def test_the_site_wide_daily_cap(configured, settings):
    settings.QUIZ_GENERATION_PER_DAY = 3
    jobs = [start(f"host-{n}", network=f"192.0.2.{n}") for n in range(3)]
    finish(*jobs)
    started_ago(jobs[0], hours=20)
    refused = refusal("host-new", network="203.0.113.9")
    assert str(refused) == ("This site has started 3 rounds today, as many as it allows a day; try again in 4 hours.")
    settings.QUIZ_GENERATION_PER_DAY = 0  # 0: no cap
    start("host-new", network="203.0.113.9")


@pytest.mark.django_db
def test_when_several_limits_apply_the_refusal_names_the_longest_wait(configured, settings):
    settings.QUIZ_GENERATION_PER_HOUR_PER_SESSION = 1
    first = start("host-a")  # still running, and the session's one of the hour
    refused = refusal("host-a")
    assert "in the last hour in this browser; try again in 60 minutes" in str(refused)
    finish(first)
    generation_limits_check(client_network="192.0.2.1", owner_key="host-b")  # other sessions are fine


@pytest.mark.django_db(transaction=True)
def test_racing_requests_never_start_more_than_the_limit(configured):
    # Eight sessions on one network ask at the same moment: exactly two are admitted.
    barrier = threading.Barrier(8)
    outcomes: list[str] = []

    def ask(number: int) -> None:
        barrier.wait()
        try:
            start(f"host-{number}")
            outcomes.append("started")
        except GenerationLimited:
            outcomes.append("refused")
        finally:
            close_old_connections()

    threads = [threading.Thread(target=ask, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert sorted(outcomes) == ["refused"] * 6 + ["started"] * 2
    assert GenerationJob.objects.count() == 2


@pytest.mark.django_db
def test_the_page_refuses_with_429_retry_after_and_the_reason(client, configured, settings):
    settings.QUIZ_GENERATION_PER_HOUR_PER_IP = 1
    form = {"topic": "Birds", "count": 5, "difficulty": "easy", "language": "en"}
    assert client.post(reverse("quiz:generate_new"), form, REMOTE_ADDR="2001:db8:1:2::10").status_code == 302
    finish(GenerationJob.objects.get())
    # Another browser at another address of the same IPv6 /64.
    other = client.__class__()
    response = other.post(reverse("quiz:generate_new"), form, REMOTE_ADDR="2001:db8:1:2:ffff::1")
    assert response.status_code == 429
    assert 59 * 60 < int(response["Retry-After"]) <= 3600
    page = response.content.decode()
    assert "You have started 1 round in the last hour from this network; try again in 60 minutes." in page
    assert 'name="topic"' in page and 'value="Birds"' in page  # the form is kept, ready to send again
    assert GenerationJob.objects.count() == 1
    assert GenerationJob.objects.get().client_network == "2001:db8:1:2::/64"


@pytest.mark.django_db
def test_retry_is_limited_too(client, configured):
    form = {"topic": "Birds", "count": 5, "difficulty": "easy", "language": "en"}
    client.post(reverse("quiz:generate_new"), form)
    failed = GenerationJob.objects.get()
    GenerationJob.objects.filter(pk=failed.pk).update(status=GenerationStatus.FAILED)
    assert client.post(reverse("quiz:generate_retry", args=[failed.pk])).status_code == 302
    # The retry is running now; retrying the failed one again would be a second round at once.
    response = client.post(reverse("quiz:generate_retry", args=[failed.pk]))
    assert response.status_code == 429 and response["Retry-After"] == "30"
    assert "A round is already being written in this browser" in response.content.decode()
    assert GenerationJob.objects.count() == 2
