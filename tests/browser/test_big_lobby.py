"""The host's lobby with 300 players: the count and the newest names, not 300 chips."""

import re
import threading
from pathlib import Path

from playwright.sync_api import expect

from lobby import services
from tests.browser.test_game import ROUND_CSV

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"


def test_the_host_lobby_of_300_shows_the_count_and_the_newest_names(live_url, browser, tmp_path, settings):
    settings.ROOM_MAX_PLAYERS = 300
    host = browser.new_context(viewport={"width": 1366, "height": 768}).new_page()
    host.goto(f"{live_url}/rounds/import/")
    host.get_by_label("Round title").fill("Assembly round")
    csv_file = tmp_path / "round.csv"
    csv_file.write_text(ROUND_CSV)
    host.get_by_label("File", exact=True).set_input_files(str(csv_file))
    host.get_by_role("button", name="Import").click()
    host.get_by_role("link", name="Play this round").click()
    host.get_by_role("button", name="Create room").click()
    expect(host).to_have_url(re.compile(r"/host/[A-Z2-9]{6}/$"))
    code = host.url.rstrip("/").rsplit("/", 1)[1]

    def join_all():  # in a thread: Playwright's sync API runs an event loop in this one
        for n in range(300):
            services.player_join(code=code, nickname=f"Student {n + 1}")

    joining = threading.Thread(target=join_all)
    joining.start()
    joining.join()
    expect(host.locator("#player-count")).to_have_text("300 players", timeout=15000)
    chips = host.locator("#player-list li")
    expect(chips.first).to_contain_text("Student 300")  # the newest first
    # At most the newest 20 names travel to the host; of those, the ones the list's box holds are drawn whole, and
    # the line under it counts every other player, so no name is cut off unseen.
    drawn = chips.count()
    assert 1 <= drawn <= 20
    expect(host.locator("#player-more-text")).to_have_text(f"…and {300 - drawn} more players")
    # Every one of them is on the host's players page, a link away.
    expect(host.locator("#player-more").get_by_role("link", name="All players")).to_have_attribute(
        "href", f"/host/{code}/players/"
    )
    box = host.locator("#player-list").bounding_box()
    for chip in chips.all():
        chip_box = chip.bounding_box()
        assert box["y"] - 1 <= chip_box["y"] and chip_box["y"] + chip_box["height"] <= box["y"] + box["height"] + 1
    expect(host.get_by_role("button", name="Remove Student 300")).to_be_visible()
    ARTIFACTS.mkdir(exist_ok=True)
    host.screenshot(path=str(ARTIFACTS / "host-lobby-300.png"), full_page=True)


def test_a_lobby_of_20_at_1366x768_shows_every_arrival_and_the_4th_players_request(live_url, browser, tmp_path):
    """Twenty players fit the projector whole, the first arrivals included, and a waiting "I need more time" is
    answered from the lobby: beside the name, and in the lobby's Extra time panel."""
    host = browser.new_context(viewport={"width": 1366, "height": 768}).new_page()
    host.goto(f"{live_url}/rounds/import/")
    host.get_by_label("Round title").fill("Class round")
    csv_file = tmp_path / "round.csv"
    csv_file.write_text(ROUND_CSV)
    host.get_by_label("File", exact=True).set_input_files(str(csv_file))
    host.get_by_role("button", name="Import").click()
    host.get_by_role("link", name="Play this round").click()
    host.get_by_role("button", name="Create room").click()
    expect(host).to_have_url(re.compile(r"/host/[A-Z2-9]{6}/$"))
    code = host.url.rstrip("/").rsplit("/", 1)[1]

    def join_all():
        for n in range(1, 21):
            services.player_join(code=code, nickname=f"Student {n:02d}", asks_more_time=n == 4)

    joining = threading.Thread(target=join_all)
    joining.start()
    joining.join()
    expect(host.locator("#player-count")).to_have_text("20 players", timeout=15000)
    chips = host.locator("#player-list li")
    expect(chips).to_have_count(20)
    expect(host.locator("#player-more")).to_be_hidden()
    box = host.locator("#player-list").bounding_box()
    for chip in chips.all():  # every chip drawn whole inside the list's box: none cut off, none under the controls
        chip_box = chip.bounding_box()
        assert box["y"] - 1 <= chip_box["y"] and chip_box["y"] + chip_box["height"] <= box["y"] + box["height"] + 1
        assert box["x"] - 1 <= chip_box["x"] and chip_box["x"] + chip_box["width"] <= box["x"] + box["width"] + 1
    for first in ("Student 01", "Student 02", "Student 03"):
        expect(host.locator("#player-list li", has_text=first)).to_be_visible()
    expect(chips.first).to_contain_text("Student 04")  # a waiting request comes first
    fourth = host.locator("#player-list li", has_text="Student 04")
    expect(fourth.get_by_text("asks for more time")).to_be_visible()
    expect(fourth.get_by_role("button", name="Give ×2: Student 04")).to_be_visible()
    expect(host.locator("#time-badge")).to_have_text("(1)")
    ARTIFACTS.mkdir(exist_ok=True)
    host.screenshot(path=str(ARTIFACTS / "host-lobby-20-request.png"))
    # The lobby's Extra time panel lists the request first, and answers it.
    host.locator("#time-panel summary").click()
    first_row = host.locator("#time-list li").first
    expect(first_row).to_contain_text("Student 04")
    first_row.get_by_role("button", name="Give ×1.5: Student 04").click()
    expect(host.locator("#time-list").get_by_label("Time: Student 04")).to_have_value("150")
    expect(host.locator("#time-badge")).to_be_hidden()
    expect(fourth.get_by_text("asks for more time")).to_be_hidden()
    expect(fourth.get_by_text("×1.5", exact=True)).to_be_visible()
    expect(host.locator("#time-list").get_by_role("link", name="All players")).to_be_visible()
