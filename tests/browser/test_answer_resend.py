"""An answer sent into a connection that dies with it (static/js/player.js): the page keeps it, sends it again
once it has reconnected, and it is acknowledged and stored once."""

import re
from concurrent.futures import ThreadPoolExecutor

import pytest
from playwright.sync_api import expect

from lobby.models import Answer
from tests.browser.test_player_page import host_a_room

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_an_answer_lost_with_its_connection_is_sent_again_after_the_reconnect_and_acknowledged(
    live_url, browser, tmp_path
):
    host, code = host_a_room(browser, live_url, tmp_path)
    page = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True).new_page()
    sent, lost = [], []

    def route(ws):
        """Between the page and the server: the first answer goes nowhere, and its connection dies with it."""
        server = ws.connect_to_server()

        def from_page(message):
            if '"answer"' in message:
                sent.append(message)
                if not lost:
                    lost.append(message)
                    ws.close(code=1011, reason="lost")
                    server.close()
                    return
            server.send(message)

        ws.on_message(from_page)

    page.route_web_socket(re.compile(r"/ws/room/"), route)
    page.goto(f"{live_url}/play/{code}/")
    page.get_by_label("Your nickname").fill("Ada")
    page.get_by_role("button", name="Join").click()
    expect(page.locator("#phase-lobby")).to_be_visible()
    host.get_by_role("button", name="Start the game").click()
    expect(page.locator("#phase-question")).to_be_visible()
    page.locator('#q-options button[data-index="0"]').click()

    expect(page.locator("#locked-in")).to_contain_text("locked in", timeout=15000)
    assert len(lost) == 1 and len(sent) == 2, sent  # lost once, sent again once
    with ThreadPoolExecutor(1) as thread:  # Playwright's sync API runs an event loop in this one
        assert thread.submit(lambda: Answer.objects.filter(room__code=code).count()).result() == 1
    expect(page.locator("#player-error")).to_be_hidden()
