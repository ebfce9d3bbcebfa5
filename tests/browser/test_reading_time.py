"""A moment to read in real Chromium pages (issue 30): the host picks 5 s in the lobby; on the host's screen and
on a Spanish phone the question shows alone with a note counting down, the options and the clock come after it,
and the answer's speed is counted from when the options appeared."""

import re
from concurrent.futures import ThreadPoolExecutor

import pytest
from playwright.sync_api import expect

from lobby.models import Answer
from tests.browser.page_checks import check_page

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ROUND_CSV = """question,option_a,option_b,option_c,option_d,correct,explanation,source
What is 6 x 7?,36,42,48,56,B,Six times seven is forty-two.,arithmetic
"""
TIMER = 10
READING = 5


def test_the_question_is_read_first_then_the_options_and_the_clock_come(live_url, browser, tmp_path):
    host = browser.new_context(viewport={"width": 1366, "height": 768}).new_page()
    host.goto(f"{live_url}/rounds/import/")
    host.get_by_label("Round title").fill("Read first")
    csv_file = tmp_path / "round.csv"
    csv_file.write_text(ROUND_CSV)
    host.get_by_label("File", exact=True).set_input_files(str(csv_file))
    host.get_by_role("button", name="Import").click()
    host.get_by_role("link", name="Play this round").click()
    host.get_by_label("Seconds per question (10–120)").fill(str(TIMER))
    host.get_by_role("button", name="Create room").click()
    expect(host).to_have_url(re.compile(r"/host/[A-Z2-9]{6}/$"))
    code = host.url.rstrip("/").rsplit("/", 1)[1]
    host.get_by_label("Time to read").select_option(str(READING))

    phone = browser.new_context(locale="es-ES", viewport={"width": 390, "height": 844}, is_mobile=True).new_page()
    phone.goto(f"{live_url}/play/{code}/")
    phone.get_by_label("Tu apodo").fill("Ada")
    phone.get_by_role("button", name="Unirse").click()
    expect(phone.get_by_text("¡Ya estás dentro!")).to_be_visible()
    # The host's choice reached the server (a fresh host screen shows it too).
    expect(host.get_by_label("Time to read")).to_have_value(str(READING))

    host.get_by_role("button", name="Start the game").click()
    expect(phone.locator("#q-text")).to_have_text("What is 6 x 7?")
    # Reading: the question alone, a note saying when the answers come, no buttons to press yet, no clock.
    expect(phone.locator("#q-reading")).to_contain_text("Lee la pregunta: las respuestas aparecen en")
    expect(phone.locator("#q-options")).to_be_hidden()
    expect(host.locator("#q-reading")).to_contain_text("Read the question: the answers appear in")
    expect(host.locator("#q-options")).to_be_hidden()
    assert phone.locator("#timer").text_content() == ""
    check_page(phone, "reading-phone-es")
    check_page(host, "reading-host-1366")

    # Then the options and the whole timer: the clock starts with them.
    expect(phone.locator("#q-options button").first).to_be_visible(timeout=READING * 1000 + 5000)
    expect(phone.locator("#q-reading")).to_be_hidden()
    assert int(phone.locator("#timer").text_content()) >= TIMER - 2
    expect(host.locator("#q-options li").first).to_be_visible()
    check_page(phone, "reading-phone-es-options")
    phone.locator("#q-options button").filter(has_text="42").click()
    expect(phone.locator("#verdict")).to_contain_text("¡Correcto!", timeout=TIMER * 1000)
    # Counted from the options' appearance: the 5 s of reading are not in the answer's time.
    # (In a thread of its own: Playwright's sync API keeps an event loop running in this one.)
    with ThreadPoolExecutor(1) as pool:
        elapsed = pool.submit(lambda: Answer.objects.get(player__nickname="Ada").elapsed_ms).result()
    assert elapsed < READING * 1000, elapsed
