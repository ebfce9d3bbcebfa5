"""A round of a slide, an open question and a quiz question, played in Chromium by a host (English) and three
phones (English, German, Spanish): the slide on the big screen and "look at the screen" on the phones, the word
cloud of the phones' words folded and sized by count, a word hidden with one click and gone after a reload,
each new screen measured (tests/browser/host_layout.js) and audited by axe at 1366x768 and 1920x1080."""

import re
import threading

import pytest
from django.contrib.sessions.backends.db import SessionStore
from playwright.sync_api import expect

from lobby.tokens import HOST_TOKENS, host_token
from quiz.validation import clean_question
from tests.browser.page_checks import check_host_layout, check_page
from tests.browser.test_axe import AxeAudit
from tests.factories import RoomFactory, RoundFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

STEPS = [
    {"kind": "slide", "question": "Round one: the sky", "explanation": "Two questions about what is above us."},
    {"kind": "open", "question": "One word for the night sky?", "max_answers": 2},
    {"question": "Which planet is known as the Red Planet?", "options": ["Venus", "Mars"], "correct": "B"},
]
PHONES = [
    ("en-GB", "Ann", "Your nickname", "Join", "Look at the screen", "Answer", "Send my answer", ["Stars", "Moon"]),
    ("de-DE", "Ben", "Dein Spitzname", "Mitspielen", "Schau auf den Bildschirm", "Antwort", "Antwort abschicken",
     ["stars ", "Mond"]),
    ("es-ES", "Cy", "Tu apodo", "Unirse", "Mira la pantalla", "Respuesta", "Enviar mi respuesta", ["STÄRS"]),
]  # fmt: skip
SIZES = [(1366, 768), (1920, 1080)]


def _off_the_loop(call):
    """Playwright's sync API runs an event loop in this thread; the game's services run in another."""
    result = {}
    thread = threading.Thread(target=lambda: result.setdefault("value", call()))
    thread.start()
    thread.join()
    return result.get("value")


def _room():
    round_ = RoundFactory(title="Live show", questions=[clean_question(step) for step in STEPS])
    room = RoomFactory(round=round_, option_seed="", timer_seconds=60)
    session = SessionStore()
    session[HOST_TOKENS] = {room.code: host_token(room_code=room.code)}
    session.create()
    return room, session


def _space(page) -> None:
    page.evaluate("document.activeElement && document.activeElement.blur()")
    page.keyboard.press("Space")


def _measured(page, axe, name):
    for width, height in SIZES:
        page.set_viewport_size({"width": width, "height": height})
        check_host_layout(page, f"{name}-{width}x{height}")
        axe.check(page, f"{name}-{width}x{height}")


def test_a_slide_an_open_question_and_a_quiz_question_with_three_phones(live_url, browser):
    room, session = _off_the_loop(_room)
    axe = AxeAudit()
    context = browser.new_context(viewport={"width": 1920, "height": 1080}, locale="en-GB")
    domain = live_url.split("//")[1].split(":")[0]
    context.add_cookies([{"name": "sessionid", "value": session.session_key, "domain": domain, "path": "/"}])
    host = context.new_page()
    sounds = []
    host.on("response", lambda r: "/static/sounds/" in r.url and sounds.append((r.status, r.headers["content-type"])))
    host.goto(f"{live_url}/host/{room.code}/")

    # Sound: nothing is loaded before the first key (the page says so); then the lobby's music.
    expect(host.locator("#sound-note")).to_have_text(" · Sound starts with your first key or click.")
    expect(host.get_by_role("button", name="Sound on (M)")).to_have_attribute("aria-pressed", "true")
    host.wait_for_load_state("networkidle")
    assert sounds == []
    host.keyboard.press("a")
    expect(host.locator("#sound-note")).to_be_hidden()
    host.wait_for_timeout(300)
    assert sounds and all(status in (200, 206) and kind.startswith("audio/") for status, kind in sounds), sounds
    expect(host.locator("#phase-lobby")).to_be_visible()
    host.keyboard.press("m")
    expect(host.get_by_role("button", name="Sound off (M)")).to_have_attribute("aria-pressed", "false")
    host.reload()
    expect(host.locator("#sound-toggle")).to_have_attribute("aria-pressed", "false")
    expect(host.locator("#phase-lobby")).to_be_visible()
    host.keyboard.press("m")
    expect(host.get_by_role("button", name="Sound on (M)")).to_have_attribute("aria-pressed", "true")

    phones = []
    for locale, nickname, label, join, *_rest in PHONES:
        phone = browser.new_context(locale=locale, viewport={"width": 390, "height": 844}, is_mobile=True).new_page()
        phone.goto(f"{live_url}/play/{room.code}/")
        if locale == "de-DE":  # a word the list refuses, in the phone's language
            phone.get_by_label(label).fill("Scheiße")
            phone.get_by_role("button", name=join).click()
            expect(phone.locator("#player-error")).to_contain_text("Dieser Spitzname enthält ein Wort")
        phone.get_by_label(label).fill(nickname)
        phone.get_by_role("button", name=join).click()
        phones.append(phone)
    # A fourth phone is removed and blocked: a reload and a new name do not bring it back.
    rude = browser.new_context(locale="en-GB", viewport={"width": 390, "height": 844}, is_mobile=True).new_page()
    rude.goto(f"{live_url}/play/{room.code}/")
    rude.get_by_label("Your nickname").fill("Dee")
    rude.get_by_role("button", name="Join").click()
    host.get_by_role("button", name="Remove and block Dee").click()
    expect(rude.locator("#gone-title")).to_have_text("You were removed from this game")
    rude.reload()
    rude.get_by_label("Your nickname").fill("Someone Else")
    rude.get_by_role("button", name="Join").click()
    expect(rude.locator("#gone-text")).to_have_text("The host removed you from this game and you cannot join it again.")
    expect(host.locator("#player-count")).to_contain_text("3")
    host.get_by_role("button", name="Start the game").click()

    # The slide: its title and text on the big screen, no clock, no number; the phones look up.
    expect(host.locator("#q-text")).to_have_text(STEPS[0]["question"])
    expect(host.locator("#q-options .slide-body")).to_have_text(STEPS[0]["explanation"])
    expect(host.locator("#q-progress")).to_have_text("")
    expect(host.locator(".clock-row")).to_be_hidden()
    for phone, (_l, _n, _la, _j, look, *_rest) in zip(phones, PHONES, strict=True):
        expect(phone.locator("#q-options")).to_contain_text(look)
    check_page(phones[1], "live-show-slide-phone-de")
    axe.check(phones[1], "live-show-slide-phone-de")
    _measured(host, axe, "live-show-slide")
    _space(host)

    # The open question: each phone sends its words in its language.
    expect(host.locator("#q-progress")).to_have_text("Question 1 of 2")
    for phone, (_l, _n, _la, _j, _look, answer, send, words) in zip(phones, PHONES, strict=True):
        for n, word in enumerate(words, start=1):
            phone.get_by_label(f"{answer} {n}").fill(word)
        phone.get_by_role("button", name=send).click()
    expect(host.locator("#phase-reveal")).to_be_visible()
    cloud = host.locator("#r-options .cloud-word")
    # "Stars", "stars " and "STÄRS" are one word, sent by three phones: the first and the biggest.
    expect(cloud.locator(".word")).to_have_text(["Stars", re.compile("^(Moon|Mond)$"), re.compile("^(Moon|Mond)$")])
    sizes = [float(s) for s in cloud.evaluate_all("items => items.map(i => parseFloat(getComputedStyle(i).fontSize))")]
    assert sizes[0] > sizes[1] == sizes[2], sizes
    _measured(host, axe, "live-show-cloud")
    check_page(phones[2], "live-show-cloud-phone-es", scrolls=True)

    # One click hides a word; a reload reads the room afresh and it stays hidden.
    host.get_by_role("button", name="Hide “Mond”").click()
    expect(cloud.locator(".word")).to_have_text(["Stars", "Moon"])
    host.reload()
    expect(host.locator("#r-options .cloud-word .word")).to_have_text(["Stars", "Moon"])
    _space(host)
    expect(host.locator("#phase-leaderboard")).to_be_visible()
    _space(host)

    # The quiz question is question 2 of 2, and scores.
    expect(host.locator("#q-progress")).to_have_text("Question 2 of 2")
    for phone in phones:
        phone.locator("#q-options button.option").nth(1).click()
    expect(phones[0].locator("#verdict")).to_contain_text("Correct!")
    _space(host)
    expect(host.locator("#phase-leaderboard")).to_be_visible()
    _space(host)
    expect(host.locator("#phase-finished")).to_be_visible()
    axe.assert_clean()
