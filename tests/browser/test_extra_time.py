"""Accessibility mode in real Chromium pages: a player asks for more time when joining, the host gives them x2 in
the lobby, and their countdown runs on their own, longer time; the host gives another player x1.5 during the
question from the game's panel."""

import re

import pytest
from playwright.sync_api import expect

from tests.browser.page_checks import check_page

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ROUND_CSV = """question,option_a,option_b,option_c,option_d,correct,explanation,source
What is 6 x 7?,36,42,48,56,B,Six times seven is forty-two.,arithmetic
"""
TIMER = 10


def _countdown(page) -> int:
    return int(page.locator("#timer").text_content())


def test_the_host_gives_a_player_x2_and_their_countdown_shows_the_longer_time(live_url, browser, tmp_path):
    host = browser.new_context(viewport={"width": 1366, "height": 768}).new_page()
    host.goto(f"{live_url}/rounds/import/")
    host.get_by_label("Round title").fill("Extra time")
    csv_file = tmp_path / "round.csv"
    csv_file.write_text(ROUND_CSV)
    host.get_by_label("File", exact=True).set_input_files(str(csv_file))
    host.get_by_role("button", name="Import").click()
    host.get_by_role("link", name="Play this round").click()
    host.get_by_label("Seconds per question (10–120)").fill(str(TIMER))
    host.get_by_role("button", name="Create room").click()
    expect(host).to_have_url(re.compile(r"/host/[A-Z2-9]{6}/$"))
    code = host.url.rstrip("/").rsplit("/", 1)[1]

    phones = {}
    for nickname, more_time in [("Ada", True), ("Bo", False)]:
        page = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True).new_page()
        page.goto(f"{live_url}/play/{code}/")
        page.get_by_label("Your nickname").fill(nickname)
        if more_time:
            page.get_by_label("I need more time").check()
            check_page(page, "extra-time-player-join")
        page.get_by_role("button", name="Join").click()
        expect(page.get_by_text("You're in!")).to_be_visible()
        phones[nickname] = page
    ada, bo = phones["Ada"], phones["Bo"]
    expect(ada.locator("#my-time-asked")).to_be_visible()

    # The host sees Ada's request beside her name, and confirms it with x2.
    ada_row = host.locator("#player-list li", has_text="Ada")
    expect(ada_row.get_by_text("asks for more time")).to_be_visible()
    expect(host.locator("#player-list li", has_text="Bo").get_by_text("asks for more time")).to_be_hidden()
    check_page(host, "extra-time-host-lobby-request")
    host.get_by_role("button", name="Give ×2: Ada").click()
    expect(ada_row.get_by_text("asks for more time")).to_be_hidden()
    expect(ada_row.get_by_text("×2", exact=True)).to_be_visible()
    # The lobby's Extra time panel has everyone's time.
    host.locator("#time-panel summary").click()
    expect(host.locator("#time-list").get_by_label("Time: Ada")).to_have_value("200")
    expect(host.locator("#time-list").get_by_label("Time: Bo")).to_have_value("100")
    check_page(host, "extra-time-host-lobby")
    host.locator("#time-panel summary").click()
    expect(ada.locator("#my-time-given")).to_have_text("You have extra time: ×2")
    expect(ada.locator("#my-time-asked")).to_be_hidden()
    expect(bo.locator("#my-time-given")).to_be_hidden()
    check_page(ada, "extra-time-player-lobby")

    host.get_by_role("button", name="Start the game").click()
    expect(ada.locator("#q-text")).to_have_text("What is 6 x 7?")
    expect(bo.locator("#q-text")).to_have_text("What is 6 x 7?")
    # Ada counts down from her own 20 s, Bo and the host's screen from the room's 10 s.
    ada_left, bo_left, host_left = _countdown(ada), _countdown(bo), _countdown(host)
    assert 2 * TIMER - 3 <= ada_left <= 2 * TIMER, ada_left
    assert bo_left <= TIMER and host_left <= TIMER, (bo_left, host_left)
    expect(host.locator("#extra-time-note")).to_be_visible()
    check_page(ada, "extra-time-player-question")

    # During the question, the host gives Bo x1.5 from the game's panel: his countdown jumps by 5 s.
    host.locator("#time-panel summary").click()
    host.locator("#time-list").get_by_label("Time: Bo").select_option("150")
    expect(bo.locator("#my-time-given")).to_have_text("You have extra time: ×1.5")
    assert _countdown(bo) > TIMER, _countdown(bo)
    check_page(host, "extra-time-host-question-panel")

    # Both answer inside their time; the reveal comes once everyone has answered.
    for page in (ada, bo):
        page.locator("#q-options button").filter(has_text="42").click()
    expect(ada.locator("#verdict")).to_contain_text("Correct!")
    expect(bo.locator("#verdict")).to_contain_text("Correct!")
