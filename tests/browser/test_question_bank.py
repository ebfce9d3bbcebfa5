"""The question bank in Chromium, in English, German and Spanish at 1366x768 and 1920x1080: a host imports a round,
searches My questions for a word of one question, finds only that one, opens its record, picks it into a new round
and lands in that round's editor with it; every page fits and reads (page_checks) and passes axe."""

import re

import pytest
from playwright.sync_api import expect

from tests.browser.page_checks import check_page
from tests.browser.test_axe import AxeAudit
from tests.browser.test_quiz_night import HEXAGON, ROUND_CSV

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SIZES = ((1366, 768), (1920, 1080))
FOUND = {"en": "1 question found", "de": "1 Frage gefunden", "es": "1 pregunta encontrada"}
IMPORTED = {"en": "imported from", "de": "importiert aus", "es": "importada de"}


@pytest.mark.parametrize("language", ["en", "de", "es"])
def test_a_host_finds_a_question_by_a_word_and_picks_it_into_a_round(live_url, browser, language):
    audit = AxeAudit()
    context = browser.new_context(viewport={"width": 1366, "height": 768}, locale=language)
    host = live_url.split("//", 1)[1].split(":", 1)[0]
    context.add_cookies([{"name": "django_language", "value": language, "domain": host, "path": "/"}])
    page = context.new_page()
    page.goto(f"{live_url}/rounds/import/")
    page.locator("textarea").fill(ROUND_CSV)
    page.locator("textarea").locator("xpath=ancestor::form").locator("button[type=submit]").click()
    expect(page.locator("a[href$='/edit/']").first).to_be_visible()

    # My questions: a word of the hexagon question, searched from the page's own search box.
    page.goto(f"{live_url}/rounds/")
    page.locator("#bank-words").fill("HEXAG")
    page.locator("#bank-words").press("Enter")
    expect(page.locator("#bank-results-heading")).to_have_text(FOUND[language])
    picks = page.locator("input[name=question]")
    expect(picks).to_have_count(1)
    expect(page.locator(".bank-item label")).to_have_text(HEXAGON[0])
    expect(page.locator(".bank-item .meta")).to_contain_text(IMPORTED[language])
    for width, height in SIZES:
        page.set_viewport_size({"width": width, "height": height})
        check_page(page, f"bank-{language}-{width}", scrolls=True)
    audit.check(page, f"bank-{language}")

    # Its record: never checked, never played, imported from the pasted file.
    page.locator(".bank-item .meta a").click()
    expect(page.locator("#question-heading")).to_have_text(HEXAGON[0])
    expect(page.locator("#record-no-checks")).to_be_visible()
    for width, height in SIZES:
        page.set_viewport_size({"width": width, "height": height})
        check_page(page, f"bank-record-{language}-{width}", scrolls=True)
    audit.check(page, f"bank-record-{language}")
    page.go_back()

    # Picked into a new round: the editor opens with that one question.
    picks.first.check()
    page.locator("#bank-pick input[name=title]").fill("Shapes")
    page.locator("#bank-pick button[type=submit]").click()
    expect(page).to_have_url(re.compile(r"/rounds/\d+/edit/$"))
    expect(page.locator("[name='title']")).to_have_value("Shapes")
    expect(page.locator("[name='q-0-text']")).to_have_value(HEXAGON[0])
    expect(page.locator("[name='q-1-text']")).to_have_value("")

    # A search of nothing but query syntax says so and shows the whole bank, at either size.
    page.goto(f"{live_url}/rounds/bank/?q=%22%2A%28%29%22%20%3A%20%26")
    expect(page.locator("#bank-note")).to_be_visible()
    for width, height in SIZES:
        page.set_viewport_size({"width": width, "height": height})
        check_page(page, f"bank-syntax-{language}-{width}", scrolls=True)
    audit.check(page, f"bank-syntax-{language}")
    audit.assert_clean()
    context.close()
