"""A reviewer logs in to the admin, labels a flagged question and reads the sweep, in real Chromium."""

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import expect

from review.services import review_label
from tests.browser.conftest import browser, live_url  # noqa: F401
from tests.factories import FlagFactory, QuestionFactory, VerdictFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def flagged(transactional_db):
    """Made before the browser starts: Playwright's sync API runs an event loop, and Django refuses ORM calls
    from a thread with a running loop."""
    get_user_model().objects.create_superuser("reviewer", "r@example.com", "a-long-test-password")
    flagged = QuestionFactory(
        text="Which river flows through Paris?", options=("Seine", "Loire", "Rhône"), written=True
    )
    VerdictFactory(question=flagged, score=0.31)
    FlagFactory(question=flagged, room_code="ABCDEF", detail={"player": "Ada", "text": "It is the Seine"})
    for n, (score, label) in enumerate([(0.2, "defective"), (0.8, "correct")]):
        question = VerdictFactory(question__text=f"Sweep question {n}?", score=score).question
        review_label(question=question, label=label)
    return flagged


def test_a_reviewer_labels_a_flagged_question_and_sees_the_sweep(flagged, live_url, browser):  # noqa: F811
    page = browser.new_context().new_page()
    page.goto(f"{live_url}/admin/login/?next=/admin/review/reviewitem/")
    page.get_by_label("Username").fill("reviewer")
    page.get_by_label("Password").fill("a-long-test-password")
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("heading", name="Select question to review to view")).to_be_visible()
    page.get_by_role("link", name="Which river flows through Paris?").click()
    expect(page.get_by_text("It is the Seine")).to_be_visible()
    expect(page.get_by_text("Seine ✓ (marked correct)")).to_be_visible()

    page.get_by_role("link", name="Label defective").click()
    page.get_by_label("Note (optional)").fill("The marked answer is right; the wording was not")
    page.get_by_role("button", name="Label defective").click()
    expect(page.get_by_text(f"Labelled question {flagged.pk} defective.")).to_be_visible()
    # The label's history on the question's page: who, and the note.
    labels = page.locator("table.review-labels tbody tr")
    expect(labels).to_have_count(1)
    expect(labels.first).to_contain_text("defective")
    expect(labels.first).to_contain_text("reviewer")
    expect(labels.first).to_contain_text("The marked answer is right; the wording was not")

    page.goto(f"{live_url}/admin/review/reviewitem/")
    page.get_by_role("link", name="Threshold sweep").click()
    expect(page.get_by_role("heading", name="systemone jev-1.13.0")).to_be_visible()
    expect(page.locator("svg.sweep-chart polyline.catch-rate")).to_have_count(1)
    expect(page.get_by_text("Too few labels to trust")).to_be_visible()
    page.context.close()


@pytest.fixture
def judged(transactional_db):
    get_user_model().objects.create_superuser("reviewer", "r@example.com", "a-long-test-password")
    question = QuestionFactory(
        text="Which city is the capital of Australia?", options=("Sydney", "Canberra", "Melbourne"), written=True
    )
    VerdictFactory(
        question=question,
        backend="judge",
        model_id="judge-7b-2025-03",
        score=0.12,
        details={
            "judge": {
                "unsupported_claims": ["Sydney is the capital of Australia"],
                "suggested_fix": "Mark Canberra, the capital since 1913, as the correct answer.",
                "suggested_option": "B",
                "reasoning_tokens": None,
                "format": "json_object",
            }
        },
    )
    return question


def test_a_reviewer_starts_from_the_judges_suggested_fix_and_approves_it(judged, live_url, browser):  # noqa: F811
    page = browser.new_context().new_page()
    page.goto(f"{live_url}/admin/login/?next=/admin/review/reviewitem/{judged.pk}/change/")
    page.get_by_label("Username").fill("reviewer")
    page.get_by_label("Password").fill("a-long-test-password")
    page.get_by_role("button", name="Log in").click()
    words = page.locator(".judge-words")
    expect(words.locator("li")).to_have_text(["Sydney is the capital of Australia"])
    expect(words).to_contain_text("Suggested fix: Mark Canberra, the capital since 1913, as the correct answer.")
    words.get_by_role("link", name="Start from the suggested fix").click()
    expect(page.get_by_role("heading", name=f"Fix and approve question {judged.pk}")).to_be_visible()
    expect(page.locator("#id_correct_1")).to_be_checked()
    expect(page.get_by_label("Note (why it was wrong)")).to_have_value(
        "Judge: Mark Canberra, the capital since 1913, as the correct answer."
    )
    page.get_by_role("button", name="Save the fix and approve it").click()
    expect(page.get_by_text(f"Question {judged.pk} kept as it was (labelled defective)")).to_be_visible()
    page.context.close()
