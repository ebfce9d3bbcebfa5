"""Markup and script in every piece of text a person or a model can write — question, options, explanation,
source, round title, nickname, report — is shown as text in real Chromium: on the host and player screens,
the "My questions" pages, the home page and the Django admin. No dialog fires, no element is injected."""

import csv
import io
import re

import pytest
from playwright.sync_api import expect

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

QUESTION = "<img src=x onerror=alert('question')> What is 1 + 1?"
OPTIONS = ["<script>alert('a')</script>", "<b>2</b><img src=x onerror=alert('b')>", "</li><li>three", "4 & <i>4</i>"]
EXPLANATION = "<img src=x onerror=alert('explanation')> Because <svg onload=alert('svg')>"
SOURCE = 'javascript:alert("source")'
TITLE = "<script>alert('title')</script>Round"
NICKNAME = "<svg onload=alert()>"  # 20 characters, the most a nickname holds
REPORT = "<img src=x onerror=alert('report')><script>alert('r')</script>"


def _csv() -> str:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["question", "option_a", "option_b", "option_c", "option_d", "correct", "explanation", "source"])
    writer.writerow([QUESTION, *OPTIONS, "B", EXPLANATION, SOURCE])
    return out.getvalue()


def assert_inert(page) -> None:
    assert page.locator("img[src=x]").count() == 0
    assert page.locator("svg[onload]").count() == 0
    assert page.locator("b, i").filter(has_text=re.compile("^(2|4)$")).count() == 0
    scripts = page.evaluate("() => [...document.scripts].map(s => s.textContent).join('\\n')")
    assert "alert(" not in scripts


def test_markup_is_shown_as_text_everywhere(admin_user, live_url, browser, tmp_path):
    dialogs: list[str] = []
    host_ctx = browser.new_context()
    host = host_ctx.new_page()
    host.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))

    # The host imports a round whose every field carries markup.
    host.goto(f"{live_url}/rounds/import/")
    host.get_by_label("Round title").fill(TITLE)
    csv_file = tmp_path / "xss.csv"
    csv_file.write_text(_csv())
    host.get_by_label("File", exact=True).set_input_files(str(csv_file))
    host.get_by_role("button", name="Import").click()
    expect(host.get_by_text("Imported 1 question")).to_be_visible()
    assert_inert(host)

    # "My questions": the list and the editor show the text (in headings and in form fields).
    host.goto(f"{live_url}/rounds/")
    expect(host.locator(".round-card h3")).to_have_text(TITLE)
    assert_inert(host)
    host.locator(".round-card a", has_text="Edit").first.click()
    expect(host.locator("h1")).to_have_text(f"Edit “{TITLE}”")
    expect(host.locator("textarea, input[type=text]").first).to_have_value(TITLE)
    field_values = host.evaluate("() => [...document.querySelectorAll('textarea, input')].map(f => f.value)")
    for text in [QUESTION, *OPTIONS, EXPLANATION, SOURCE]:
        assert text in field_values
    assert_inert(host)

    # The home page lists the round by its title; the host creates a room from it.
    host.goto(f"{live_url}/")
    host.get_by_role("radio", name=TITLE).check()
    assert_inert(host)
    host.get_by_label("Seconds per question (10–120)").fill("60")
    host.get_by_role("button", name="Create room").click()
    expect(host).to_have_url(re.compile(r"/host/[A-Z2-9]{6}/$"))
    code = host.url.rstrip("/").rsplit("/", 1)[1]

    player_ctx = browser.new_context()
    player = player_ctx.new_page()
    player.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    player.goto(f"{live_url}/play/{code}/")
    player.get_by_label("Your nickname").fill(NICKNAME)
    player.get_by_role("button", name="Join").click()
    expect(player.get_by_text("You're in!")).to_be_visible()
    expect(player.locator("#me")).to_have_text(NICKNAME)
    expect(host.locator("#player-list .nick")).to_have_text(NICKNAME)
    for page in (host, player):
        assert_inert(page)

    host.get_by_role("button", name="Start the game").click()
    for page in (host, player):
        expect(page.locator("#q-text")).to_have_text(QUESTION)
        expect(page.locator("#q-options .option-text")).to_have_count(len(OPTIONS))
        assert_inert(page)
    # Every option shown as its text, in the order this room shows them (host and phone alike).
    shown = player.locator("#q-options .option-text").all_inner_texts()
    assert sorted(shown) == sorted(OPTIONS) and host.locator("#q-options .option-text").all_inner_texts() == shown
    right = shown.index(OPTIONS[1])
    player.locator(f'#q-options button[data-index="{right}"]').click()  # the right one
    for page in (host, player):
        expect(page.locator("#r-explanation")).to_have_text(EXPLANATION)
        assert_inert(page)
    expect(host.locator("#r-source")).to_have_text(f"Source: {SOURCE}")
    assert host.locator("#r-source a").count() == 0  # a source is text, never a link to javascript:
    expect(player.locator("#r-answer")).to_have_text(f"{'ABCD'[right]} — {OPTIONS[1]}")

    player.get_by_text("Report this question").click()
    player.get_by_label("What is wrong with it? (optional)").fill(REPORT)
    player.get_by_role("button", name="Send report").click()
    expect(player.get_by_text("Thanks — your report was sent")).to_be_visible()

    host.get_by_role("button", name="Leaderboard").click()
    expect(host.locator("#leaderboard .nick")).to_have_text(NICKNAME)
    host.get_by_role("button", name="Final results").click()
    expect(host.locator("#podium .nick")).to_have_text(NICKNAME)
    expect(host.locator("#final-board .nick")).to_have_text(NICKNAME)
    for page in (host, player):
        assert_inert(page)

    # The admin: a superuser logs in and reads the players, the report and the answers.
    admin = browser.new_context().new_page()
    admin.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    admin.goto(f"{live_url}/admin/login/?next=/admin/")
    admin.get_by_label("Username").fill(admin_user.username)
    admin.get_by_label("Password").fill("password")
    admin.get_by_role("button", name="Log in").click()
    expect(admin.get_by_text("Site administration")).to_be_visible()
    for path, shown in [
        ("/admin/lobby/player/", NICKNAME),
        ("/admin/lobby/report/", REPORT),
        ("/admin/lobby/report/", QUESTION[:80]),
        ("/admin/lobby/answer/", NICKNAME),
        ("/admin/lobby/room/", code),
    ]:
        admin.goto(f"{live_url}{path}")
        expect(admin.locator("#result_list")).to_contain_text(shown)
        assert_inert(admin)
        admin.locator("#result_list tbody tr th a").first.click()  # and its change page
        expect(admin.locator("#content-main form")).to_be_visible()
        assert_inert(admin)

    assert dialogs == []
    for ctx in (host_ctx, player_ctx, admin.context):
        ctx.close()
