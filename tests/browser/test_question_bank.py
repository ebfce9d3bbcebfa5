"""The question bank in Chromium, in English, German and Spanish at 1366x768 and 1920x1080: a host imports a round,
searches My questions for a word of one question, finds only that one, opens its record, picks it into a new round
and lands in that round's editor with it; every page fits and reads (page_checks) and passes axe."""

import re
import threading

import pytest
from playwright.sync_api import expect

from lobby.models import Room
from quiz.models import Question, RoundQuestion
from review.models import Review, ReviewLabel
from tests.browser.page_checks import check_page
from tests.browser.test_axe import AxeAudit
from tests.browser.test_quiz_night import HEXAGON, ROUND_CSV
from tests.factories import AnswerFactory, PlayerFactory, ReportFactory, RoomFactory, VerdictFactory
from verifier.models import VerdictOutcome

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SIZES = ((1366, 768), (1920, 1080))


def _off_the_loop(call):
    """Playwright's sync API runs an event loop in this thread: the database is written from another."""
    thread = threading.Thread(target=call)
    thread.start()
    thread.join()


def earned_its_record(text: str) -> None:
    question = Question.objects.get(text=text)
    entry = RoundQuestion.objects.get(question=question)
    VerdictFactory(question=question, outcome=VerdictOutcome.DROPPED, score=0.41, model_id="jev-" + "9" * 60)
    VerdictFactory(question=question, outcome=VerdictOutcome.PASSED, score=0.93)
    room = RoomFactory(round=entry.round)
    for n in range(3):
        player = PlayerFactory(room=room, nickname=f"Player {n}")
        AnswerFactory(player=player, question_index=entry.position, option=1 if n < 2 else 0)
    ReportFactory(player=player, question_index=entry.position, text="Six? A hexagon has six, yes, but " * 8)
    Review.objects.create(question=question, label=ReviewLabel.CORRECT, note="Counted the sides.")
    Room.objects.filter(pk=room.pk).update(phase="finished", question_index=entry.position)


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

    # Once checked twice (a long model id), played in a game of 3 (2 right), reported and labelled, the whole
    # record still fits and reads.
    _off_the_loop(lambda: earned_its_record(HEXAGON[0]))
    page.reload()
    expect(page.locator("#record-checks tbody tr")).to_have_count(2)
    expect(page.locator("#record-plays")).to_contain_text("67")
    expect(page.locator("#record-reports")).to_contain_text("Six? A hexagon has six, yes")
    for width, height in SIZES:
        page.set_viewport_size({"width": width, "height": height})
        check_page(page, f"bank-record-full-{language}-{width}", scrolls=True)
    audit.check(page, f"bank-record-full-{language}")
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
