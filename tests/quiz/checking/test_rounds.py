"""Check my questions: a host's imported round sent through the gate from the editor's button, against a scripted
checker on loopback; what the editor and the round's label then say; the checker down; an edit clears a verdict."""

import re

import pytest
from django.test import Client
from django.utils import translation

from lobby.services import room_create
from quiz.generation.runner import job_run
from quiz.importing import CSV_COLUMNS
from quiz.models import CheckStatus, GenerationJob, GenerationStatus, JobKind, Round
from quiz.packs import pack_load_all
from tests.quiz.test_views import editor_data
from verifier.models import Verdict

pytestmark = pytest.mark.django_db(transaction=True)

HEADER = ",".join(CSV_COLUMNS)
# Four questions; the second marks a wrong answer (Sydney), which the scripted checker doubts.
ROUND_CSV = "\n".join(
    [
        HEADER,
        "What colour is a ripe banana?,Yellow,Blue,Red,,,,A,,",
        "What is the capital of Australia?,Canberra,Sydney,Perth,,,,B,The capital is Sydney.,",
        "How many legs has a spider?,Six,Eight,Ten,,,,B,,",
        "Which planet is the largest?,Jupiter,Mars,Venus,,,,A,,",
    ]
)


# The blind question (which option is right, without the marked one), answered by content wherever the options
# are shown: the checker knows the capital of Australia is Canberra and a spider has eight legs; for the others it
# picks the marked answer (the right one).
BLIND_CHOICES = {
    "capital of Australia": {"Canberra": 0.9, "Sydney": 0.05, "Perth": 0.05},
    "spider": {"Eight": 0.9, "Six": 0.05, "Ten": 0.05},
}


def import_round(client: Client, text: str = ROUND_CSV) -> Round:
    response = client.post("/rounds/import/", {"text": text})
    assert response.status_code == 200
    page = response.content.decode()
    assert "Imported 4 questions" in page and "Check these questions" in page
    return Round.objects.get(owner_key=client.session["owner_key"])


def press_check(client: Client, round_: Round, started_jobs: list[int], *, count: int = 4) -> GenerationJob:
    response = client.post(f"/rounds/{round_.pk}/check/")
    assert response.status_code == 302
    job = GenerationJob.objects.get(pk=started_jobs[-1])
    assert response["Location"] == f"/rounds/generate/{job.pk}/"
    assert job.kind == JobKind.CHECK and job.round_id == round_.pk and job.count == count
    job_run(job_id=job.pk)
    job.refresh_from_db()
    return job


def verdict_blocks(page: str) -> list[str]:
    return re.findall(r'<div class="check-verdict" data-verdict="(\w+)">(.*?)</div>', page, re.S)


def test_the_wrong_answer_is_shown_doubtful_with_its_scores_and_the_others_passed(gate_on, client, started_jobs):
    gate_on.script.probabilities = {"capital of Australia": {"answer_correct": 0.12, "explanation_true": 0.2}}
    gate_on.script.choice_texts = BLIND_CHOICES
    round_ = import_round(client)
    job = press_check(client, round_, started_jobs)
    assert job.status == GenerationStatus.DONE, job.message
    assert (job.checked, job.dropped) == (4, 1)
    assert "doubtful" in job.message

    page = client.get(f"/rounds/{round_.pk}/edit/").content.decode()
    marks = verdict_blocks(page)
    assert [mark for mark, _ in marks] == ["passed", "doubtful", "passed", "passed"]
    doubtful = marks[1][1]
    verdict = Verdict.objects.get(question__text="What is the capital of Australia?")
    assert verdict.outcome == "dropped"
    assert verdict.probabilities["answer_correct"] == 0.12 and verdict.probabilities["explanation_true"] == 0.2
    # Its scores as the checker gave them (the blind checker picked Canberra: P(Sydney) is the score).
    assert f'score <strong data-field="score">{verdict.score:.2f}</strong>' in doubtful
    assert f"(threshold {verdict.threshold:.2f})" in doubtful
    for check, probability in verdict.probabilities.items():
        assert f"{check} {probability:.2f}" in doubtful
    assert "answer_correct 0.12" in doubtful and "explanation_true 0.20" in doubtful
    # ... and its reason.
    assert f"score {verdict.score:.2f} &lt; threshold {verdict.threshold:.2f}" in doubtful
    assert "the checker chose A. Canberra" in doubtful
    # Each question shows its blind score: the checker answered by content, never by the order shown.
    assert all(" · blind " in block for _, block in marks)
    # The host's question stays in the round; the label says what happened.
    round_.refresh_from_db()
    assert round_.entries.count() == 4
    assert round_.check_status == CheckStatus.DOUBTFUL_KEPT
    assert round_.check_label == "checked: 1 doubtful kept by the host"
    assert "checked: 1 doubtful kept by the host" in page
    # The check's own page lists the same verdicts.
    job_page = client.get(f"/rounds/generate/{job.pk}/").content.decode()
    assert [mark for mark, _ in verdict_blocks(job_page)] == ["passed", "doubtful", "passed", "passed"]
    # And the host screen of a game of it.
    created = room_create(round_id=round_.pk, timer_seconds=20)
    session = client.session
    session["host_tokens"] = {created.room.code: created.host_token}
    session.save()
    host_page = client.get(f"/host/{created.room.code}/").content.decode()
    assert "checked: 1 doubtful kept by the host" in host_page
    # The same round read by a German and a Spanish host: the label is in their words, not the checker's English.
    for language, label in (("de", "geprüft: 1 zweifelhafte vom Moderator behalten"),
                            ("es", "comprobada: 1 dudosa mantenida por el anfitrión")):  # fmt: skip
        for path in (f"/rounds/{round_.pk}/edit/", f"/host/{created.room.code}/", "/rounds/", "/"):
            translated = client.get(path, HTTP_ACCEPT_LANGUAGE=language).content.decode()
            assert label in translated, (language, path)
            assert "doubtful kept by the host" not in translated, (language, path)


@pytest.fixture
def judge_on(settings, writer):
    """The judge backend (one JSON report per question) on the scripted server's chat completions."""
    settings.VERIFIER_BACKEND = "judge"
    settings.VERIFIER_BASE_URL = f"{writer.url}/v1"
    settings.VERIFIER_API_KEY = "test-key"
    settings.VERIFIER_MODEL = "judge-7b-2025-03"
    settings.VERIFIER_TIMEOUT = 5.0
    settings.VERIFIER_CONCURRENCY = 4
    return writer


def test_the_judge_backend_checks_a_hosts_questions(judge_on, client, started_jobs):
    judge_on.script.probabilities = {"capital of Australia": {"answer_correct": 0.1, "explanation_true": 0.2}}
    judge_on.script.choice_texts = BLIND_CHOICES
    round_ = import_round(client)
    editor = client.get(f"/rounds/{round_.pk}/edit/").content.decode()
    assert 'id="check-questions"' in editor
    job = press_check(client, round_, started_jobs)
    assert job.status == GenerationStatus.DONE, job.message
    assert (job.checked, job.dropped) == (4, 1)
    marks = verdict_blocks(client.get(f"/rounds/{round_.pk}/edit/").content.decode())
    assert [mark for mark, _ in marks] == ["passed", "doubtful", "passed", "passed"]
    assert set(Verdict.objects.values_list("backend", flat=True)) == {"judge"}
    # One report per question reached the judge (and the blind questions besides).
    assert len(judge_on.check_requests("/v1/chat/completions")) == 4
    round_.refresh_from_db()
    assert round_.check_label == "checked: 1 doubtful kept by the host"


def test_with_the_checker_down_every_question_is_unverified_with_why_and_the_round_plays(
    gate_on, client, started_jobs, settings
):
    settings.VERIFIER_BASE_URL = "http://127.0.0.1:9"  # nothing listens there
    settings.VERIFIER_TIMEOUT = 1.0
    round_ = import_round(client)
    job = press_check(client, round_, started_jobs)
    assert job.status == GenerationStatus.DONE, job.message
    assert job.checked == 4 and job.dropped == 0
    marks = verdict_blocks(client.get(f"/rounds/{round_.pk}/edit/").content.decode())
    assert [mark for mark, _ in marks] == ["unverified"] * 4
    for _, block in marks:
        assert "could not be reached" in block or "unavailable" in block
    round_.refresh_from_db()
    assert round_.check_status == CheckStatus.UNVERIFIED
    # The label says why: no connection (not "too slow", not "rejected").
    assert round_.check_label == "checked: 4 not verified: checker unreachable"
    created = room_create(round_id=round_.pk, timer_seconds=20)
    assert created.room.question_count == 4


def test_editing_a_checked_question_clears_its_verdict(gate_on, client, started_jobs):
    gate_on.script.probabilities = {"capital of Australia": 0.1}
    gate_on.script.choice_texts = BLIND_CHOICES
    round_ = import_round(client)
    press_check(client, round_, started_jobs)
    # The host fixes the doubtful question (marks Canberra) and keeps the rest as they are.
    questions = [entry.question for entry in round_.entries.select_related("question")]
    blocks = []
    for question in questions:
        correct = 0 if "Australia" in question.text else question.correct_index
        blocks.append(
            {
                "text": question.text,
                **{f"option_{n}": option for n, option in enumerate(question.options)},
                "correct": str(correct),
                "explanation": "" if "Australia" in question.text else question.explanation,
            }
        )
    response = client.post(f"/rounds/{round_.pk}/edit/", editor_data(round_.title, blocks, initial=4))
    assert response.status_code == 302
    marks = verdict_blocks(client.get(f"/rounds/{round_.pk}/edit/").content.decode())
    # Three verdicts are still shown; the edited question has none.
    assert [mark for mark, _ in marks] == ["passed", "passed", "passed"]
    round_.refresh_from_db()
    assert round_.check_label == "checked: 1 not checked"


def test_the_button_needs_a_checker_and_the_round_of_the_session(writer, client, started_jobs):
    round_ = import_round_no_checker(client)
    response = client.post(f"/rounds/{round_.pk}/check/", follow=True)
    assert "No checker is configured" in response.content.decode()
    assert started_jobs == []
    other = Client()
    assert other.post(f"/rounds/{round_.pk}/check/").status_code == 404


def import_round_no_checker(client: Client) -> Round:
    response = client.post("/rounds/import/", {"text": ROUND_CSV})
    page = response.content.decode()
    # Without a checker the button is shown switched off, with why (not hidden, not live).
    assert re.search(r'<button[^>]*id="check-questions"[^>]*\bdisabled\b[^>]*>Check these questions<', page)
    assert "No checker is configured" in page
    return Round.objects.get(owner_key=client.session["owner_key"])


def test_staff_recheck_a_sample_pack(gate_on, client, started_jobs, django_user_model):
    pack = pack_load_all()[0]
    gate_on.script.default_probability = 0.99
    staff = django_user_model.objects.create_user("staff", password="pw", is_staff=True)
    assert client.post(f"/rounds/packs/{pack.pk}/check/").status_code == 302  # to the admin's sign-in
    assert started_jobs == []
    client.force_login(staff)
    assert "Sample packs (staff)" in client.get("/rounds/").content.decode()
    response = client.post(f"/rounds/packs/{pack.pk}/check/")
    job = GenerationJob.objects.get(pk=started_jobs[-1])
    assert response["Location"] == f"/rounds/generate/{job.pk}/"
    job_run(job_id=job.pk)
    job.refresh_from_db()
    assert job.status == GenerationStatus.DONE and job.checked == pack.questions.count()
    assert Verdict.objects.filter(question__pack=pack).count() == pack.questions.count()


def test_a_check_waits_for_the_last_one_and_does_not_spend_the_writers_limits(gate_on, client, started_jobs, settings):
    from quiz.generation.limits import generation_limits_check

    settings.QUIZ_GENERATION_RUNNING_PER_SESSION = 1
    settings.QUIZ_GENERATION_PER_HOUR_PER_SESSION = 1
    round_ = import_round(client)
    assert client.post(f"/rounds/{round_.pk}/check/").status_code == 302
    # Pressed again while it is queued: the same check, not a second one.
    assert client.post(f"/rounds/{round_.pk}/check/").status_code == 302
    assert len(set(started_jobs)) == 1 and GenerationJob.objects.count() == 1
    # Another round of the same browser waits for it.
    other = Round.objects.create(title="Other", provenance="host", owner_key=round_.owner_key)
    other.entries.create(question=round_.entries.first().question, position=0)
    page = client.post(f"/rounds/{other.pk}/check/", follow=True).content.decode()
    assert "Another round is being checked in this browser" in page
    # Writing a round is not held back by a check (the checker is not the writer's key).
    generation_limits_check(client_network="", owner_key=round_.owner_key)
    job_run(job_id=started_jobs[0])
    assert client.post(f"/rounds/{other.pk}/check/").status_code == 302
    assert len(set(started_jobs)) == 2


def test_a_cancelled_check_keeps_what_it_checked_and_the_label_says_so(gate_on, client, started_jobs, settings):
    import threading
    import time

    from quiz.generation.jobs import generation_cancel

    settings.VERIFIER_CONCURRENCY = 1
    gate_on.script.latency = 0.3
    # A check seals its round at once, so one call budget holds all of it: four questions of three calls each
    # (the checks, the blind question in two orders) one at a time is 3.6 s. Room for that, or the round would
    # end in round_budget fail-opens before the host's cancel is heard.
    settings.VERIFIER_TIMEOUT = 10.0
    gate_on.script.choice_texts = BLIND_CHOICES
    round_ = import_round(client)
    client.post(f"/rounds/{round_.pk}/check/")
    job_id = started_jobs[-1]
    runner = threading.Thread(target=job_run, kwargs={"job_id": job_id})
    runner.start()
    deadline = time.monotonic() + 10
    while GenerationJob.objects.get(pk=job_id).checked < 1 and time.monotonic() < deadline:
        time.sleep(0.02)
    generation_cancel(job_id=job_id, owner_key=client.session["owner_key"])
    runner.join(15)
    job = GenerationJob.objects.get(pk=job_id)
    assert job.status == GenerationStatus.CANCELLED
    round_.refresh_from_db()
    assert 1 <= job.checked < 4 and round_.entries.count() == 4
    assert round_.check_label == f"checked: {4 - job.checked} not checked"
    # What it kept are the checker's verdicts, not fail-opens at the end of the round's budget.
    kept = Verdict.objects.filter(question__in=round_.questions.all())
    assert kept.count() == job.checked and {verdict.outcome for verdict in kept} <= {"passed", "dropped"}


def test_the_check_label_counts_each_kind_in_the_readers_language():
    from django.utils import translation

    from quiz.check_labels import check_note

    assert check_note({}) == ""
    assert check_note({"total": 5, "doubtful": 0, "unverified": 0, "unchecked": 0}) == "checked: all 5 passed"
    mixed = {"total": 6, "doubtful": 2, "unverified": 1, "unchecked": 3}
    assert check_note(mixed) == "checked: 2 doubtful kept by the host, 1 unverified, 3 not checked"
    with translation.override("de"):
        assert check_note({"total": 5}) == "geprüft: alle 5 bestanden"
        assert (
            check_note(mixed) == "geprüft: 2 zweifelhafte vom Moderator behalten, 1 nicht verifiziert, 3 nicht geprüft"
        )
    with translation.override("es"):
        assert check_note({"total": 1}) == "comprobada: 1 aprobada"
        assert (
            check_note(mixed) == "comprobada: 2 dudosas mantenidas por el anfitrión, 1 sin verificar, 3 sin comprobar"
        )


# A checker's server that says another model answered than the one pinned.
MODEL_CHANGED_WORDS = {
    "en": "The checker's model changed (pinned <code>jev-1.13.0</code>, served <code>jev-1.14.0</code>)",
    "de": "Das Modell des Prüfers hat sich geändert (festgelegt <code>jev-1.13.0</code>, geliefert "
    "<code>jev-1.14.0</code>)",
    "es": "El modelo del verificador cambió (fijado <code>jev-1.13.0</code>, servido <code>jev-1.14.0</code>)",
}
QUEUE_WORDS = {
    "en": "the checker&#x27;s model changed (pinned jev-1.13.0, served jev-1.14.0)",
    "de": "das Modell des Prüfers hat sich geändert (festgelegt jev-1.13.0, geliefert jev-1.14.0)",
    "es": "el modelo del verificador cambió (fijado jev-1.13.0, servido jev-1.14.0)",
}


def test_a_checker_that_says_another_model_served_cannot_lower_the_bar_and_the_host_and_reviewer_are_told(
    gate_on, client, started_jobs, django_user_model
):
    from verifier.services import threshold_set

    threshold_set(backend="systemone", model_id="jev-1.13.0", value=0.95)
    threshold_set(backend="systemone", model_id="jev-1.14.0", value=0.5)
    gate_on.script.served_model = "jev-1.14.0"
    gate_on.script.default_probability = 0.9  # passes the served model's 0.5, not the pinned model's 0.95
    round_ = import_round(client)
    job = press_check(client, round_, started_jobs)
    assert job.status == GenerationStatus.DONE, job.message
    verdicts = list(Verdict.objects.filter(question__entries__round=round_))
    assert {(v.outcome, v.threshold, v.reason, v.model_id) for v in verdicts} == {
        ("dropped", 0.95, "model_changed", "jev-1.14.0")
    }
    # The host's editor and the check's own page say it, in the host's language.
    for language, words in MODEL_CHANGED_WORDS.items():
        for path in (f"/rounds/{round_.pk}/edit/", f"/rounds/generate/{job.pk}/"):
            marks = verdict_blocks(client.get(path, HTTP_ACCEPT_LANGUAGE=language).content.decode())
            assert [mark for mark, _ in marks] == ["doubtful"] * 4, (language, path)
            assert all(words in block for _, block in marks), (language, path)
    # Every question waits in the review queue, and the reviewer is told why.
    reviewer = django_user_model.objects.create_superuser("reviewer", "r@example.com", "pw-for-tests-only")
    staff = Client()
    staff.force_login(reviewer)
    question = verdicts[0].question
    try:
        for language, words in QUEUE_WORDS.items():
            listing = staff.get("/admin/review/reviewitem/", HTTP_ACCEPT_LANGUAGE=language).content.decode()
            assert listing.count(words) == 4, language
            page = staff.get(f"/admin/review/reviewitem/{question.pk}/change/", HTTP_ACCEPT_LANGUAGE=language)
            assert words in page.content.decode(), language
    finally:
        # A request leaves its language active in this thread; the next test's jobs speak the default again.
        translation.deactivate()


def test_a_hosts_check_says_what_it_cost(gate_on, client, started_jobs, settings):
    settings.MODEL_PRICES = "jev-1.13.0=0.042/0.5"
    gate_on.script.choice_texts = BLIND_CHOICES
    round_ = import_round(client)
    job = press_check(client, round_, started_jobs)
    assert job.status == GenerationStatus.DONE, job.message
    sent = gate_on.script.usage_sent
    for role, kind in (("checker", "check"), ("blind", "blind")):
        tokens = (
            sum(usage["input_tokens"] for k, usage in sent if k == kind),
            sum(usage["output_tokens"] for k, usage in sent if k == kind),
        )
        entry = job.cost["roles"][role]
        assert (entry["input_tokens"], entry["output_tokens"]) == tokens and tokens[0] > 0
        assert entry["amount"] == pytest.approx((tokens[0] * 0.042 + tokens[1] * 0.5) / 1e6)
    assert job.cost["roles"]["checker"]["calls"] == 4
    page = client.get(f"/rounds/generate/{job.pk}/").content.decode()
    assert f'id="round-cost">{job.cost_label}<' in page and job.cost_label.startswith("checked for $")
