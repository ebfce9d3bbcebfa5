"""A host and three players play a whole 3-question round to the podium in real Chromium pages."""

import re

import pytest
from playwright.sync_api import expect

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ROUND_CSV = """question,option_a,option_b,option_c,option_d,correct,explanation,source
What is 6 x 7?,42,36,48,56,A,Six times seven is forty-two.,arithmetic
Which gas do plants take in for photosynthesis?,Oxygen,Nitrogen,Carbon dioxide,Helium,C,They take in CO2.,biology
How many sides does a hexagon have?,Five,Six,Seven,Eight,B,A hexagon has six sides.,geometry
"""
CORRECT = ["42", "Carbon dioxide", "Six"]
WRONG = ["36", "Oxygen", "Eight"]


def test_host_and_three_players_play_a_round_to_the_podium(live_url, browser, tmp_path, settings):
    settings.CROWD_MIN_ANSWERS = 3  # three phones are a crowd here
    host_ctx = browser.new_context(viewport={"width": 1280, "height": 800})
    host = host_ctx.new_page()
    dialogs: list[str] = []
    host.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))

    # The host brings their own three questions (CSV import) and creates a room from them.
    host.goto(f"{live_url}/rounds/import/")
    host.get_by_label("Round title").fill("Browser round")
    csv_file = tmp_path / "round.csv"
    csv_file.write_text(ROUND_CSV)
    host.get_by_label("File", exact=True).set_input_files(str(csv_file))
    host.get_by_role("button", name="Import").click()
    expect(host.get_by_text("Imported 3 questions")).to_be_visible()
    host.get_by_role("link", name="Play this round").click()
    expect(host.get_by_role("radio", name=re.compile("^Browser round"))).to_be_checked()
    host.get_by_label("Seconds per question (10–120)").fill("30")
    host.get_by_role("button", name="Create room").click()
    expect(host).to_have_url(re.compile(r"/host/[A-Z2-9]{6}/$"))
    code = host.url.rstrip("/").rsplit("/", 1)[1]
    expect(host.locator(".big-code")).to_have_text(code)
    expect(host.locator(".qr svg")).to_be_visible()
    expect(host.locator("#check-status")).to_have_text("Not checked")

    # Three phones join with the code.
    players = []
    for nickname in ["Ada", "Bo", "Cy"]:
        ctx = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
        page = ctx.new_page()
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        page.goto(f"{live_url}/")
        page.get_by_label("Game code").fill(code.lower())
        page.get_by_role("button", name="Join", exact=True).click()
        page.get_by_label("Your nickname").fill(nickname)
        page.get_by_role("button", name="Join").click()
        expect(page.get_by_text("You're in!")).to_be_visible()
        players.append(page)
    expect(host.locator("#player-list li")).to_have_count(3)
    expect(host.locator("#player-count")).to_have_text("3 players")

    # A taken nickname gets a clear message.
    extra = browser.new_context().new_page()
    extra.goto(f"{live_url}/play/{code}/")
    extra.get_by_label("Your nickname").fill("ada")
    extra.get_by_role("button", name="Join").click()
    expect(extra.get_by_role("alert")).to_contain_text("already has that nickname")
    extra.context.close()

    host.get_by_role("button", name="Start the game").click()
    # Ada always right, Bo right only on the last question, Cy always wrong.
    for index in range(3):
        expect(host.locator("#q-progress")).to_have_text(f"Question {index + 1} of 3")
        for page in players:
            expect(page.locator("#q-progress")).to_have_text(f"Question {index + 1} of 3")
        picks = [CORRECT[index], CORRECT[index] if index == 2 else WRONG[index], WRONG[index]]
        for page, pick in zip(players, picks, strict=True):
            option_text = page.locator(".option-text", has_text=re.compile(rf"^{re.escape(pick)}$"))
            page.locator("#q-options button").filter(has=option_text).click()
        expect(players[0].locator("#locked-in")).to_contain_text("locked in")
        # Everyone answered: the question closes without waiting for the 30 s timer.
        expect(host.locator("#r-explanation")).to_be_visible()
        expect(host.locator("#r-options li.correct")).to_contain_text(CORRECT[index])
        expect(players[0].locator("#verdict")).to_contain_text("Correct! +")
        expect(players[2].locator("#verdict")).to_have_text("Not this time")
        expect(players[2].locator("#r-answer")).to_contain_text(CORRECT[index])
        if index == 0:
            # Two of three chose "36": the host's screen says the crowd disagrees, and the host voids it.
            expect(host.locator("#crowd-marker")).to_be_visible()
            host.get_by_role("button", name="Void this question").click()
            host.get_by_role("button", name="Confirm: void it (no points for anyone)").click()
            expect(host.locator("#voided-note")).to_be_visible()
            expect(players[0].locator("#verdict")).to_have_text("Voided by the host — no points for this question")
        elif index == 2:  # two of three right: no marker
            expect(host.locator("#crowd-marker")).to_be_hidden()
        host.get_by_role("button", name="Leaderboard").click()
        expect(host.locator("#leaderboard li").first).to_contain_text("Ada")
        expect(players[0].locator("#lb-rank")).to_have_text("You are #1 of 3")
        host.get_by_role("button", name=re.compile("Next question|Final results")).click()

    expect(host.locator("#podium li")).to_have_count(3)
    expect(host.locator("#podium .podium-1")).to_contain_text("Ada")
    expect(host.locator("#podium .podium-2")).to_contain_text("Bo")
    expect(players[0].locator("#final-rank")).to_contain_text("You finished #1 of 3")
    expect(players[2].locator("#final-rank")).to_contain_text("You finished #3 of 3 with 0 points")
    # Ada's first answer was voided: two correct answers, the second with a streak bonus, at most 2100 points.
    ada_points = int(re.search(r"with (\d+) points", players[0].locator("#final-rank").inner_text()).group(1))
    assert 1000 <= ada_points <= 2100

    # The results CSV downloads from the host's screen.
    with host.expect_download() as download_info:
        host.get_by_role("link", name="Download results (CSV)").click()
    lines = download_info.value.path().read_text(encoding="utf-8").splitlines()
    # Each question's column names it and its correct option.
    assert lines[0] == (
        "rank,nickname,score,Q1: What is 6 x 7? [correct A: 42],"
        "Q2: Which gas do plants take in for photosynthesis? [correct C: Carbon dioxide],"
        "Q3: How many sides does a hexagon have? [correct B: Six]"
    )
    assert lines[1].startswith("1,Ada,") and lines[3].startswith("3,Cy,0,")
    assert dialogs == []
