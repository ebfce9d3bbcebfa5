"""Players' own words on the big screen, in Chromium: a typed question's common answers each with a one-click hide
(a hidden answer leaves the host's screen and is in no later frame the host's socket receives, nor after a
reload), and an open question's answers as a list with counts beside the word cloud (the host's choice, kept by
the browser), hidden from the list too. Each screen measured (tests/browser/host_layout.js) and audited by axe at
1366x768 and 1920x1080 in English, German and Spanish; the block and sound icons drawn, not left to a font."""

import json
import re
import threading

import pytest
from django.contrib.sessions.backends.db import SessionStore
from playwright.sync_api import expect

from lobby.tokens import HOST_TOKENS, host_token
from quiz.validation import clean_question
from tests.browser.page_checks import ARTEFACTS, check_host_layout
from tests.browser.test_axe import AxeAudit
from tests.factories import RoomFactory, RoundFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

STEPS = [
    {"kind": "typed", "question": "Capital of Australia?", "answers": ["Canberra"]},
    {"kind": "open", "question": "One word for the night sky?", "max_answers": 2},
]
# (locale, nickname, the typed answer, the open answers)
PHONES = [
    ("en-GB", "Ann", "Sydney", ["Stars", "Moon"]),
    ("de-DE", "Ben", "sydney!", ["stars", "Mond"]),
    ("es-ES", "Cy", "Canbera", ["Estrellas"]),
]
SIZES = [(1366, 768), (1920, 1080)]
LANGUAGES = ["en", "de", "es"]
HIDE = {"en": "Hide “{}”", "de": "„{}“ ausblenden", "es": "Ocultar «{}»"}
AS_LIST = {"en": "Show as a list", "de": "Als Liste zeigen", "es": "Mostrar como lista"}
AS_CLOUD = {"en": "Show as a word cloud", "de": "Als Wortwolke zeigen", "es": "Mostrar como nube de palabras"}


# Draws fifty long answers with the page's own code (static/js/kinds.js) into the list: the rows it shows, the
# line counting those it left out, and the rows not wholly inside the list's box (or the screen).
FIFTY_FIT = """async () => {
  const src = document.querySelector('script[type=module]').src;
  const { KINDS } = await import(new URL('kinds.js', src));
  const list = document.getElementById('r-options');
  const cloud = Array.from({ length: 50 }, (_, i) => (
    { word: `Answer ${i} `.padEnd(40, 'w'), key: `a${i}`, count: 50 - i }
  ));
  KINDS.open.hostReveal({ kind: 'open' }, { cloud }, list);
  const box = list.getBoundingClientRect();
  const rows = [...list.querySelectorAll('.answer-row')];
  const outside = rows.filter((row) => {
    const r = row.getBoundingClientRect();
    const right = Math.min(box.right, innerWidth), bottom = Math.min(box.bottom, innerHeight);
    return r.left < box.left - 0.5 || r.right > right + 0.5 || r.bottom > bottom + 0.5;
  }).map((row) => row.textContent.trim());
  const more = list.querySelector('.answers-more');
  return { rows: rows.length - (more ? 1 : 0), more: more ? more.textContent : '', outside };
}"""


def _off_the_loop(call):
    """Playwright's sync API runs an event loop in this thread; the game's services run in another."""
    result = {}
    thread = threading.Thread(target=lambda: result.setdefault("value", call()))
    thread.start()
    thread.join()
    return result.get("value")


def _room():
    round_ = RoundFactory(title="Words night", questions=[clean_question(step) for step in STEPS])
    room = RoomFactory(round=round_, option_seed="", timer_seconds=60)
    session = SessionStore()
    session[HOST_TOKENS] = {room.code: host_token(room_code=room.code)}
    session.create()
    return room, session


def _space(page) -> None:
    page.evaluate("document.activeElement && document.activeElement.blur()")
    page.keyboard.press("Space")


def _frames(page) -> list[dict]:
    """Every state frame the page's socket receives from now on (a reload's new socket too)."""
    frames: list[dict] = []

    def watch(socket):
        def received(payload):
            message = json.loads(payload)
            if message.get("type") == "state":
                frames.append(message)

        socket.on("framereceived", received)

    page.on("websocket", watch)
    return frames


def _gone_from_later_frames(frames: list[dict], since: int, word: str) -> None:
    """From the first frame after `since` that no longer carries `word`, no frame carries it (a frame already on
    its way when the host clicked may still have had it)."""
    later = [json.dumps(frame["reveal"]).lower() for frame in frames[since:] if "reveal" in frame]
    first = next((i for i, text in enumerate(later) if word.lower() not in text), None)
    assert first is not None, f"no frame without {word!r} after hiding it"
    assert all(word.lower() not in text for text in later[first:]), word


def _measured(page, axe, name, domain, check_reload):
    """The host's screen in each language at both sizes; the language changes by its cookie and a reload."""
    for language in LANGUAGES:
        page.context.add_cookies([{"name": "django_language", "value": language, "domain": domain, "path": "/"}])
        page.reload()
        check_reload(language)
        for width, height in SIZES:
            page.set_viewport_size({"width": width, "height": height})
            check_host_layout(page, f"{name}-{language}-{width}x{height}", screenshots=ARTEFACTS)
            axe.check(page, f"{name}-{language}-{width}x{height}")
    page.context.add_cookies([{"name": "django_language", "value": "en", "domain": domain, "path": "/"}])
    page.reload()


def test_the_host_hides_a_typed_answer_and_lists_the_open_answers(live_url, browser):
    room, session = _off_the_loop(_room)
    axe = AxeAudit()
    domain = live_url.split("//")[1].split(":")[0]
    context = browser.new_context(viewport={"width": 1366, "height": 768}, locale="en-GB")
    context.add_cookies([{"name": "sessionid", "value": session.session_key, "domain": domain, "path": "/"}])
    host = context.new_page()
    frames = _frames(host)
    host.goto(f"{live_url}/host/{room.code}/")

    phones = []
    for locale, nickname, *_answers in PHONES:
        phone = browser.new_context(locale=locale, viewport={"width": 390, "height": 844}, is_mobile=True).new_page()
        phone.goto(f"{live_url}/play/{room.code}/")
        phone.locator("#nickname").fill(nickname)
        phone.locator("#join-form button[type=submit]").click()
        expect(phone.locator("#phase-lobby")).to_be_visible()
        phones.append(phone)
    # The icons are drawn as SVG (an emoji font is not on every machine): the sound toggle's and each chip's block.
    expect(host.locator("#player-list li")).to_have_count(3)
    assert host.locator("#sound-toggle svg.icon path").count() >= 2
    assert host.locator("#sound-toggle").inner_text().strip() == ""
    expect(host.locator("#player-list .block-player svg.icon")).to_have_count(3)
    expect(host.get_by_role("button", name="Remove and block Ann")).to_be_visible()
    box = host.locator("#player-list .block-player svg").first.bounding_box()
    assert box["width"] > 8 and box["height"] > 8, box
    host.get_by_role("button", name="Start the game").click()

    # The typed question: two phones wrote Sydney (folded together), one a typo of Canberra.
    for phone, (_locale, _nick, typed, _words) in zip(phones, PHONES, strict=True):
        expect(phone.locator("#typed-answer")).to_be_visible()
        phone.locator("#typed-answer").fill(typed)
        phone.locator("#typed-answer").press("Enter")
    expect(host.locator("#phase-reveal")).to_be_visible()
    common = host.locator("#r-options .option .option-text")
    expect(common).to_have_text(["Sydney", "Canbera"])
    expect(host.locator("#r-options .option .count")).to_have_text(["2", "1"])
    expect(host.locator("#open-view-btn")).to_be_hidden()  # no cloud or list for a typed answer
    _measured(host, axe, "typed-reveal", domain, lambda language: expect(common).to_have_count(2))

    before = len(frames)
    host.get_by_role("button", name="Hide “Sydney”").click()
    expect(common).to_have_text(["Canbera"])
    host.reload()
    expect(host.locator("#r-options .option .option-text")).to_have_text(["Canbera"])
    _gone_from_later_frames(frames, before, "sydney")

    _space(host)
    expect(host.locator("#phase-leaderboard")).to_be_visible()
    _space(host)

    # The open question: the cloud first, then the list with the counts, most sent first.
    for phone, (_locale, _nick, _typed, words) in zip(phones, PHONES, strict=True):
        inputs = phone.locator("#q-options .open-input")
        for n, word in enumerate(words):
            inputs.nth(n).fill(word)
        phone.locator("#q-options .submit-answer").click()
    expect(host.locator("#phase-reveal")).to_be_visible()
    expect(host.locator("#r-options .cloud-word .word")).to_have_count(4)
    host.get_by_role("button", name=AS_LIST["en"]).click()
    rows = host.locator("#r-options .answer-row")
    expect(rows.locator(".word")).to_have_text(["Stars", re.compile("Moon|Mond|Estrellas")] + [re.compile(".")] * 2)
    expect(rows.locator(".count")).to_have_text(["2", "1", "1", "1"])
    expect(host.locator("#r-options .cloud-word")).to_have_count(0)
    # The choice is kept by the browser: a reload (in any language) shows the list again.
    _measured(
        host,
        axe,
        "open-list",
        domain,
        lambda language: (
            expect(rows).to_have_count(4),
            expect(host.get_by_role("button", name=AS_CLOUD[language])).to_be_visible(),
            expect(host.get_by_role("button", name=HIDE[language].format("Stars"))).to_be_visible(),
        ),
    )
    # The cloud's most, fifty answers of up to 40 characters, fit the list's four columns at 1366x768.
    host.set_viewport_size({"width": 1366, "height": 768})
    expect(rows).to_have_count(4)
    fits = host.evaluate(FIFTY_FIT)
    host.screenshot(path=str(ARTEFACTS / "open-list-fifty-1366x768.png"))
    # Rows that do not fit even in smaller type are counted in a last line, never cut off.
    left = int(re.search(r"\d+", fits["more"]).group()) if fits["more"] else 0
    assert fits["rows"] >= 20 and fits["rows"] + left == 50 and fits["outside"] == [], fits
    host.reload()
    expect(rows).to_have_count(4)
    before = len(frames)
    host.get_by_role("button", name="Hide “Stars”").click()
    expect(rows.locator(".word")).to_have_count(3)
    assert sorted(rows.locator(".word").all_inner_texts()) == ["Estrellas", "Mond", "Moon"]
    _gone_from_later_frames(frames, before, "stars")
    host.get_by_role("button", name=AS_CLOUD["en"]).click()
    expect(host.locator("#r-options .cloud-word .word")).to_have_count(3)
    axe.assert_clean()
