"""Homework in real Chromium pages (issue 30): the host sets a round as homework (the deadline typed in the
browser's time zone) and gets its page; a player in English, German and Spanish (1366x768) joins, reloads in the
middle of a question and comes back to it with its clock still running, and finishes. Every page passes axe."""

import re
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta

import pytest
from playwright.sync_api import expect

from lobby.models import Answer, Assignment
from tests.browser.test_axe import AxeAudit

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ROUND_CSV = """question,option_a,option_b,option_c,option_d,correct,explanation,source
What is 6 x 7?,36,42,48,56,B,Six times seven is forty-two.,arithmetic
What is 3 + 4?,6,7,8,9,B,Three and four make seven.,arithmetic
"""
VIEWPORT = {"width": 1366, "height": 768}
WORDS = {  # what each language's page says, as a player reads it
    "en-GB": {"join": "Join", "right": "Correct!", "done": "You have finished this homework."},
    "de-DE": {"join": "Mitspielen", "right": "Richtig!", "done": "Du hast diese Hausaufgabe fertig."},
    "es-ES": {"join": "Unirse", "right": "¡Correcto!", "done": "Has terminado esta tarea."},
}


def _db(work):
    # In a thread of its own: Playwright's sync API keeps an event loop running in this one.
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(work).result()


def test_set_as_homework_then_players_in_three_languages_join_reload_and_finish(live_url, browser, tmp_path):
    audit = AxeAudit()
    host_context = browser.new_context(viewport=VIEWPORT, locale="en-GB", timezone_id="Europe/Berlin")
    host = host_context.new_page()
    host.goto(f"{live_url}/rounds/import/")
    host.get_by_label("Round title").fill("Homework round")
    csv_file = tmp_path / "round.csv"
    csv_file.write_text(ROUND_CSV)
    host.get_by_label("File", exact=True).set_input_files(str(csv_file))
    host.get_by_role("button", name="Import").click()
    host.get_by_role("link", name="Set as homework").first.click()
    expect(host).to_have_url(re.compile(r"/homework/new/"))
    # Two days ahead at 18:30 in Berlin: the server must store it in UTC (16:30 or 17:30, by daylight saving).
    day = (datetime.now(UTC) + timedelta(days=2)).date()
    host.get_by_label("Deadline: date").fill(day.isoformat())
    host.get_by_label("Deadline: time").fill("18:30")
    host.get_by_label("Show the right answer after each question").check()
    audit.check(host, "homework-new-en")
    host.get_by_role("button", name="Set as homework").click()
    expect(host).to_have_url(re.compile(r"/homework/[A-Z2-9]{6}/$"))
    code = host.url.rstrip("/").rsplit("/", 1)[1]
    expect(host.locator("#hw-code")).to_have_text(code)
    expect(host.locator(".qr svg")).to_be_visible()
    audit.check(host, "homework-host-en")
    deadline = _db(lambda: Assignment.objects.get(room__code=code).deadline)
    assert deadline.date() == day and deadline.hour in (16, 17) and deadline.minute == 30, deadline

    for number, (locale, words) in enumerate(WORDS.items(), start=1):
        phone = browser.new_context(viewport=VIEWPORT, locale=locale).new_page()
        phone.goto(f"{live_url}/hw/{code}/")
        phone.locator("#nickname").fill(f"Player {number}")
        audit.check(phone, f"homework-join-{locale}")
        phone.get_by_role("button", name=words["join"]).click()
        expect(phone.locator("#open-question")).to_be_visible()
        audit.check(phone, f"homework-ready-{locale}")
        phone.locator("#open-question").click()
        expect(phone.locator("#q-text")).to_have_text("What is 6 x 7?")
        audit.check(phone, f"homework-question-{locale}")
        # A reload in the middle of the question: the same question, its clock still running (not restarted).
        phone.wait_for_timeout(1500)
        phone.reload()
        expect(phone.locator("#q-text")).to_have_text("What is 6 x 7?")
        seconds = int(re.search(r"\d+", phone.locator("#timer").text_content()).group())
        assert seconds <= 19, seconds
        phone.locator("#q-options button").filter(has_text="42").click()
        # The live phone's words: the verdict and the points it earned.
        expect(phone.locator("#verdict")).to_have_text(re.compile(rf"^{re.escape(words['right'])} \+\d+$"))
        expect(phone.locator("#v-explanation")).to_have_text("Six times seven is forty-two.")
        audit.check(phone, f"homework-verdict-{locale}")
        phone.locator("#go-next").click()
        phone.locator("#open-question").click()
        expect(phone.locator("#q-text")).to_have_text("What is 3 + 4?")
        phone.locator("#q-options button").filter(has_text="7").click()
        phone.locator("#go-next").click()
        expect(phone.get_by_text(words["done"])).to_be_visible()
        audit.check(phone, f"homework-finished-{locale}")
        phone.context.close()

    answers = _db(lambda: list(Answer.objects.filter(room__code=code).values_list("correct", flat=True)))
    assert answers == [True] * 6
    # The host's page catches up by itself (it polls): three players, all finished.
    expect(host.locator("#hw-counts")).to_have_text("3 started, 3 finished", timeout=10000)
    audit.assert_clean()
