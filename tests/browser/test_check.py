"""Check my questions in real Chromium: a host imports a CSV with one wrong marked answer, presses the button,
watches the live progress against a scripted checker on loopback, and the editor then shows each verdict (the
wrong one doubtful with its scores and the checker's reason); the page passes the contrast and clipping checks
and its screenshot is kept in test-artifacts/."""

import re

import pytest
from playwright.sync_api import expect

from tests.browser.page_checks import check_page
from tests.fakes.fixtures import model_server  # noqa: F401
from tests.quiz.checking.test_rounds import BLIND_CHOICES, ROUND_CSV
from verifier.services import threshold_set

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def checker(settings, model_server):  # noqa: F811
    settings.VERIFIER_BACKEND = "systemone"
    settings.VERIFIER_BASE_URL = model_server.url
    settings.VERIFIER_API_KEY = "test-key"
    settings.VERIFIER_MODEL = "jev-1.13.0"
    settings.VERIFIER_TIMEOUT = 5.0
    settings.VERIFIER_CONCURRENCY = 1  # one call at a time, so the page shows the count going up
    # The check runs in the server's own process, as `make run` (no Redis, no worker) starts it.
    settings.QUIZ_GENERATION_RUNNER = "quiz.generation.runner.generation_start_in_process"
    model_server.script.latency = 0.25
    model_server.script.probabilities = {"capital of Australia": {"answer_correct": 0.12, "explanation_true": 0.2}}
    model_server.script.choice_texts = BLIND_CHOICES  # the checker knows by content, whatever order it is shown
    return model_server


def test_the_check_button_shows_live_progress_then_each_verdict_in_the_editor(checker, live_url, browser):
    page = browser.new_context(viewport={"width": 1100, "height": 900}).new_page()
    script_errors: list[str] = []
    page.on("pageerror", lambda error: script_errors.append(str(error)))
    page.goto(f"{live_url}/rounds/import/")
    page.get_by_label("Or paste GIFT, Aiken, Moodle XML, CSV or JSON").fill(ROUND_CSV)
    page.get_by_role("button", name="Import").click()
    expect(page.get_by_role("heading", name="Imported 4 questions")).to_be_visible()
    page.get_by_role("link", name="Edit it").click()

    # No verdict yet; the button is there.
    expect(page.locator(".check-verdict")).to_have_count(0)
    expect(page.locator("#round-check-label")).to_have_text("Not checked")
    page.get_by_role("button", name="Check my questions").click()

    expect(page.get_by_role("heading", name="Checking “Imported questions”")).to_be_visible()
    checked = page.locator('[data-field="checked"]')
    # Live: the count rises while the checker answers (one call at a time, a quarter second a call): the page shows
    # a count between none and all of them.
    expect(checked).to_have_text(re.compile(r"^[1-3]$"), timeout=10000)
    expect(page.locator('[data-field="status_label"]')).to_have_text("Checking")
    # Finished: the page reloads and lists the verdicts.
    expect(page.locator('[data-field="status_label"]')).to_have_text("Done", timeout=20000)
    expect(page.locator(".check-verdict")).to_have_count(4)
    expect(page.get_by_text("checked: 1 doubtful kept by the host")).to_be_visible()

    page.get_by_role("link", name="Keep or remove questions in the editor").click()
    verdicts = page.locator(".check-verdict")
    expect(verdicts).to_have_count(4)
    assert [verdicts.nth(i).get_attribute("data-verdict") for i in range(4)] == [
        "passed", "doubtful", "passed", "passed",
    ]  # fmt: skip
    doubtful = page.locator("#question-2 .check-verdict")
    expect(doubtful.locator(".check-badge")).to_have_text("Doubtful")
    expect(doubtful).to_contain_text("answer_correct 0.12")
    expect(doubtful).to_contain_text("explanation_true 0.20")
    expect(doubtful).to_contain_text("the checker chose A. Canberra")
    expect(page.locator("#round-check-label")).to_have_text("checked: 1 doubtful kept by the host")
    # The verdict sits inside its own question's block, above the fields the host may change.
    expect(page.locator("#question-2 textarea").first).to_have_value("What is the capital of Australia?")
    check_page(page, "check-editor-verdicts", scrolls=True)

    # The host fixes the doubtful question: its verdict goes at once, and after saving it has none.
    page.locator("#question-2").get_by_label("Correct: option A").check()
    expect(doubtful).to_have_text("Edited since it was checked: save the round, then check it again.")
    expect(page.locator("#question-1 .check-verdict")).to_have_attribute("data-verdict", "passed")
    page.get_by_role("button", name="Save round").click()
    page.get_by_role("link", name="Edit", exact=False).first.click()
    expect(page.locator(".check-verdict")).to_have_count(3)
    expect(page.locator("#question-2 .check-verdict")).to_have_count(0)
    expect(page.locator("#round-check-label")).to_have_text("checked: 1 not checked")
    assert script_errors == []


@pytest.fixture
def moved_checker(checker, transactional_db):
    """The checker's server says it served another model than the pinned one, which has a lower stored bar."""
    threshold_set(backend="systemone", model_id="jev-1.13.0", value=0.95)
    threshold_set(backend="systemone", model_id="jev-1.14.0-2025-06-30-rc1", value=0.5)
    checker.script.served_model = "jev-1.14.0-2025-06-30-rc1"  # a long id: it must wrap, not overflow a phone
    checker.script.latency = 0.0
    return checker


def test_a_checker_that_says_another_model_served_is_named_on_a_phone_in_each_language(
    moved_checker, live_url, browser
):
    context = browser.new_context(viewport={"width": 360, "height": 780}, is_mobile=True)
    page = context.new_page()
    page.goto(f"{live_url}/rounds/import/")
    page.get_by_label("Or paste GIFT, Aiken, Moodle XML, CSV or JSON").fill(ROUND_CSV)
    page.get_by_role("button", name="Import").click()
    page.get_by_role("link", name="Edit it").click()
    editor = page.url
    page.get_by_role("button", name="Check my questions").click()
    expect(page.locator('[data-field="status_label"]')).to_have_text("Done", timeout=20000)
    words = {
        "en": "The checker's model changed (pinned jev-1.13.0, served jev-1.14.0-2025-06-30-rc1)",
        "de": "Das Modell des Prüfers hat sich geändert (festgelegt jev-1.13.0, geliefert jev-1.14.0-2025-06-30-rc1)",
        "es": "El modelo del verificador cambió (fijado jev-1.13.0, servido jev-1.14.0-2025-06-30-rc1)",
    }
    for language, sentence in words.items():
        context.add_cookies([{"name": "django_language", "value": language, "url": live_url}])
        page.goto(editor)
        notes = page.locator('.check-verdict [data-field="model_changed"]')
        expect(notes).to_have_count(4)
        for index in range(4):
            expect(notes.nth(index)).to_contain_text(sentence)
        # Doubtful at the pinned model's 0.95, not passed at the 0.5 the server's id has stored.
        expect(page.locator('.check-verdict[data-verdict="doubtful"]')).to_have_count(4)
        check_page(page, f"check-editor-model-changed-{language}", scrolls=True)
    context.close()
