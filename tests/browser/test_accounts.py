"""A host plays a game without an account, signs up afterwards, and finds the round, the game and its results
page in another browser; another account gets neither. Real Chromium pages, the real ASGI app."""

import re

import pytest
from playwright.sync_api import expect

from tests.browser.page_checks import check_page
from tests.browser.test_axe import AxeAudit

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ROUND_CSV = """question,option_a,option_b,option_c,option_d,correct,explanation,source
What is 6 x 7?,42,36,48,56,A,Six times seven is forty-two.,arithmetic
How many sides does a hexagon have?,Five,Six,Seven,Eight,B,A hexagon has six sides.,geometry
"""
PASSWORD = "a long and unusual passphrase"


def _play_a_game(browser, host, live_url: str, tmp_path) -> str:
    """Import two questions, host them, two phones play to the podium: Ada right twice, Bo wrong then right.
    Returns the game's code."""
    host.goto(f"{live_url}/rounds/import/")
    host.get_by_label("Round title").fill("Staff room quiz")
    csv_file = tmp_path / "round.csv"
    csv_file.write_text(ROUND_CSV)
    host.get_by_label("File", exact=True).set_input_files(str(csv_file))
    host.get_by_role("button", name="Import").click()
    host.get_by_role("link", name="Play this round").click()
    host.get_by_label("Seconds per question (10–120)").fill("30")
    host.get_by_role("button", name="Create room").click()
    expect(host).to_have_url(re.compile(r"/host/[A-Z2-9]{6}/$"))
    code = host.url.rstrip("/").rsplit("/", 1)[1]
    phones = []
    for nickname in ["Ada", "Bo"]:
        page = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True).new_page()
        page.goto(f"{live_url}/play/{code}/")
        page.get_by_label("Your nickname").fill(nickname)
        page.get_by_role("button", name="Join").click()
        expect(page.get_by_text("You're in!")).to_be_visible()
        phones.append(page)
    expect(host.locator("#player-list li")).to_have_count(2)
    host.get_by_role("button", name="Start the game").click()
    for index, picks in enumerate([("42", "36"), ("Six", "Six")]):
        expect(host.locator("#q-progress")).to_have_text(f"Question {index + 1} of 2")
        for page, pick in zip(phones, picks, strict=True):
            expect(page.locator("#q-progress")).to_have_text(f"Question {index + 1} of 2")
            option_text = page.locator(".option-text", has_text=re.compile(rf"^{re.escape(pick)}$"))
            page.locator("#q-options button").filter(has=option_text).click()
        expect(host.locator("#r-explanation")).to_be_visible()
        if index == 0:  # Bo says the first question is wrong
            phones[1].locator("#report-box summary").click()
            phones[1].get_by_label("What is wrong with it? (optional)").fill("36 is right, surely")
            phones[1].get_by_role("button", name="Send report").click()
            expect(phones[1].locator("#report-done")).to_be_visible()
        host.get_by_role("button", name="Leaderboard").click()
        host.get_by_role("button", name=re.compile("Next question|Final results")).click()
    expect(host.locator("#podium .podium-1")).to_contain_text("Ada")
    for page in phones:
        page.context.close()
    return code


def test_a_host_signs_up_after_a_game_and_reads_its_results_in_another_browser(live_url, browser, tmp_path):
    audit = AxeAudit()
    laptop = browser.new_context(viewport={"width": 1280, "height": 800}).new_page()
    code = _play_a_game(browser, laptop, live_url, tmp_path)
    # The results page is one click from the podium; the host signs up from the header.
    expect(laptop.get_by_role("link", name="Results page")).to_have_attribute("href", f"/host/{code}/results/")
    laptop.goto(f"{live_url}/games/")
    expect(laptop.locator("#past-games li")).to_have_count(1)
    laptop.get_by_role("navigation", name="Host").get_by_role("link", name="Sign up").click()
    laptop.get_by_label("Username").fill("mara")
    laptop.get_by_label("Password", exact=True).fill(PASSWORD)
    laptop.get_by_label("Password confirmation").fill(PASSWORD)
    check_page(laptop, "accounts-sign-up", scrolls=True)
    audit.check(laptop, "sign-up")
    laptop.get_by_role("button", name="Sign up").click()
    expect(laptop.get_by_role("status")).to_contain_text("1 round and 1 game are now in your account")
    laptop.context.close()

    # The classroom PC: sign in, and the round and the game are there.
    classroom = browser.new_context(viewport={"width": 1366, "height": 768}).new_page()
    classroom.goto(f"{live_url}/")
    classroom.get_by_role("navigation", name="Host").get_by_role("link", name="Sign in").click()
    classroom.get_by_label("Username").fill("mara")
    classroom.get_by_label("Password").fill(PASSWORD)
    classroom.get_by_role("button", name="Sign in").click()
    expect(classroom).to_have_url(f"{live_url}/games/")
    games = classroom.locator("#past-games li")
    expect(games).to_have_count(1)
    expect(games.first).to_contain_text("Staff room quiz")
    expect(games.first).to_contain_text("2 players")
    expect(games.first).to_contain_text("finished")
    check_page(classroom, "accounts-past-games", scrolls=True)
    audit.check(classroom, "past-games")
    classroom.get_by_role("link", name="My questions").click()
    expect(classroom.get_by_role("heading", name="Staff room quiz")).to_be_visible()

    classroom.goto(f"{live_url}/games/")
    classroom.get_by_role("link", name=re.compile("^Results")).click()
    expect(classroom).to_have_url(f"{live_url}/host/{code}/results/")
    rows = classroom.locator("#standings tbody tr")
    expect(rows).to_have_count(2)
    expect(rows.nth(0)).to_contain_text("Ada")
    expect(rows.nth(0).locator("td").nth(3)).to_have_text("2")
    expect(rows.nth(1)).to_contain_text("Bo")
    first, second = classroom.locator("#question-1"), classroom.locator("#question-2")
    expect(first.locator(".share-correct")).to_have_text("50% correct")
    expect(second.locator(".share-correct")).to_have_text("100% correct")
    expect(first.locator(".median-time")).to_contain_text(re.compile(r"median answer time \d+\.\d s"))
    expect(first.locator(".distribution li.correct")).to_contain_text("A: 42")
    expect(first.locator(".distribution li.correct .count")).to_have_text("1")
    expect(first.locator(".report-note")).to_contain_text("Reported by Bo: “36 is right, surely”")
    expect(second.locator(".distribution li.correct .count")).to_have_text("2")
    check_page(classroom, "accounts-results", scrolls=True)
    audit.check(classroom, "results")
    with classroom.expect_download() as download:
        classroom.get_by_role("link", name="Download results (CSV)").click()
    lines = download.value.path().read_text(encoding="utf-8").splitlines()
    header = "rank,nickname,score,Q1: What is 6 x 7? [correct A: 42],Q2: How many sides does a hexagon have? [correct B: Six]"  # noqa: E501
    assert lines[0] == header and lines[1].startswith("1,Ada,")

    # Another account: neither the game nor its results.
    other = browser.new_context().new_page()
    other.goto(f"{live_url}/accounts/sign-up/")
    other.get_by_label("Username").fill("olek")
    other.get_by_label("Password", exact=True).fill(PASSWORD)
    other.get_by_label("Password confirmation").fill(PASSWORD)
    other.get_by_role("button", name="Sign up").click()
    expect(other.locator("#no-games")).to_be_visible()
    response = other.goto(f"{live_url}/host/{code}/results/")
    assert response.status == 403
    expect(other.get_by_role("heading", name=f"This browser is not hosting game {code}")).to_be_visible()
    audit.assert_clean()
