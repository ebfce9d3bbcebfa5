"""A second host screen in real Chromium: the host hands the game's co-host link to another browser, which then
runs the game with them; a forged link gets a page that says how to get in; no player ever sees the link."""

import json
import re

import pytest
from playwright.sync_api import expect

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ROUND_CSV = """question,option_a,option_b,option_c,option_d,correct,explanation,source
What is 6 x 7?,36,42,48,56,B,Six times seven is forty-two.,arithmetic
How many sides does a hexagon have?,Five,Six,Seven,Eight,B,A hexagon has six sides.,geometry
"""


def test_a_cohost_opens_the_second_host_link_in_another_browser_and_runs_the_game(live_url, browser, tmp_path):
    host_ctx = browser.new_context(viewport={"width": 1366, "height": 768})
    host = host_ctx.new_page()
    host.goto(f"{live_url}/rounds/import/")
    host.get_by_label("Round title").fill("Two hosts")
    csv_file = tmp_path / "round.csv"
    csv_file.write_text(ROUND_CSV)
    host.get_by_label("File", exact=True).set_input_files(str(csv_file))
    host.get_by_role("button", name="Import").click()
    host.get_by_role("link", name="Play this round").click()
    host.get_by_role("button", name="Create room").click()
    expect(host).to_have_url(re.compile(r"/host/[A-Z2-9]{6}/$"))
    code = host.url.rstrip("/").rsplit("/", 1)[1]

    # The projected screen links to the co-host page; the link itself is there, folded away, with its QR code.
    with host_ctx.expect_page() as opened:
        host.get_by_role("link", name=re.compile("Co-host link")).click()
    secret_page = opened.value
    expect(secret_page.get_by_role("heading")).to_have_text(f"Co-host link for game {code}")
    expect(secret_page.locator("#cohost-url")).to_be_hidden()
    secret_page.get_by_text("Show the link and its QR code").click()
    expect(secret_page.locator("#cohost-secret .qr svg")).to_be_visible()
    link = secret_page.locator("#cohost-url").input_value()
    assert link.startswith(f"{live_url}/host/{code}/?key=")
    key_payload = link.split("key=", 1)[1].split(":", 1)[0]  # the signed part is the same in every copy
    secret_page.close()

    # A phone joins; everything it receives is recorded.
    phone = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True).new_page()
    frames: list[str] = []
    phone.on("websocket", lambda ws: ws.on("framereceived", lambda payload: frames.append(payload)))
    phone.goto(f"{live_url}/play/{code}/")
    assert key_payload not in phone.content()
    phone.get_by_label("Your nickname").fill("Ada")
    phone.get_by_role("button", name="Join").click()
    expect(phone.get_by_text("You're in!")).to_be_visible()

    # A browser with a forged key is told, on a page, how to get in; it does not host.
    stranger = browser.new_context().new_page()
    forged = stranger.goto(f"{live_url}/host/{code}/?key={key_payload}:forged:signature")
    assert forged.status == 403
    expect(stranger.get_by_role("heading")).to_have_text(f"This browser is not hosting game {code}")
    expect(stranger.get_by_text("ask the host for the co-host link")).to_be_visible()
    expect(stranger.locator("#start-btn")).to_have_count(0)

    # The co-host opens the link in another browser: a host screen of its own, and the key off the address bar.
    cohost = browser.new_context(viewport={"width": 1366, "height": 768}).new_page()
    cohost.goto(link)
    expect(cohost).to_have_url(f"{live_url}/host/{code}/")
    expect(cohost.locator(".big-code")).to_have_text(code)
    expect(cohost.locator("#player-list li")).to_have_count(1)

    # The co-host starts the game; the first host's screen follows, and either can move it on.
    cohost.get_by_role("button", name="Start the game").click()
    expect(host.locator("#q-progress")).to_have_text("Question 1 of 2")
    expect(phone.locator("#q-progress")).to_have_text("Question 1 of 2")
    phone.locator("#q-options button").filter(has_text="42").click()
    expect(host.locator("#r-options li.correct")).to_contain_text("42")
    expect(cohost.locator("#r-options li.correct")).to_contain_text("42")
    cohost.get_by_role("button", name="Leaderboard").click()
    expect(host.locator("#leaderboard li").first).to_contain_text("Ada")
    host.get_by_role("button", name="Next question").click()
    expect(cohost.locator("#q-progress")).to_have_text("Question 2 of 2")
    cohost.get_by_role("button", name="Close now").click()
    expect(host.locator("#r-explanation")).to_be_visible()
    cohost.get_by_role("button", name="Leaderboard").click()
    cohost.get_by_role("button", name="Final results").click()
    expect(host.locator("#podium .podium-1")).to_contain_text("Ada")
    expect(phone.locator("#final-rank")).to_contain_text("You finished #1 of 1")

    # No frame a player received carries the link, nor anything of the host's.
    assert frames and all(key_payload not in frame and "cohost" not in frame for frame in frames)
    assert {json.loads(frame)["type"] for frame in frames} >= {"joined", "state"}
