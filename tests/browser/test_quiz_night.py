"""A quiz night on a projector and phones, in real Chromium: the host's screen at 1920x1080 and 1366x768 and
three phones at 390x844 play a round whose first question runs to three lines and has six options. Each phase
(lobby, question, reveal, leaderboard, podium) is measured in the page: every control inside the viewport, every
visible text at 4.5:1 or more over its background, nothing cut off; screenshots go to test-artifacts/."""

import csv
import io
import re

import pytest
from playwright.sync_api import expect

from tests.browser.page_checks import ARTEFACTS, check_page

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

LONG_QUESTION = (
    "Which of these cities, all of them capitals at some point in their country's long history and each of them "
    "standing on or near a great river, was the capital chosen for a new federation in the year 1908 by its parliament?"
)
OPTIONS = ["Canberra", "Melbourne", "Sydney", "Ottawa", "Brasília", "Washington, D.C."]


def _csv(rows: list[list[str]]) -> str:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["question", *[f"option_{letter}" for letter in "abcdef"], "correct", "explanation", "source"])
    writer.writerows(rows)
    return out.getvalue()


CANBERRA = "Canberra was chosen as a compromise between Sydney and Melbourne, the two largest cities."
HEXAGON = ["How many sides does a hexagon have?", "Five", "Six", "Seven", "Eight", "Nine", "Ten"]
ROUND_CSV = _csv(
    [
        [LONG_QUESTION, *OPTIONS, "A", CANBERRA, "https://en.wikipedia.org/wiki/Canberra"],
        [*HEXAGON, "B", "A hexagon has six sides.", "geometry"],
    ]
)
LONGEST_QUESTION = ("A question as long as a question may be, " * 8)[:299] + "?"
LONGEST_OPTIONS = [("An option of a hundred and twenty characters at most, " * 3)[:119] + str(i) for i in range(6)]
LONGEST_EXPLANATION = ("An explanation may run on for a while before it stops. " * 10)[:499] + "."
LONGEST_CSV = _csv([[LONGEST_QUESTION, *LONGEST_OPTIONS, "A", LONGEST_EXPLANATION, "https://example.org/" + "s" * 150]])
HOST_SIZES = [
    pytest.param({"width": 1920, "height": 1080}, id="1080p"),
    pytest.param({"width": 1366, "height": 768}, id="768p"),
]
PHONE = {"width": 390, "height": 844}
NICKNAMES = ["Ada", "Bartholomew-Jones", "Cy"]


def _blur(page) -> None:
    page.evaluate("document.activeElement && document.activeElement.blur()")


def _pick(page, text: str) -> None:
    option_text = page.locator(".option-text", has_text=re.compile(rf"^{re.escape(text)}$"))
    page.locator("#q-options button").filter(has=option_text).click()


@pytest.mark.parametrize("screen", HOST_SIZES)
def test_a_quiz_night_fits_the_projector_and_the_phones_at_every_phase(live_url, browser, tmp_path, screen):
    tag = f"{screen['width']}x{screen['height']}"
    host = browser.new_context(viewport=screen).new_page()
    host.goto(f"{live_url}/rounds/import/")
    host.get_by_label("Round title").fill("Capitals and shapes: a quiz night")
    csv_file = tmp_path / "round.csv"
    csv_file.write_text(ROUND_CSV)
    host.get_by_label("File", exact=True).set_input_files(str(csv_file))
    host.get_by_role("button", name="Import").click()
    expect(host.get_by_text("Imported 2 questions")).to_be_visible()
    host.get_by_role("link", name="Play this round").click()
    host.get_by_label("Seconds per question (10–120)").fill("60")
    host.get_by_role("button", name="Create room").click()
    expect(host).to_have_url(re.compile(r"/host/[A-Z2-9]{6}/$"))
    code = host.url.rstrip("/").rsplit("/", 1)[1]
    expect(host.locator("#round-title")).to_have_text("Capitals and shapes: a quiz night")
    check_page(host, f"host-{tag}-1-lobby-empty")

    phones = []
    for nickname in NICKNAMES:
        phone = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True).new_page()
        phone.goto(f"{live_url}/play/{code}/")
        if not phones:
            check_page(phone, "phone-1-join")
        phone.get_by_label("Your nickname").fill(nickname)
        phone.get_by_role("button", name="Join").click()
        expect(phone.get_by_text("You're in!")).to_be_visible()
        phones.append(phone)
    expect(host.locator("#player-list li")).to_have_count(3)
    check_page(host, f"host-{tag}-2-lobby")
    check_page(phones[0], "phone-2-lobby")

    # Space starts the game, as the host's main button would.
    _blur(host)
    host.keyboard.press("Space")
    expect(host.locator("#q-progress")).to_have_text("Question 1 of 2")
    expect(host.locator("#q-options li")).to_have_count(6)
    # The question is large and really wraps onto three lines or more; the countdown shows a number and a bar.
    size = host.locator("#q-text").evaluate(
        """el => {
          const style = getComputedStyle(el);
          const lines = Math.round(el.getBoundingClientRect().height / parseFloat(style.lineHeight));
          return { font: parseFloat(style.fontSize), lines };
        }"""
    )
    assert size["lines"] >= 3, size
    if screen["height"] == 1080:
        assert size["font"] >= 48, size
    expect(host.locator("#timer")).to_have_text(re.compile(r"^\d+$"))
    bar = host.locator("#countdown-bar").evaluate(
        "el => el.getBoundingClientRect().width / el.parentElement.getBoundingClientRect().width"
    )
    assert 0.5 < bar <= 1
    grid = host.locator("#q-options li").evaluate_all(
        "items => items.map(i => Math.round(i.getBoundingClientRect().left))"
    )
    assert len(set(grid)) == 2, grid  # two columns
    check_page(host, f"host-{tag}-3-question")
    check_page(phones[0], "phone-3-question")

    # Question 1: only Bartholomew is right.
    _pick(phones[1], "Canberra")
    _pick(phones[0], "Sydney")
    expect(phones[0].locator("#locked-in")).to_contain_text("locked in")
    check_page(phones[0], "phone-4-locked-in")
    expect(host.locator("#answered-count")).to_have_text("2")
    _pick(phones[2], "Melbourne")

    expect(host.locator("#r-options li.correct")).to_contain_text("Canberra")
    # Each bar's fill over its own track (the right option's card, and so its track, may be drawn wider).
    shares = host.locator("#r-options .bar").evaluate_all(
        "bars => bars.map(b => parseFloat(getComputedStyle(b, '::after').width) / b.getBoundingClientRect().width)"
    )
    # One answer each on Canberra, Sydney and Melbourne, none on the other three: bars of a third of the track,
    # and empty ones, wherever the room's own order put those options.
    shown = host.locator("#r-options li .option-text").all_inner_texts()
    answered = {"Canberra", "Sydney", "Melbourne"}
    expected = [0.33 if text in answered else 0 for text in shown]
    assert sorted(expected, reverse=True) == [0.33, 0.33, 0.33, 0, 0, 0], shown
    assert [round(share, 2) for share in shares] == expected, (shown, shares)
    expect(host.locator("#r-options li.wrong").first).to_have_css("opacity", "1")
    check_page(host, f"host-{tag}-4-reveal")
    for phone in phones:
        expect(phone.locator("#r-tally")).to_be_visible()
    expect(phones[1].locator("#r-mine .option.right")).to_contain_text("Canberra")
    # Canberra in the colour and shape of the place the room showed it at.
    canberra_at = str(shown.index("Canberra"))
    expect(phones[1].locator("#r-mine .option")).to_have_attribute("data-index", canberra_at)
    expect(phones[1].locator("#r-mine .shape")).to_have_text(["▲", "◆", "●", "■", "★", "⬟"][int(canberra_at)])
    expect(phones[1].locator("#r-rank")).to_have_text("#1")
    points = int(phones[1].locator("#r-points").inner_text().lstrip("+"))
    assert points > 0
    expect(phones[1].locator("#r-total")).to_have_text(str(points))
    expect(phones[0].locator("#r-mine .option.wrong")).to_contain_text("Sydney")
    expect(phones[0].locator("#r-mine .mark")).to_have_text("✘ Wrong")
    expect(phones[0].locator("#r-points")).to_have_text("+0")
    expect(phones[0].get_by_text("Waiting for the host…")).to_be_visible()
    check_page(phones[1], "phone-5-reveal-right")
    check_page(phones[0], "phone-5-reveal-wrong")

    _blur(host)
    host.keyboard.press("Space")
    expect(host.locator("#leaderboard li").first).to_contain_text("Bartholomew-Jones")
    check_page(host, f"host-{tag}-5-leaderboard-1")
    expect(phones[0].get_by_text("Waiting for the host to start the next question…")).to_be_visible()
    check_page(phones[0], "phone-6-leaderboard")

    _blur(host)
    host.keyboard.press("Space")
    expect(host.locator("#q-progress")).to_have_text("Question 2 of 2")
    # Question 2: Ada and Cy right, Bartholomew wrong.
    _pick(phones[0], "Six")
    _pick(phones[2], "Six")
    _pick(phones[1], "Ten")
    expect(host.locator("#r-options li.correct")).to_contain_text("Six")
    _blur(host)
    host.keyboard.press("Space")
    expect(host.locator("#leaderboard li")).to_have_count(3)
    # Ada moved up from a shared second place or below to the top: the board says so.
    first = host.locator("#leaderboard li").first
    expect(first).to_contain_text("Ada")
    expect(first.locator(".move.up")).to_have_text(re.compile(r"^▲ \d$"))
    check_page(host, f"host-{tag}-6-leaderboard-2")

    _blur(host)
    host.keyboard.press("Space")
    expect(host.locator("#podium li")).to_have_count(3)
    expect(host.locator("#podium .podium-1 .place")).to_have_text("1")
    # Places 1, 2 and 3 on the steps (two players with the same score share a place, as on the board).
    places = [int(host.locator(f"#podium .podium-{step} .place").inner_text()) for step in (1, 2, 3)]
    board = [int(rank.rstrip(".")) for rank in host.locator("#final-board .rank").all_inner_texts()[:3]]
    assert places == board and places[0] == 1 and places[2] <= 3, (places, board)
    check_page(host, f"host-{tag}-7-podium")
    for phone in phones:
        expect(phone.locator("#p-podium li.me-row")).to_have_count(1)
    expect(phones[0].locator("#p-podium li.me-row")).to_contain_text("Ada (you)")
    check_page(phones[0], "phone-7-podium")
    again = phones[0].get_by_role("link", name="Join another game")
    again.click()
    expect(phones[0].get_by_role("heading", name="Join a game")).to_be_visible()
    expect(phones[0].locator("#create-room")).to_have_count(0)  # not the host's form
    print(f"\nscreenshots in {ARTEFACTS}")


def test_the_host_screen_has_a_full_screen_button_and_a_long_question_is_not_cut_off(live_url, browser, tmp_path):
    host = browser.new_context(viewport={"width": 1366, "height": 768}).new_page()
    host.goto(f"{live_url}/rounds/import/")
    host.get_by_label("Round title").fill("Long")
    csv_file = tmp_path / "round.csv"
    csv_file.write_text(LONGEST_CSV)
    host.get_by_label("File", exact=True).set_input_files(str(csv_file))
    host.get_by_role("button", name="Import").click()
    host.get_by_role("link", name="Play this round").click()
    host.get_by_role("button", name="Create room").click()
    code = host.url.rstrip("/").rsplit("/", 1)[1]
    phone = browser.new_context(viewport=PHONE, is_mobile=True).new_page()
    phone.goto(f"{live_url}/play/{code}/")
    phone.get_by_label("Your nickname").fill("Ada")
    phone.get_by_role("button", name="Join").click()
    expect(host.locator("#player-list li")).to_have_count(1)
    host.get_by_role("button", name="Full screen").click()
    expect(host.get_by_role("button", name="Leave full screen")).to_be_visible()
    assert host.evaluate("document.fullscreenElement === document.documentElement")
    _blur(host)
    host.keyboard.press("f")
    expect(host.get_by_role("button", name="Full screen")).to_be_visible()
    host.get_by_role("button", name="Start the game").click()
    expect(host.locator("#q-options li")).to_have_count(6)
    check_page(host, "host-1366x768-longest-question")
    check_page(phone, "phone-longest-question", scrolls=True)
    phone.locator('#q-options button[data-index="0"]').click()
    expect(host.locator("#r-options li.correct")).to_be_visible()
    check_page(host, "host-1366x768-longest-reveal")
    check_page(phone, "phone-longest-reveal", scrolls=True)


def test_a_full_room_tells_the_phone_what_to_do_and_the_home_and_join_pages_read_well(
    live_url, browser, tmp_path, settings
):
    settings.ROOM_MAX_PLAYERS = 1
    host = browser.new_context(viewport={"width": 1366, "height": 768}).new_page()
    host.goto(f"{live_url}/rounds/import/")
    host.get_by_label("Round title").fill("Full")
    csv_file = tmp_path / "round.csv"
    csv_file.write_text(ROUND_CSV)
    host.get_by_label("File", exact=True).set_input_files(str(csv_file))
    host.get_by_role("button", name="Import").click()
    host.get_by_role("link", name="Play this round").click()
    check_page(host, "host-1366x768-0-home", scrolls=True)
    host.get_by_role("button", name="Create room").click()
    code = host.url.rstrip("/").rsplit("/", 1)[1]
    phones = [browser.new_context(viewport=PHONE, is_mobile=True).new_page() for _ in range(2)]
    for phone, nickname in zip(phones, ["Ada", "Bo"], strict=True):
        phone.goto(f"{live_url}/play/{code}/")
        phone.get_by_label("Your nickname").fill(nickname)
        phone.get_by_role("button", name="Join").click()
    expect(phones[0].get_by_text("You're in!")).to_be_visible()
    expect(phones[1].get_by_role("alert")).to_have_text(re.compile("^This game is full"))
    expect(phones[1].locator("#join-hint")).to_have_text(
        "Ask the host to remove a player who has left, or to start a second game for the rest of you."
    )
    check_page(phones[1], "phone-0-room-full")
    # The host removes Ada: Bo joins on the second try, and the hint is gone.
    host.get_by_role("button", name="Remove Ada").click()
    expect(phones[0].get_by_text("You were removed from this game")).to_be_visible()
    check_page(phones[0], "phone-0-removed")
    phones[1].get_by_role("button", name="Join").click()
    expect(phones[1].get_by_text("You're in!")).to_be_visible()
    expect(phones[1].locator("#join-hint")).to_be_hidden()
    phones[0].get_by_role("link", name="Join another game").click()
    expect(phones[0]).to_have_url(re.compile(r"/join/$"))
    check_page(phones[0], "phone-0-join-page")
    phones[0].goto(f"{live_url}/")
    check_page(phones[0], "phone-0-home", scrolls=True)
