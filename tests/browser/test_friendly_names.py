"""Generated friendly names in Chromium: the host turns them on in the create form, phones in English, German and
Spanish join without typing a name and each gets one from its language's list, two phones never the same; the
create form, the join page and the host's lobby measured and audited by axe in the three languages."""

import re
import threading

import pytest
from django.contrib.sessions.backends.db import SessionStore
from playwright.sync_api import expect

from lobby.models import Room
from lobby.rules.friendly_names import all_names
from quiz.models import Round
from quiz.validation import clean_question
from tests.browser.page_checks import ARTEFACTS, check_host_layout, check_page
from tests.browser.test_axe import AxeAudit
from tests.factories import RoundFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SIZES = [(1366, 768), (1920, 1080)]
LANGUAGES = ["en", "de", "es"]
# (locale, the page's join button, its "your name" line)
PHONES = [
    ("en-GB", "Join", "Your name in this game:"),
    ("en-US", "Join", "Your name in this game:"),
    ("de-DE", "Mitspielen", "Dein Name in diesem Spiel:"),
    ("es-ES", "Unirse", "Tu nombre en esta partida:"),
]
FORM_LABEL = {
    "en": "Friendly names: each player gets a made-up name like “Brave Otter”",
    "de": "Freundliche Namen: Alle bekommen einen ausgedachten Namen wie „Mutiger Otter“",
    "es": "Nombres amistosos: cada jugador recibe un nombre inventado como «Nutria valiente»",
}


def _off_the_loop(call):
    """Playwright's sync API runs an event loop in this thread; the database calls run in another."""
    result = {}
    thread = threading.Thread(target=lambda: result.setdefault("value", call()))
    thread.start()
    thread.join()
    return result.get("value")


def _host_session():
    round_ = RoundFactory(
        title="Names night",
        questions=[clean_question({"question": "Which planet is red?", "options": ["Venus", "Mars"], "correct": "B"})],
    )
    Round.objects.filter(pk=round_.pk).update(owner_key="host-browser")
    session = SessionStore()
    session["owner_key"] = "host-browser"
    session.create()
    return session


def test_phones_get_friendly_names_in_their_own_language(live_url, browser):
    session = _off_the_loop(_host_session)
    axe = AxeAudit()
    domain = live_url.split("//")[1].split(":")[0]
    context = browser.new_context(viewport={"width": 1366, "height": 768}, locale="en-GB")
    context.add_cookies([{"name": "sessionid", "value": session.session_key, "domain": domain, "path": "/"}])
    host = context.new_page()

    # The create form offers it, in each language, measured and audited at both sizes.
    for language in LANGUAGES:
        context.add_cookies([{"name": "django_language", "value": language, "domain": domain, "path": "/"}])
        host.goto(f"{live_url}/")
        expect(host.get_by_label(FORM_LABEL[language])).not_to_be_checked()
        for width, height in SIZES:
            host.set_viewport_size({"width": width, "height": height})
            check_page(host, f"friendly-names-form-{language}-{width}x{height}", scrolls=True)
            axe.check(host, f"friendly-names-form-{language}-{width}x{height}")
    context.add_cookies([{"name": "django_language", "value": "en", "domain": domain, "path": "/"}])
    host.goto(f"{live_url}/")
    host.get_by_label(FORM_LABEL["en"]).check()
    host.get_by_role("button", name="Create room").click()
    expect(host.locator("#phase-lobby")).to_be_visible()
    room = _off_the_loop(lambda: Room.objects.get(round__title="Names night"))
    assert room.friendly_names

    names = []
    for n, (locale, join, yours) in enumerate(PHONES):
        phone = browser.new_context(locale=locale, viewport={"width": 390, "height": 844}, is_mobile=True).new_page()
        phone.goto(f"{live_url}/play/{room.code}/")
        expect(phone.locator("#friendly-note")).to_be_visible()
        expect(phone.locator("#nickname")).to_have_count(0)  # nothing to type
        if n == 0 or locale.startswith(("de", "es")):
            check_page(phone, f"friendly-names-join-{locale}")
            axe.check(phone, f"friendly-names-join-{locale}")
        phone.get_by_role("button", name=join).click()
        expect(phone.locator("#lobby-name")).to_be_visible()
        expect(phone.locator("#lobby-name")).to_contain_text(yours)
        expect(phone.locator("#lobby-name-text")).to_have_text(re.compile(r"\S"))
        name = phone.locator("#lobby-name-text").inner_text()
        assert name in all_names(locale[:2]), (locale, name)
        expect(phone.locator("#me")).to_have_text(name)
        if locale.startswith(("de", "es")):
            check_page(phone, f"friendly-names-lobby-{locale}")
            axe.check(phone, f"friendly-names-lobby-{locale}")
        names.append(name)
    assert len(set(names)) == len(names), names
    # The host's lobby names them all, in each language, measured at both sizes.
    expect(host.locator("#player-list .nick")).to_have_text(list(reversed(names)))
    for language in LANGUAGES:
        context.add_cookies([{"name": "django_language", "value": language, "domain": domain, "path": "/"}])
        host.reload()
        expect(host.locator("#player-list .nick")).to_have_count(len(names))
        for width, height in SIZES:
            host.set_viewport_size({"width": width, "height": height})
            check_host_layout(host, f"friendly-names-host-lobby-{language}-{width}x{height}", screenshots=ARTEFACTS)
            axe.check(host, f"friendly-names-host-lobby-{language}-{width}x{height}")
    axe.assert_clean()
