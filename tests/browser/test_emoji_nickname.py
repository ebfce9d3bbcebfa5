"""A phone joins with a nickname of joined emoji: the page counts what a person sees, as the server does (the
input's maxlength counts UTF-16 units, 11 for one family), and an invisible name is refused with a message
that says why."""

import threading

import pytest
from playwright.sync_api import expect

from tests.factories import RoomFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# 8 characters as a person counts them; 26 UTF-16 units.
FAMILY = "👩‍👩‍👧‍👦 Ana 🏳️‍🌈🇪🇸"


def test_a_phone_joins_with_joined_emoji_and_is_told_why_an_invisible_name_is_refused(live_url, browser):
    made = {}
    thread = threading.Thread(target=lambda: made.setdefault("room", RoomFactory()))
    thread.start()
    thread.join()
    code = made["room"].code
    phone = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True).new_page()
    phone.goto(f"{live_url}/play/{code}/")
    # The join form is shown once the page's script runs and its socket is open; keys pressed before that go
    # nowhere (a loaded machine showed it). A person, too, types into the form they see.
    expect(phone.locator("#phase-join")).to_be_visible(timeout=15000)
    nickname = phone.get_by_label("Your nickname")

    nickname.press_sequentially("🦊" * 21)  # typed one by one, as a thumb does
    phone.get_by_role("button", name="Join").click()
    expect(phone.locator("#player-error")).to_have_text("Choose a nickname of 1 to 20 characters.")

    nickname.fill("")
    nickname.press_sequentially("Ada\u200b\u200b")
    phone.get_by_role("button", name="Join").click()
    expect(phone.locator("#player-error")).to_contain_text("invisible or control characters")

    nickname.fill("")
    nickname.press_sequentially(FAMILY)
    expect(nickname).to_have_value(FAMILY)  # nothing cut off by maxlength
    phone.get_by_role("button", name="Join").click()
    expect(phone.get_by_text("You're in!")).to_be_visible()
    expect(phone.locator("#me")).to_have_text(FAMILY)
