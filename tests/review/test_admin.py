"""The review queue, its actions and the sweep page, through Django's test client."""

import re
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from quiz.models import Provenance, Question
from quiz.services import question_create, round_create
from quiz.validation import QuestionData
from review.models import Flag, Review
from review.services import flag_record, review_label
from tests.factories import QuestionFactory
from verifier.gate import GateDecision
from verifier.models import Threshold, Verdict
from verifier.services import verdict_record

pytestmark = pytest.mark.django_db

QUEUE = "/admin/review/reviewitem/"
SWEEP = "/admin/verifier/threshold/sweep/"


def decision(
    *,
    score: float | None = 0.42,
    outcome: str = "dropped",
    backend: str = "systemone",
    model_id: str = "jev-1.13.0",
    threshold: float = 0.6,
) -> GateDecision:
    probabilities = {} if score is None else {"answer_correct": score, "explanation_true": 0.97}
    return GateDecision(
        key="q",
        outcome=outcome,
        score=score,
        threshold=threshold,
        probabilities=probabilities,
        reason="below_threshold" if outcome == "dropped" else ("timeout" if outcome == "unverified" else ""),
        latency_ms=12,
        backend=backend,
        model_id=model_id,
    )


def make_question(text: str, *, options=("Paris", "Lyon", "Nice"), correct=0, model_id="writer-1") -> Question:
    return QuestionFactory(text=text, options=options, correct_index=correct, written=True, model_id=model_id)


@pytest.fixture
def staff(db):
    return get_user_model().objects.create_superuser("reviewer", "r@example.com", "pw-for-tests-only")


@pytest.fixture
def staff_client(staff) -> Client:
    client = Client()
    client.force_login(staff)
    return client


@pytest.fixture
def queue():
    """dropped, unverified, reported, crowd-flagged, and one passed question that is not in the queue."""
    dropped = make_question("Capital of France, dropped?")
    verdict_record(question_id=dropped.pk, decision=decision(score=0.42))
    unverified = make_question("Capital of France, unverified?")
    verdict_record(question_id=unverified.pk, decision=decision(score=None, outcome="unverified"))
    passed = make_question("Capital of France, passed?")
    verdict_record(question_id=passed.pk, decision=decision(score=0.9, outcome="passed"))
    reported = make_question("Capital of France, reported?")
    verdict_record(
        question_id=reported.pk,
        decision=decision(score=0.8, outcome="passed", backend="llm", model_id="checker-8b-2025-01"),
    )
    flag_record(
        question_id=reported.pk,
        kind="reported",
        room_code="ROOMAA",
        detail={"player": "Ada", "text": "<script>alert(1)</script> Lyon is the capital", "question_index": 0},
    )
    crowd = make_question("Capital of France, crowd?")
    flag_record(
        question_id=crowd.pk,
        kind="crowd",
        room_code="ROOMBB",
        detail={"answers": 5, "option": 1, "share": 0.8, "distribution": [1, 4, 0], "marked": 0},
    )
    return {"dropped": dropped, "unverified": unverified, "passed": passed, "reported": reported, "crowd": crowd}


def listed_ids(response) -> list[int]:
    return [int(pk) for pk in re.findall(r'name="_selected_action" value="(\d+)"', response.content.decode())]


def test_staff_sees_the_queue_newest_signal_first(staff_client, queue):
    response = staff_client.get(QUEUE)
    assert response.status_code == 200
    ids = listed_ids(response)
    assert set(ids) == {queue[k].pk for k in ("dropped", "unverified", "reported", "crowd")}
    assert queue["passed"].pk not in ids
    # The two flags are the newest signals; crowd was flagged last.
    assert ids[:2] == [queue["crowd"].pk, queue["reported"].pk]
    body = response.content.decode()
    assert "0.42 / 0.60" in body and "Threshold sweep" in body


@pytest.mark.parametrize(
    "query, expected",
    [
        ("outcome=dropped", {"dropped"}),
        ("outcome=unverified", {"unverified"}),
        ("checker=llm|checker-8b-2025-01", {"reported"}),
        ("reported=yes", {"reported"}),
        ("crowd=yes", {"crowd"}),
        ("crowd=no", {"dropped", "unverified", "reported"}),
        ("room=ROOMBB", {"crowd"}),
        ("label=any", {"dropped"}),
        ("label=none", {"unverified", "reported", "crowd"}),
        ("label=defective", {"dropped"}),
    ],
)
def test_queue_filters(staff_client, queue, staff, query, expected):
    review_label(question=queue["dropped"], label="defective", reviewer=staff)
    response = staff_client.get(f"{QUEUE}?{query}")
    assert response.status_code == 200
    assert set(listed_ids(response)) == {queue[k].pk for k in expected}


def test_date_filter(staff_client, queue):
    Question.objects.filter(pk=queue["dropped"].pk).update(created_at=timezone.now() - timedelta(days=40))
    since = (timezone.now() - timedelta(days=7)).date().isoformat()
    response = staff_client.get(f"{QUEUE}?created_at__gte={since}")
    assert queue["dropped"].pk not in listed_ids(response)
    assert queue["crowd"].pk in listed_ids(response)


def test_the_question_page_shows_the_evidence_escaped(staff_client, queue):
    response = staff_client.get(f"{QUEUE}{queue['reported'].pk}/change/")
    body = response.content.decode()
    assert response.status_code == 200
    assert "Paris ✓ (marked correct)" in body
    assert "About Capital of France, reported?" in body  # the explanation
    assert "writer-1" in body  # provenance: the model that wrote it
    assert "answer_correct 0.800" in body and "explanation_true 0.970" in body
    assert "llm checker-8b-2025-01" in body
    assert "&lt;script&gt;alert(1)&lt;/script&gt; Lyon is the capital" in body and "<script>alert(1)" not in body
    assert "Label defective" in body and "Fix and approve" in body
    crowd = staff_client.get(f"{QUEUE}{queue['crowd'].pk}/change/").content.decode()
    assert "B. Lyon" in crowd and "80%" in crowd


def test_label_one_question_records_who_and_when(staff_client, staff, queue):
    url = reverse("admin:review_reviewitem_label", args=[queue["crowd"].pk])
    page = staff_client.get(f"{url}?label=defective")
    assert page.status_code == 200 and "Label defective" in page.content.decode()
    before = timezone.now()
    response = staff_client.post(url, {"label": "defective", "note": "Lyon is not the capital  either"})
    assert response.status_code == 302
    review = Review.objects.get(question=queue["crowd"])
    assert (review.label, review.reviewer, review.note) == ("defective", staff, "Lyon is not the capital either")
    assert review.created_at >= before
    # A later label counts; the earlier one is kept.
    staff_client.post(url, {"label": "correct", "note": ""})
    assert list(Review.objects.filter(question=queue["crowd"]).values_list("label", flat=True)) == [
        "correct",
        "defective",
    ]
    assert queue["crowd"].pk in listed_ids(staff_client.get(f"{QUEUE}?label=correct"))


def test_bulk_label_asks_for_a_note_then_labels_every_selected_question(staff_client, staff, queue):
    selected = [queue["dropped"].pk, queue["unverified"].pk]
    page = staff_client.post(QUEUE, {"action": "label_defective", "_selected_action": selected, "index": 0})
    assert page.status_code == 200
    body = page.content.decode()
    assert 'name="note"' in body and "Capital of France, dropped?" in body
    assert Review.objects.count() == 0
    response = staff_client.post(
        QUEUE, {"action": "label_defective", "_selected_action": selected, "apply": "1", "note": "bad batch"}
    )
    assert response.status_code == 302
    reviews = Review.objects.all()
    assert {r.question_id for r in reviews} == set(selected)
    assert all(r.label == "defective" and r.reviewer == staff and r.note == "bad batch" for r in reviews)


def test_fix_and_approve_keeps_the_original(staff_client, staff, queue):
    original = queue["crowd"]
    round_ = round_create(title="R", questions=[original], provenance="model", check_status="checked")
    url = reverse("admin:review_reviewitem_fix", args=[original.pk])
    assert "Save the fix" in staff_client.get(url).content.decode()
    form = {
        "text": "Which city is the capital of France?",
        "option_0": "Paris",
        "option_1": "Lyon",
        "option_2": "Nice",
        "option_3": "Marseille",
        "correct": "0",
        "explanation": "Paris has been the capital since 987.",
        "source": "",
        "note": "question was ambiguous",
        "use_in_rounds": "on",
    }
    response = staff_client.post(url, form)
    assert response.status_code == 302
    original.refresh_from_db()
    assert original.text == "Capital of France, crowd?" and original.options == ["Paris", "Lyon", "Nice"]
    fix_review = Review.objects.get(question=original)
    assert (
        fix_review.label == "defective" and fix_review.reviewer == staff and fix_review.note == "question was ambiguous"
    )
    fixed = fix_review.fixed_as
    assert fixed.text == "Which city is the capital of France?"
    assert fixed.options == ["Paris", "Lyon", "Nice", "Marseille"] and fixed.correct_index == 0
    assert fixed.model_id == original.model_id
    assert Review.objects.get(question=fixed).label == "correct"
    assert list(round_.entries.values_list("question_id", flat=True)) == [fixed.pk]


def test_a_fix_goes_through_the_question_validation(staff_client, queue):
    url = reverse("admin:review_reviewitem_fix", args=[queue["crowd"].pk])
    count = Question.objects.count()
    form = {"text": "Q?", "option_0": "Same", "option_1": "same", "correct": "0", "note": ""}
    response = staff_client.post(url, form)
    assert response.status_code == 200 and "two options are the same" in response.content.decode()
    response = staff_client.post(url, {"text": "Q?", "option_0": "A", "option_1": "B", "correct": "3"})
    assert "option D, marked correct, is empty" in response.content.decode()
    assert Question.objects.count() == count and Review.objects.count() == 0


def test_non_staff_and_anonymous_are_refused(queue):
    user = get_user_model().objects.create_user("player", password="pw-for-tests-only")
    anonymous, player = Client(), Client()
    player.force_login(user)
    pk = queue["crowd"].pk
    urls = [
        QUEUE,
        f"{QUEUE}{pk}/change/",
        reverse("admin:review_reviewitem_label", args=[pk]) + "?label=defective",
        reverse("admin:review_reviewitem_fix", args=[pk]),
        reverse("admin:review_reviewitem_void", args=[pk]),
        SWEEP,
    ]
    for client in (anonymous, player):
        for url in urls:
            response = client.get(url)
            assert response.status_code == 302 and "/admin/login/" in response["Location"], url
        response = client.post(reverse("admin:review_reviewitem_label", args=[pk]), {"label": "correct", "note": "x"})
        assert response.status_code == 302
        response = client.post(SWEEP, {"backend": "systemone", "model_id": "m", "value": "0.5"})
        assert response.status_code == 302
    assert Review.objects.count() == 0 and Threshold.objects.count() == 0


def test_staff_without_the_review_permission_can_look_but_not_label(queue):
    user = get_user_model().objects.create_user("viewer", password="pw-for-tests-only", is_staff=True)
    user.user_permissions.add(Permission.objects.get(codename="view_reviewitem"))
    client = Client()
    client.force_login(user)
    assert client.get(QUEUE).status_code == 200
    assert client.get(f"{QUEUE}{queue['crowd'].pk}/change/").status_code == 200
    url = reverse("admin:review_reviewitem_label", args=[queue["crowd"].pk])
    assert client.post(url, {"label": "correct"}).status_code == 403
    assert Review.objects.count() == 0


def _labelled_scores(model_id: str = "jev-1.13.0") -> None:
    for n, (score, label) in enumerate([(0.3, "defective"), (0.5, "defective"), (0.7, "correct"), (0.9, "correct")]):
        question = make_question(f"Sweep question {n}?")
        verdict_record(question_id=question.pk, decision=decision(score=score, model_id=model_id))
        review_label(question=question, label=label)


def test_the_sweep_page_renders_the_table_and_the_svg_chart(staff_client):
    _labelled_scores(model_id="jev-<b>1</b>")
    response = staff_client.get(SWEEP)
    body = response.content.decode()
    assert response.status_code == 200
    assert "<svg" in body and 'class="catch-rate"' in body and 'class="false-drop-rate"' in body
    assert "<b>1</b>" not in body and "jev-&lt;b&gt;1&lt;/b&gt;" in body
    assert "Widest threshold that drops no labelled-good question: <strong>0.7</strong>" in body
    assert "catches 2 of 2 defective" in body
    assert "Too few labels" in body
    assert "Brier score" in body


def test_the_sweep_page_stores_a_threshold_with_csrf(staff):
    _labelled_scores()
    client = Client(enforce_csrf_checks=True)
    client.force_login(staff)
    page = client.get(SWEEP).content.decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
    data = {"backend": "systemone", "model_id": "jev-1.13.0", "value": "0.7", "note": "from the sweep"}
    assert client.post(SWEEP, data).status_code == 403  # no CSRF token
    response = client.post(SWEEP, {**data, "csrfmiddlewaretoken": token})
    assert response.status_code == 302
    threshold = Threshold.objects.get(backend="systemone", model_id="jev-1.13.0")
    assert (threshold.value, threshold.updated_by, threshold.note) == (0.7, staff, "from the sweep")
    assert "Stored threshold" in client.get(SWEEP).content.decode()
    client.post(SWEEP, {**data, "value": "1.5", "csrfmiddlewaretoken": token})
    assert Threshold.objects.get().value == 0.7


def test_the_sweep_page_without_labels_says_how_to_get_them(staff_client):
    body = staff_client.get(SWEEP).content.decode()
    assert "No labelled questions with recorded scores yet" in body


def test_verdicts_stay_read_only(staff_client, queue):
    verdict = Verdict.objects.first()
    assert staff_client.post(f"/admin/verifier/verdict/{verdict.pk}/delete/", {"post": "yes"}).status_code == 403
    assert Flag.objects.count() == 2


# --- the served model and the breaker ----------------------------------------------------------------------------

BREAKER = "/admin/verifier/threshold/breaker/"


@pytest.fixture
def moved():
    """A question judged by a server that served jev-1.14.0 when jev-1.13.0 was pinned, and written by another
    model than the pinned writer."""
    question = question_create(
        data=QuestionData(text="Capital of Peru?", options=("Lima", "Cusco"), correct_index=0),
        provenance=Provenance.MODEL,
        model_id="writer-1",
        served_model_id="qwen2.5-0.5b-instruct",
    )
    moved_decision = GateDecision(
        key="q",
        outcome="dropped",
        score=0.42,
        threshold=0.6,
        probabilities={"answer_correct": 0.42},
        reason="below_threshold",
        latency_ms=12,
        backend="systemone",
        model_id="jev-1.14.0",
        requested_model_id="jev-1.13.0",
    )
    verdict = verdict_record(question_id=question.pk, decision=moved_decision)
    return question, verdict


def test_the_verdict_list_and_page_show_a_model_mismatch(staff_client, moved):
    _question, verdict = moved
    listing = staff_client.get("/admin/verifier/verdict/").content.decode()
    assert "jev-1.14.0 (asked for jev-1.13.0: mismatch)" in listing
    page = staff_client.get(f"/admin/verifier/verdict/{verdict.pk}/change/").content.decode()
    assert "Mismatch: asked for jev-1.13.0, the server served jev-1.14.0" in page


def test_the_review_queue_shows_a_model_mismatch(staff_client, moved):
    question, _verdict = moved
    listing = staff_client.get(QUEUE).content.decode()
    assert "systemone jev-1.14.0 (asked for jev-1.13.0: mismatch)" in listing
    page = staff_client.get(f"{QUEUE}{question.pk}/change/").content.decode()
    assert "jev-1.14.0 (asked for jev-1.13.0: mismatch)" in page
    assert "0.60 (uncalibrated)" in page
    assert "the server says qwen2.5-0.5b-instruct wrote it" in page


def test_the_breaker_page_shows_its_state(staff_client, settings):
    from verifier.backends.base import GateFailure
    from verifier.breaker import breaker_for

    settings.VERIFIER_BACKEND = "systemone"
    settings.VERIFIER_MODEL = "jev-1.13.0"
    page = staff_client.get(BREAKER).content.decode()
    assert 'data-state="closed"' in page and "0 of 5" in page
    breaker = breaker_for(backend="systemone", model_id="jev-1.13.0")
    for _ in range(5):
        breaker.record(breaker.allow(), GateFailure("connection_refused", "refused"))
    page = staff_client.get(BREAKER).content.decode()
    assert 'data-state="open"' in page and "5 of 5" in page
    assert "connection_refused at" in page
    assert "kept in this process" in page or "shared by every process" in page
    assert BREAKER in staff_client.get("/admin/verifier/threshold/").content.decode()


def test_the_breaker_page_with_the_gate_off(staff_client, settings):
    settings.VERIFIER_BACKEND = "off"
    assert "The gate is off" in staff_client.get(BREAKER).content.decode()


def test_the_fix_page_is_quiz_s_question_form_filled_with_the_original(staff_client, queue):
    original = queue["crowd"]
    page = staff_client.get(reverse("admin:review_reviewitem_fix", args=[original.pk])).content.decode()
    for index, option in enumerate(original.options):
        assert f'name="option_{index}" value="{option}"' in page
    assert re.search(rf'name="correct" value="{original.correct_index}"[^>]*checked', page)
    assert 'name="note"' in page and 'name="use_in_rounds"' in page


def test_the_threshold_admin_stores_through_the_service_and_edits_in_place(staff_client, staff):
    add = staff_client.post(
        "/admin/verifier/threshold/add/", {"backend": "llm", "model_id": "m-1", "value": "0.65", "note": "by hand"}
    )
    assert add.status_code == 302
    stored = Threshold.objects.get()
    assert (stored.backend, stored.model_id, stored.value, stored.updated_by) == ("llm", "m-1", 0.65, staff)
    edit = staff_client.post(
        f"/admin/verifier/threshold/{stored.pk}/change/",
        {"backend": "llm", "model_id": "m-2", "value": "0.7", "note": "renamed"},
    )
    assert edit.status_code == 302
    assert list(Threshold.objects.values_list("pk", "model_id", "value", "note")) == [
        (stored.pk, "m-2", 0.7, "renamed")
    ]
    refused = staff_client.post(
        "/admin/verifier/threshold/add/", {"backend": "llm", "model_id": "m-3", "value": "1.5", "note": ""}
    )
    assert refused.status_code == 200 and Threshold.objects.count() == 1


# -- the judge's words ---------------------------------------------------------------------------------------------


@pytest.fixture
def judged():
    """A question the judge dropped, with its report: claims, a fix and the option it would mark."""
    question = make_question("Which city is the capital of Australia?", options=("Sydney", "Canberra", "Melbourne"))
    verdict_record(
        question_id=question.pk,
        decision=GateDecision(
            key="q",
            outcome="dropped",
            score=0.12,
            threshold=0.6,
            probabilities={"answer_correct": 0.12},
            reason="below_threshold",
            latency_ms=40,
            backend="judge",
            model_id="judge-7b-2025-03",
            details={
                "judge": {
                    "unsupported_claims": ["Sydney is the capital of Australia", "<b>bold</b> claim"],
                    "suggested_fix": "Mark Canberra, the capital since 1913, as the correct answer.",
                    "suggested_option": "B",
                    "reasoning_tokens": 311,
                    "format": "json_schema",
                }
            },
        ),
    )
    return question


def test_the_question_page_shows_the_judges_claims_and_fix(staff_client, judged):
    page = staff_client.get(reverse("admin:review_reviewitem_change", args=[judged.pk])).content.decode()
    assert "The judge&#x27;s words" in page
    assert "<li>Sydney is the capital of Australia</li>" in page
    assert "&lt;b&gt;bold&lt;/b&gt; claim" in page and "<b>bold</b>" not in page
    assert "Suggested fix: <q>Mark Canberra, the capital since 1913, as the correct answer.</q>" in page
    assert "It would mark B. Canberra." in page
    fix_url = reverse("admin:review_reviewitem_fix", args=[judged.pk])
    assert f'href="{fix_url}?start=suggested"' in page
    assert "Start from the suggested fix" in page


def test_a_question_without_a_judge_report_offers_no_suggested_fix(staff_client, queue):
    page = staff_client.get(reverse("admin:review_reviewitem_change", args=[queue["dropped"].pk])).content.decode()
    assert "Start from the suggested fix" not in page


def test_starting_from_the_suggested_fix_prefills_the_form_and_the_reviewer_approves(staff_client, staff, judged):
    url = reverse("admin:review_reviewitem_fix", args=[judged.pk])
    plain = staff_client.get(url).content.decode()
    assert '<input type="radio" name="correct" value="0" required id="id_correct_0" checked>' in plain
    assert "Started from the judge" not in plain
    page = staff_client.get(f"{url}?start=suggested").content.decode()
    assert "Started from the judge's suggestion (judge-7b-2025-03" in page
    assert '<input type="radio" name="correct" value="1" required id="id_correct_1" checked>' in page
    assert 'value="Judge: Mark Canberra, the capital since 1913, as the correct answer."' in page
    # Nothing is saved by opening the page: the reviewer still approves.
    assert Review.objects.filter(question=judged).count() == 0
    form = {
        "text": judged.text,
        "option_0": "Sydney",
        "option_1": "Canberra",
        "option_2": "Melbourne",
        "correct": "1",
        "explanation": "",
        "source": "",
        "note": "Judge: Mark Canberra, the capital since 1913, as the correct answer.",
    }
    response = staff_client.post(f"{url}?start=suggested", form)
    assert response.status_code == 302
    review = Review.objects.get(question=judged)
    assert review.label == "defective" and review.reviewer == staff
    assert review.fixed_as.correct_index == 1 and review.note.startswith("Judge: Mark Canberra")


def test_a_fix_of_a_question_with_a_picture_shows_it_and_keeps_it(staff_client, settings, tmp_path):
    """The reviewer fixes the words; the picture the players saw stays on the approved copy."""
    settings.STORAGES = {
        **settings.STORAGES,
        "question_images": {
            "BACKEND": "django.core.files.storage.FileSystemStorage",
            "OPTIONS": {"location": str(tmp_path / "pictures")},
        },
    }
    from quiz.pictures import images
    from tests.quiz.test_images import picture

    image = images.image_from_bytes(picture((400, 300), "PNG"), alt="The Eiffel Tower at night")
    original = question_create(
        data=QuestionData(text="Which city is this?", options=("Paris", "Rome"), correct_index=1, image=image),
        provenance=Provenance.MODEL,
    )
    flag_record(question_id=original.pk, kind="reported", room_code="ROOMCC", detail={"text": "it is Paris"})
    url = reverse("admin:review_reviewitem_fix", args=[original.pk])
    page = staff_client.get(url).content.decode()
    assert "Save the fix" in page and original.image_name in page and "The Eiffel Tower at night" in page
    form = {
        "text": "Which city is this?",
        "option_0": "Paris",
        "option_1": "Rome",
        "correct": "0",
        "image_name": original.image_name,
        "image_alt": "The Eiffel Tower at night",
        "note": "Paris, not Rome",
    }
    assert staff_client.post(url, form).status_code == 302
    fixed = Review.objects.get(question=original).fixed_as
    assert fixed.correct_index == 0
    assert (fixed.image_name, fixed.image_alt) == (original.image_name, "The Eiffel Tower at night")


def test_a_reported_typed_question_shows_its_answers_and_is_fixed_as_a_typed_question(staff_client):
    """A kind without options: the queue shows its accepted answers, and the fix keeps its kind."""
    original = question_create(
        data=QuestionData(
            text="Capital of Australia?", options=(), correct_index=0, kind="typed", key={"answers": ["Sydney"]}
        ),
        provenance=Provenance.MODEL,
    )
    flag_record(question_id=original.pk, kind="reported", room_code="ROOMDD", detail={"text": "it is Canberra"})
    change = staff_client.get(reverse("admin:review_reviewitem_change", args=[original.pk])).content.decode()
    assert "<em>Answer:</em> <strong>Sydney</strong>" in change
    url = reverse("admin:review_reviewitem_fix", args=[original.pk])
    page = staff_client.get(url).content.decode()
    assert 'value="Sydney"' in page  # the accepted answers' field, filled
    form = {"kind": "typed", "text": "Capital of Australia?", "answers": "Canberra", "note": "Canberra, not Sydney"}
    assert staff_client.post(url, form).status_code == 302
    fixed = Review.objects.get(question=original).fixed_as
    assert (fixed.kind, fixed.key) == ("typed", {"answers": ["Canberra"]})
