"""A time per question in real Chromium pages: a Kahoot! spreadsheet whose two questions have their own time limits
(60 s and 10 s) is imported and played in a room whose timer is 20 s. Live, the host's screen and the phone count
each question down from its own time (their countdown bars measured against it too); as homework, the phone's
countdown is each question's own time, and the short one's runs out at its own 10 s and moves the player on."""

import re
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta

import pytest
from playwright.sync_api import expect

from lobby.models import Answer
from tests.browser.page_checks import check_page
from tests.browser.test_axe import AxeAudit
from tests.quiz.importers.conftest import kahoot_rows, xlsx

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ROOM_TIMER = 20
LONG, SHORT = 60, 10
QUESTIONS = [
    ["What is 6 x 7?", "36", "42", "48", "56", LONG, "2"],
    ["What is 3 + 4?", "6", "7", None, None, SHORT, "2"],
]
PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True}
# The countdown's seconds and the whole time its bar stands for (seconds left / the bar's share left), read at once.
CLOCK = """() => {
  const left = Number(document.getElementById("timer").textContent);
  const share = Number(document.getElementById("countdown-bar").style.getPropertyValue("--left"));
  return { left, whole: share > 0 ? left / share : null };
}"""


def _db(work):
    with ThreadPoolExecutor(1) as pool:  # Playwright's sync API keeps an event loop running in this thread
        return pool.submit(work).result()


def _clock(page) -> dict:
    expect(page.locator("#timer")).to_have_text(re.compile(r"^\d+$"))
    return page.evaluate(CLOCK)


def _imported(page, live_url, tmp_path) -> None:
    page.goto(f"{live_url}/rounds/import/")
    page.get_by_label("Round title").fill("Own times")
    sheet = tmp_path / "kahoot.xlsx"
    sheet.write_bytes(xlsx(kahoot_rows(QUESTIONS)))
    page.get_by_label("File", exact=True).set_input_files(str(sheet))
    page.get_by_role("button", name="Import").click()
    expect(page.get_by_text("Read as Kahoot! spreadsheet.")).to_be_visible()


def test_live_each_question_counts_down_its_own_time_on_the_host_and_the_phone(live_url, browser, tmp_path):
    host = browser.new_context(viewport={"width": 1366, "height": 768}).new_page()
    _imported(host, live_url, tmp_path)
    host.get_by_role("link", name="Play this round").click()
    host.get_by_label("Seconds per question (10–120)").fill(str(ROOM_TIMER))
    host.get_by_role("button", name="Create room").click()
    expect(host).to_have_url(re.compile(r"/host/[A-Z2-9]{6}/$"))
    code = host.url.rstrip("/").rsplit("/", 1)[1]
    phone = browser.new_context(**PHONE).new_page()
    phone.goto(f"{live_url}/play/{code}/")
    phone.get_by_label("Your nickname").fill("Ada")
    phone.get_by_role("button", name="Join").click()
    expect(phone.get_by_text("You're in!")).to_be_visible()

    host.get_by_role("button", name="Start the game").click()
    expect(phone.locator("#q-text")).to_have_text("What is 6 x 7?")
    # Its own 60 s: more than the room's 20 can count, on both screens, and each bar is drawn over 60 s.
    for page in (host, phone):
        clock = _clock(page)
        assert ROOM_TIMER < clock["left"] <= LONG, clock
        assert clock["whole"] is not None and ROOM_TIMER < clock["whole"] <= LONG + 1, clock
    check_page(phone, "question-time-phone-own-60")
    check_page(host, "question-time-host-own-60-1366")
    phone.locator("#q-options button").filter(has_text="42").click()
    expect(phone.locator("#verdict")).to_contain_text("Correct!")
    host.get_by_role("button", name="Leaderboard").click()
    host.get_by_role("button", name="Next question").click()

    expect(phone.locator("#q-text")).to_have_text("What is 3 + 4?")
    # Its own 10 s: the room's 20 would count from 20, and its bar would stand for 20 s.
    for page in (host, phone):
        clock = _clock(page)
        assert clock["left"] <= SHORT, clock
        assert clock["whole"] is None or clock["whole"] <= SHORT + 1, clock
    # Unanswered, it closes at its own 10 s: the reveal comes without the host.
    expect(phone.locator("#verdict")).to_have_text("No answer this time", timeout=(SHORT + 10) * 1000)
    expect(host.locator("#to-leaderboard-btn")).to_be_visible()


def test_homework_each_question_counts_down_its_own_time(live_url, browser, tmp_path):
    audit = AxeAudit()
    host = browser.new_context(viewport={"width": 1920, "height": 1080}).new_page()
    _imported(host, live_url, tmp_path)
    host.get_by_role("link", name="Set as homework").first.click()
    day = (datetime.now(UTC) + timedelta(days=2)).date()
    host.get_by_label("Deadline: date").fill(day.isoformat())
    host.get_by_label("Deadline: time").fill("18:30")
    host.get_by_label("Seconds per question (10–120)").fill(str(ROOM_TIMER))
    host.get_by_label("Show the right answer after each question").check()
    host.get_by_role("button", name="Set as homework").click()
    expect(host).to_have_url(re.compile(r"/homework/[A-Z2-9]{6}/$"))
    code = host.url.rstrip("/").rsplit("/", 1)[1]

    phone = browser.new_context(**PHONE).new_page()
    phone.goto(f"{live_url}/hw/{code}/")
    phone.locator("#nickname").fill("Ben")
    phone.get_by_role("button", name="Join").click()
    expect(phone.locator("#ready-title")).to_have_text("Question 1 of 2")
    phone.locator("#open-question").click()
    expect(phone.locator("#q-text")).to_have_text("What is 6 x 7?")
    clock = _clock(phone)
    assert ROOM_TIMER < clock["left"] <= LONG, clock
    assert clock["whole"] is not None and ROOM_TIMER < clock["whole"] <= LONG + 1, clock
    check_page(phone, "question-time-homework-own-60")
    audit.check(phone, "question-time-homework-question")
    phone.locator("#q-options button").filter(has_text="42").click()
    # The verdict as the live phone draws it: its words, and the answer given as its option's card, marked.
    expect(phone.locator("#verdict")).to_contain_text("Correct!")
    expect(phone.locator("#v-mine .option")).to_contain_text("42")
    expect(phone.locator("#v-mine .mark")).to_have_text("✔ Right")
    expect(phone.locator("#v-answer")).to_have_text(re.compile(r"^[A-D] — 42$"))  # in the player's shuffled order
    check_page(phone, "question-time-homework-verdict")
    audit.check(phone, "question-time-homework-verdict")
    phone.locator("#go-next").click()

    expect(phone.locator("#ready-title")).to_have_text("Question 2 of 2")
    phone.locator("#open-question").click()
    expect(phone.locator("#q-text")).to_have_text("What is 3 + 4?")
    clock = _clock(phone)
    assert clock["left"] <= SHORT, clock
    assert clock["whole"] is None or clock["whole"] <= SHORT + 1, clock
    # Left to run out: at its own 10 s the player is moved on, the question unanswered.
    expect(phone.get_by_text("You have finished this homework.")).to_be_visible(timeout=(SHORT + 10) * 1000)
    expect(phone.locator("#hw-answers > li")).to_have_count(2)
    expect(phone.locator("#hw-answers > li").nth(1).locator(".verdict")).to_have_text("No answer this time")
    answers = _db(lambda: list(Answer.objects.filter(room__code=code).values_list("question_index", "window_ms")))
    assert answers == [(0, LONG * 1000)]
    audit.check(phone, "question-time-homework-finished")
    audit.assert_clean()
