"""A round played in German on the phone while the host's screen is in English: every string the phone shows comes
from the German catalogue. Checked against the English one: no English msgid is visible on the phone at any phase."""

import re

import polib
import pytest
from django.conf import settings
from django.core.management import call_command
from playwright.sync_api import expect

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PLACEHOLDER = re.compile(r"%\(\w+\)[sd]|%[sd]")


def _english_patterns() -> list[re.Pattern]:
    """Each English msgid whose German differs, as a pattern over visible text (placeholders match anything)."""
    patterns = []
    for domain in ("django", "djangojs"):
        po = polib.pofile(str(settings.BASE_DIR / "locale" / "de" / "LC_MESSAGES" / f"{domain}.po"))
        for entry in po:
            for english, german in [(entry.msgid, entry.msgstr), (entry.msgid_plural, entry.msgstr_plural.get(1))]:
                if not english or not german or english == german or "<" in english:
                    continue
                text = " ".join(english.split())
                words = PLACEHOLDER.sub("", text).split()
                if len(words) < 2 and text == PLACEHOLDER.sub("", text):
                    # a single word: only a whole line of it counts (German shares words like "Quiz", "Name")
                    patterns.append(re.compile(rf"^\s*{re.escape(text)}\s*$", re.M))
                    continue
                parts = [re.escape(part) for part in PLACEHOLDER.split(text)]
                patterns.append(re.compile(r".+?".join(parts)))
    return patterns


def _english_on(page, patterns) -> list[str]:
    text = page.evaluate("document.body.innerText")
    return sorted({match.group(0) for pattern in patterns if (match := pattern.search(text))})


@pytest.fixture
def packs(transactional_db):
    # Before the browser starts: Playwright's loop then runs in this thread, and Django refuses sync queries.
    call_command("load_packs", verbosity=0)


def test_a_round_in_german_on_the_phone_while_the_host_speaks_english(packs, live_url, browser):
    patterns = _english_patterns()
    host = browser.new_context(locale="en-GB").new_page()
    host.goto(f"{live_url}/")
    host.locator("label", has_text="Allgemeinwissen").locator("input").check()
    host.get_by_role("button", name="Create room").click()
    expect(host).to_have_url(re.compile(r"/host/[A-Z2-9]{6}/$"))
    code = host.url.rstrip("/").rsplit("/", 1)[1]
    expect(host.locator("#start-btn")).to_have_text("Start the game")

    phone = browser.new_context(locale="de-DE", viewport={"width": 390, "height": 844}, is_mobile=True).new_page()
    phone.goto(f"{live_url}/play/{code}/")
    seen = {}
    expect(phone.get_by_role("button", name="Mitspielen")).to_be_visible()
    seen["join"] = _english_on(phone, patterns)
    phone.get_by_label("Dein Spitzname").fill("Ada")
    phone.get_by_role("button", name="Mitspielen").click()
    expect(phone.get_by_text("Du bist dabei!")).to_be_visible()
    seen["lobby"] = _english_on(phone, patterns)
    # The same nickname from a second German phone: the server's refusal comes in German too.
    other = browser.new_context(locale="de-DE").new_page()
    other.goto(f"{live_url}/play/{code}/")
    other.get_by_label("Dein Spitzname").fill("ada")
    other.get_by_role("button", name="Mitspielen").click()
    expect(other.locator("#player-error")).to_contain_text("hat schon diesen Spitznamen")

    host.evaluate("document.activeElement && document.activeElement.blur()")
    host.keyboard.press("Space")
    expect(phone.locator("#q-options button").first).to_be_visible()
    expect(host.locator("#close-btn")).to_have_text("Close now")  # the host's screen stays English
    seen["question"] = _english_on(phone, patterns)
    phone.locator("#q-options button").first.click()
    expect(phone.locator("#r-tally")).to_be_visible()
    seen["reveal"] = _english_on(phone, patterns)
    host.evaluate("document.activeElement && document.activeElement.blur()")
    host.keyboard.press("Space")
    expect(phone.locator("#phase-leaderboard")).to_be_visible()
    seen["leaderboard"] = _english_on(phone, patterns)
    for _question in range(9):  # questions 2 to 10
        host.keyboard.press("Space")
        expect(phone.locator("#q-options button").first).to_be_visible()
        phone.locator("#q-options button").last.click()
        expect(phone.locator("#r-tally")).to_be_visible()
        host.keyboard.press("Space")
        expect(phone.locator("#phase-leaderboard")).to_be_visible()
    host.keyboard.press("Space")  # the last leaderboard's "Final results"
    expect(phone.locator("#phase-finished")).to_be_visible()
    seen["podium"] = _english_on(phone, patterns)
    phone.screenshot(path=str(settings.BASE_DIR / "test-artifacts" / "phone-de-podium.png"))
    assert {phase: found for phase, found in seen.items() if found} == {}
    assert phone.evaluate("document.documentElement.lang") == "de"
