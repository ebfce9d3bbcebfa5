"""What the host is told the checker did, on the pages a host sees (the generate page, the editor, the host screen,
the check's page, the exports): rejected by the checker, not checked, too slow, unreachable, its model changed; a
round shorter than asked; a slow checker's warning."""

import json

import pytest
from django.test import Client
from django.urls import reverse

from lobby.services import room_create
from quiz.checking.rounds import round_check_refresh
from quiz.generation.jobs import generation_run
from quiz.generation.writer_messages import MAX_MESSAGE, RoundFacts, short_message
from quiz.models import CheckStatus, GenerationJob, GenerationStatus, Round
from tests.fakes.writer_server import Turn
from tests.quiz.checking.test_rounds import import_round, press_check, verdict_blocks
from tests.quiz.generation import dropping
from verifier.models import Verdict

pytestmark = pytest.mark.django_db(transaction=True)

HANG = 60.0  # the scripted checker answers only after the client has given up


def host_screen(client: Client, round_: Round) -> str:
    created = room_create(round_id=round_.pk, timer_seconds=20)
    session = client.session
    session["host_tokens"] = {created.room.code: created.host_token}
    session.save()
    return client.get(f"/host/{created.room.code}/").content.decode()


def write_round(client: Client, count: int) -> GenerationJob:
    client.post(reverse("quiz:generate_new"), {"topic": "Solar System", "count": count, "difficulty": "easy",
                                               "language": "en"})  # fmt: skip
    job = GenerationJob.objects.get()
    generation_run(job_id=job.pk)
    job.refresh_from_db()
    assert job.status == GenerationStatus.DONE, job.message
    return job


def test_a_slow_checker_is_called_too_slow_everywhere_never_unreachable(gate_on, client, started_jobs, settings):
    settings.VERIFIER_TIMEOUT = 0.5
    settings.VERIFIER_BREAKER_FAILURES = 1000  # every question waits for the checker: no pause
    gate_on.script.latency = HANG
    round_ = import_round(client)
    job = press_check(client, round_, started_jobs)
    assert job.status == GenerationStatus.DONE
    assert job.message.startswith("4 could not be verified because the checker was too slow")
    editor = client.get(f"/rounds/{round_.pk}/edit/").content.decode()
    blocks = verdict_blocks(editor)
    assert [mark for mark, _ in blocks] == ["unverified"] * 4
    for _, block in blocks:
        assert 'data-cause="too_slow"' in block and "Not verified: checker too slow" in block
        assert "too slow" in block
        assert "could not be reached" not in block
        # A check writes nothing: its budget is not "after writing ended".
        assert "writing" not in block
    label = "checked: 4 not verified: checker too slow"
    assert label in editor
    job_page = client.get(f"/rounds/generate/{job.pk}/").content.decode()
    assert label in job_page and "could not be reached" not in job_page and "writing ended" not in job_page
    assert label in host_screen(client, round_)
    verdict = Verdict.objects.filter(question__entries__round=round_).first()
    assert "from the start of the check" in verdict.message or verdict.reason == "timeout"
    exported = json.loads(client.get(f"/rounds/{round_.pk}/export.json").content)
    assert {question["audit"]["checks"][-1]["checker_did"] for question in exported["questions"]} == {"too_slow"}
    assert exported["round"]["check_label"] == label
    # In German and Spanish, in their words.
    for language, words in (("de", "Prüfer zu langsam"), ("es", "verificador demasiado lento")):
        page = client.get(f"/rounds/{round_.pk}/edit/", HTTP_ACCEPT_LANGUAGE=language).content.decode()
        assert words in page, language
        assert "checker too slow" not in page, language


def test_a_round_the_checker_rejected_entirely_says_rejected_not_unverified(gate_on, client, started_jobs):
    gate_on.script.probabilities = {"DROPME": 0.1}
    gate_on.writer.make_question = dropping("all")
    job = write_round(client, 3)
    assert job.round.check_status == CheckStatus.REJECTED
    page = client.get(reverse("quiz:generate_detail", args=[job.pk])).content.decode()
    assert "checked: all 3 questions were rejected by the checker" in page
    assert page.count('class="check-badge" data-status="rejected">Rejected by the checker<') == 3
    assert "Could not be verified" not in page and ">Unverified<" not in page
    assert "The checker rejected all 15 questions the model wrote" in page
    host = host_screen(client, job.round)
    assert "checked: all 3 questions were rejected by the checker" in host and "Could not be verified" not in host
    de = client.get(reverse("quiz:generate_detail", args=[job.pk]), HTTP_ACCEPT_LANGUAGE="de").content.decode()
    assert "Rejected by the checker" not in de and "checked: all 3" not in de


def test_a_short_round_says_how_many_it_holds_and_its_header_counts_them(gate_on, client, started_jobs, settings):
    settings.QUIZ_MAX_ATTEMPTS = 1
    gate_on.script.probabilities = {"DROPME": 0.1}
    # 15 asked for 10; 8 of them rejected: 7 usable.
    gate_on.writer.make_question = dropping(*(f"{request}.{index}" for request in (0, 1) for index in range(9)))
    job = write_round(client, 10)
    assert job.round.entries.count() == 7
    page = client.get(reverse("quiz:generate_detail", args=[job.pk])).content.decode()
    assert "this round has 7 of the 10 you asked for" in page
    header = page.split('data-field="held">', 1)[1].split("</span>", 1)[0]
    assert header == "7 questions of the 10 asked"
    assert "checked: all 7 passed" in page


def test_a_long_message_still_ends_with_how_many_the_round_holds():
    facts = RoundFacts(count=10, played=7, invalid_reasons=[f"reason {n} " + "x" * 200 for n in range(5)])
    message = short_message(facts)
    assert len(message) <= MAX_MESSAGE
    assert message.endswith("This round has 7 usable questions of the 10 you asked for.")


def test_a_changed_model_is_said_as_such(gate_on, client, started_jobs):
    round_ = import_round(client)
    question = round_.entries.first().question
    Verdict.objects.create(
        question=question,
        backend="systemone",
        model_id="jev-2.0.0",
        requested_model_id="jev-1.13.0",
        threshold=0.6,
        outcome="unverified",
        reason="model_changed",
        message="the server serves jev-2.0.0, not jev-1.13.0",
    )
    round_check_refresh(round_=round_)
    editor = client.get(f"/rounds/{round_.pk}/edit/").content.decode()
    assert "Not verified: the checker&#x27;s model changed" in editor
    assert "checked: 1 not verified: the checker&#x27;s model changed, 3 not checked" in editor
    exported = json.loads(client.get(f"/rounds/{round_.pk}/export.json").content)
    assert exported["questions"][0]["audit"]["checks"][-1]["checker_did"] == "model_changed"


def slow_verdicts(round_: Round, count: int, *, reason: str = "timeout") -> None:
    for entry in round_.entries.select_related("question")[:count]:
        Verdict.objects.create(
            question=entry.question,
            backend="systemone",
            model_id="jev-1.13.0",
            requested_model_id="jev-1.13.0",
            threshold=0.6,
            outcome="unverified",
            reason=reason,
            latency_ms=2000,
        )


def test_the_generate_page_and_the_admin_warn_when_most_checks_timed_out(gate_on, client, started_jobs, settings,
                                                                      django_user_model):  # fmt: skip
    settings.VERIFIER_TIMEOUT = 2.0
    round_ = import_round(client)
    slow_verdicts(round_, 4)
    # Four checks are too few to judge by.
    assert "slow-checker" not in client.get(reverse("quiz:generate_new")).content.decode()
    slow_verdicts(round_, 2, reason="")  # two that answered
    slow_verdicts(round_, 3)
    page = client.get(reverse("quiz:generate_new")).content.decode()
    assert "7 of its last 9 checks ran out of time (VERIFIER_TIMEOUT is 2 s)" in page
    assert "VERIFIER_TIMEOUT" in page
    staff = django_user_model.objects.create_superuser("reviewer", "r@example.com", "pw-for-tests-only")
    admin = Client()
    admin.force_login(staff)
    for path in ("/admin/verifier/threshold/", "/admin/verifier/threshold/breaker/", "/admin/review/checkerevalrun/"):
        text = admin.get(path).content.decode()
        assert "7 of the last 9 checks by systemone jev-1.13.0 ran out of time (VERIFIER_TIMEOUT is 2 s)" in text, path
        assert "Raise VERIFIER_TIMEOUT" in text
    # The review queue says what the checker did with each question, as the host is told.
    queue = admin.get("/admin/review/reviewitem/").content.decode()
    assert "unverified (not verified: checker too slow)" in queue


def test_a_short_round_the_checker_rejected_entirely_says_both(gate_on, client, started_jobs, settings):
    settings.QUIZ_MAX_ATTEMPTS = 1
    gate_on.script.probabilities = {"DROPME": 0.1}
    questions = [dropping("all")(0, index) for index in range(1, 8)]
    gate_on.writer.turns = [Turn(questions=questions)]
    job = write_round(client, 10)
    assert job.round.entries.count() == 7 and job.round.check_status == CheckStatus.REJECTED
    page = client.get(reverse("quiz:generate_detail", args=[job.pk])).content.decode()
    assert "The checker rejected all 7 questions the model wrote" in page
    assert "This round has 7 usable questions of the 10 you asked for." in page
    assert page.split('data-field="held">', 1)[1].split("</span>", 1)[0] == "7 questions of the 10 asked"
    assert "checked: all 7 questions were rejected by the checker" in page


def test_a_steadily_slow_checker_is_still_called_too_slow_once_the_breaker_pauses_it(
    gate_on, client, started_jobs, settings
):
    settings.VERIFIER_TIMEOUT = 0.5
    settings.VERIFIER_BREAKER_FAILURES = 2  # two calls out of time in a row pause the checker
    gate_on.script.latency = HANG
    job = write_round(client, 6)
    reasons = list(Verdict.objects.values_list("reason", flat=True))
    # Some were paused without a call: the breaker opened on the timeouts.
    assert "timeout" in reasons and len(set(reasons)) > 1, reasons
    page = client.get(reverse("quiz:generate_detail", args=[job.pk])).content.decode()
    assert "checked: 6 not verified: checker too slow" in page
    assert "paused" not in page and "unreachable" not in page
    # Counted in the slow-checker warning: every one of them (the paused ones too) was the checker being slow.
    assert f"The checker has been too slow: {len(reasons)} of its last {len(reasons)} checks ran out of time" in page
    editor = client.get(f"/rounds/{job.round_id}/edit/").content.decode()
    assert [block.count('data-cause="too_slow"') for _, block in verdict_blocks(editor)] == [1] * 6
