"""The player's page in real Chromium: every phase of a game drawn from the room's snapshots (lobby, question,
reveal, leaderboard, podium) without a console error, played from the keyboard, and the server's refusals
(room full, rate limited, too many connections) shown to the player."""

import json
import re

import pytest
from playwright.sync_api import expect

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ROUND_CSV = """question,option_a,option_b,option_c,option_d,correct,explanation,source
What is 6 x 7?,36,42,48,56,B,Six times seven is forty-two.,arithmetic
How many sides does a hexagon have?,Five,Six,Seven,Eight,B,A hexagon has six sides.,geometry
"""
SHAPES = ["▲", "◆", "●", "■"]


def host_a_room(browser, live_url: str, tmp_path) -> tuple:
    host = browser.new_context(viewport={"width": 1280, "height": 800}).new_page()
    host.goto(f"{live_url}/rounds/import/")
    host.get_by_label("Round title").fill("Phases")
    csv_file = tmp_path / "round.csv"
    csv_file.write_text(ROUND_CSV)
    host.get_by_label("File", exact=True).set_input_files(str(csv_file))
    host.get_by_role("button", name="Import").click()
    host.get_by_role("link", name="Play this round").click()
    host.get_by_label("Seconds per question (10–120)").fill("30")
    host.get_by_role("button", name="Create room").click()
    expect(host).to_have_url(re.compile(r"/host/[A-Z2-9]{6}/$"))
    return host, host.url.rstrip("/").rsplit("/", 1)[1]


class PlayerPage:
    """A phone's page whose console errors, uncaught script errors and received frames are recorded."""

    def __init__(self, browser, url: str):
        self.page = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True).new_page()
        self.errors: list[str] = []
        self.frames: list[dict] = []
        self.page.on("console", lambda message: message.type == "error" and self.errors.append(message.text))
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))
        self.page.on("websocket", lambda ws: ws.on("framereceived", self._frame))
        self.page.goto(url)

    def _frame(self, payload: str) -> None:
        self.frames.append(json.loads(payload))

    def shown_phase(self):
        return expect(self.page.locator(".phase:visible"))

    def states(self, phase: str) -> list[dict]:
        return [frame for frame in self.frames if frame.get("type") == "state" and frame["phase"] == phase]


def test_a_player_page_shows_every_phase_from_the_keyboard_without_a_console_error(live_url, browser, tmp_path):
    host, code = host_a_room(browser, live_url, tmp_path)
    player = PlayerPage(browser, f"{live_url}/play/{code}/")
    page = player.page
    player.shown_phase().to_have_id("phase-join")
    page.get_by_label("Your nickname").fill("Ada")
    page.get_by_role("button", name="Join").click()

    player.shown_phase().to_have_id("phase-lobby")
    expect(page.locator("#lobby-count")).to_have_text("1 player in the game.")
    expect(page.locator("#me")).to_have_text("Ada")

    host.get_by_role("button", name="Start the game").click()
    player.shown_phase().to_have_id("phase-question")
    expect(page.locator("#q-progress")).to_have_text("Question 1 of 2")
    options = page.locator("#q-options button")
    expect(options).to_have_count(4)
    # Each option carries its index as data, and its colour comes with a shape and a letter.
    colours = set()
    for index in range(4):
        option = page.locator(f'#q-options button[data-index="{index}"]')
        expect(option.locator(".shape")).to_have_text(SHAPES[index])
        expect(option.locator(".letter")).to_have_text("ABCD"[index])
        colours.add(option.evaluate("node => getComputedStyle(node).backgroundColor"))
    assert len(colours) == 4
    expect(page.locator("#timer-live")).to_have_text("30 seconds left")  # the timer is announced
    # Nothing the player received before the reveal says which answer is right.
    assert player.states("question") and not any("correct" in json.dumps(s) for s in player.states("question"))

    # The room shows the options in its own order: find where it put "42".
    right = options.locator(".option-text").all_inner_texts().index("42")
    letter = "ABCD"[right]

    # The keyboard: Tab reaches an option and shows where the focus is; the option's number key answers it.
    page.keyboard.press("Tab")
    for _ in range(10):
        if page.evaluate("() => document.activeElement.matches('#q-options button')"):
            break
        page.keyboard.press("Tab")
    focused = page.locator("#q-options button:focus-visible")
    expect(focused).to_have_count(1)
    assert focused.evaluate("node => getComputedStyle(node).outlineStyle") != "none"
    page.keyboard.press(str(right + 1))
    expect(page.locator("#locked-in")).to_have_text(f"Answer {letter} locked in. Waiting for the others…")
    expect(page.locator(f'#q-options button[data-index="{right}"]')).to_have_class(re.compile(r"\bchosen\b"))
    other = (right + 1) % 4
    expect(page.locator(f'#q-options button[data-index="{other}"]')).not_to_have_class(re.compile(r"\bchosen\b"))

    # The only player answered: the question closes and the reveal is drawn.
    player.shown_phase().to_have_id("phase-reveal")
    expect(page.locator("#verdict")).to_contain_text("Correct! +")
    expect(page.locator("#r-answer")).to_have_text(f"{letter} — 42")

    host.get_by_role("button", name="Leaderboard").click()
    player.shown_phase().to_have_id("phase-leaderboard")
    expect(page.locator("#lb-rank")).to_have_text("You are #1 of 1")
    score = page.locator("#lb-score").inner_text()
    assert re.fullmatch(r"[1-9]\d* points", score)
    # A reload keeps the player in the game with the score.
    page.reload()
    player.shown_phase().to_have_id("phase-leaderboard")
    expect(page.locator("#lb-score")).to_have_text(score)
    expect(page.locator("#me")).to_have_text("Ada")

    host.get_by_role("button", name="Next question").click()
    player.shown_phase().to_have_id("phase-question")
    expect(page.locator("#q-progress")).to_have_text("Question 2 of 2")
    expect(page.locator("#locked-in")).to_be_hidden()  # a new question, not the last one's answer
    page.locator("#q-options button").filter(has_not_text="Six").first.click()
    player.shown_phase().to_have_id("phase-reveal")
    expect(page.locator("#verdict")).to_have_text("Not this time")
    host.get_by_role("button", name="Leaderboard").click()
    player.shown_phase().to_have_id("phase-leaderboard")
    host.get_by_role("button", name="Final results").click()
    player.shown_phase().to_have_id("phase-finished")
    expect(page.locator("#final-rank")).to_have_text(f"You finished #1 of 1 with {score}.")
    expect(host.locator("#podium .podium-1")).to_contain_text("Ada")

    assert player.errors == []
    assert {s["phase"] for s in player.frames if s.get("type") == "state"} == {
        "lobby", "question", "reveal", "leaderboard", "finished",
    }  # fmt: skip


def test_the_servers_refusals_are_shown_to_the_player(live_url, browser, tmp_path, settings):
    settings.ROOM_MAX_PLAYERS = 1
    host, code = host_a_room(browser, live_url, tmp_path)
    first = PlayerPage(browser, f"{live_url}/play/{code}/")
    first.page.get_by_label("Your nickname").fill("Ada")
    first.page.get_by_role("button", name="Join").click()
    expect(first.page.get_by_text("You're in!")).to_be_visible()

    # A second phone: the room is full.
    second = PlayerPage(browser, f"{live_url}/play/{code}/")
    second.page.get_by_label("Your nickname").fill("Bo")
    second.page.get_by_role("button", name="Join").click()
    expect(second.page.get_by_role("alert")).to_have_text(re.compile("^This game is full"))

    # A phone that sends faster than its budget: the one too many is refused, and it is told.
    settings.WS_RATE_BURST = 1
    settings.WS_RATE_PER_MINUTE = 1
    third = PlayerPage(browser, f"{live_url}/play/{code}/")
    third.page.get_by_label("Your nickname").fill("Cy")
    expect(third.page.locator("#phase-join")).to_be_visible()
    third.page.get_by_role("button", name="Join").click()
    expect(third.page.get_by_role("alert")).to_have_text(re.compile("^This game is full"))
    third.page.get_by_role("button", name="Join").click()
    expect(third.page.get_by_role("alert")).to_have_text("Too many messages: slow down. That one was ignored.")

    # One socket more than this address may open (the host's and three phones' are open).
    settings.WS_MAX_PER_IP = 4
    fourth = PlayerPage(browser, f"{live_url}/play/{code}/")
    expect(fourth.page.get_by_role("alert")).to_have_text(re.compile("^Too many connections from your network"))
    expect(fourth.page.locator("#conn-status")).to_have_text("Connection lost — reconnecting…")


# Every WebSocket the page makes, with the time it made it (performance.now(), ms) in window.__socketsOpenedAt.
OPENED_SOCKETS_RECORDED = """
(() => {
  const Native = window.WebSocket;
  window.__socketsOpenedAt = [];
  function Recorded(...args) {
    window.__socketsOpenedAt.push(performance.now());
    return new Native(...args);
  }
  Recorded.prototype = Native.prototype;
  Object.assign(Recorded, {CONNECTING: 0, OPEN: 1, CLOSING: 2, CLOSED: 3});
  window.WebSocket = Recorded;
})();
"""


def test_a_refused_page_backs_off_no_sooner_than_the_servers_hint_and_gets_in_once_a_place_is_free(
    live_url, browser, tmp_path, settings
):
    """A socket refused for its address's cap opens before it closes: the page must not take that open for a
    success (it used to, and retried every 0.25–0.5 s for as long as the cap was full)."""
    host, code = host_a_room(browser, live_url, tmp_path)
    settings.WS_MAX_PER_IP = 1  # the host's page holds this address's one place
    page = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True).new_page()
    # When the page opens each socket, on the page's own clock: the test's events arrive late on a loaded machine,
    # which made a gap look shorter than the page waited.
    page.add_init_script(OPENED_SOCKETS_RECORDED)
    hints: list[float] = []

    def frame(payload):
        message = json.loads(payload)
        if message.get("code") == "too_many_connections":
            hints.append(message["retry_after"])

    page.on("websocket", lambda ws: ws.on("framereceived", frame))
    page.goto(f"{live_url}/play/{code}/")
    page.wait_for_timeout(6000)
    assert hints and all(hint == hints[0] for hint in hints), hints
    opened = [at / 1000 for at in page.evaluate("window.__socketsOpenedAt")]
    gaps = [b - a for a, b in zip(opened, opened[1:], strict=False)]
    assert gaps and all(gap >= hints[0] * 0.95 for gap in gaps), (gaps, hints[0])
    settings.WS_MAX_PER_IP = 5  # a place comes free: the page gets in at its next try, and says nothing more
    expect(page.locator("#phase-join")).to_be_visible()
    expect(page.locator("#conn-status")).to_have_text("", timeout=15000)
    page.get_by_label("Your nickname").fill("Patient")
    page.get_by_role("button", name="Join").click()
    expect(host.get_by_text("Patient")).to_be_visible()


def test_a_join_form_left_idle_past_the_join_timeout_still_joins(live_url, browser, tmp_path, settings):
    """The server closes a socket that has not joined in time; the page waits quietly and reconnects to join."""
    settings.WS_JOIN_TIMEOUT = 1
    host, code = host_a_room(browser, live_url, tmp_path)
    page = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True).new_page()
    opened, closed, errors = [], [], []
    page.on("websocket", lambda ws: (opened.append(ws), ws.on("close", lambda _: closed.append(ws))))
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(f"{live_url}/play/{code}/")
    expect(page.locator("#phase-join")).to_be_visible()
    page.wait_for_timeout(2500)  # someone thinking of a nickname
    # The idle socket was closed, and the page did not open another one to idle again.
    assert len(opened) == 1 and closed == opened
    expect(page.locator("#conn-status")).to_have_text("")  # no "reconnecting" for an idle page
    page.get_by_label("Your nickname").fill("Slow")
    page.get_by_role("button", name="Join").click()
    expect(page.get_by_text("You're in!")).to_be_visible()
    expect(host.get_by_text("Slow")).to_be_visible()
    assert len(opened) == 2 and errors == []


def test_a_player_moved_to_another_worker_reconnects_at_once_without_a_word_and_plays_on(live_url, browser, tmp_path):
    """The server asks a player's socket to reconnect (close code 4012, lobby/realtime/rebalance.py): the page
    reconnects at once with its token, shows no "reconnecting", and the game goes on."""
    import asyncio

    from core.server_loop import server_loop
    from lobby.realtime import rebalance

    host, code = host_a_room(browser, live_url, tmp_path)
    player = PlayerPage(browser, f"{live_url}/play/{code}/")
    page = player.page
    opened = []
    page.on("websocket", lambda ws: opened.append(ws))
    page.get_by_label("Your nickname").fill("Ada")
    page.get_by_role("button", name="Join").click()
    player.shown_phase().to_have_id("phase-lobby")
    page.evaluate(
        """() => { const status = document.getElementById("conn-status"); window.statuses = [];
        new MutationObserver(() => window.statuses.push(status.textContent))
            .observe(status, {childList: true, characterData: true, subtree: true}); }"""
    )
    sockets_before = len(opened)

    async def move_players():
        for socket in list(rebalance._rebalancer().sockets):
            if socket.role == "player":
                await socket.close(code=rebalance.REBALANCE_CLOSE_CODE, reason=rebalance.REBALANCE_CLOSE_REASON)

    asyncio.run_coroutine_threadsafe(move_players(), server_loop()).result(5)
    # One new socket, resumed with the player's token (a second "joined" as the same player), at once.
    page.wait_for_timeout(500)
    assert len(opened) == sockets_before + 1
    joined = [f["player"] for f in player.frames if f.get("type") == "joined"]
    assert len(joined) == 2 and joined[0] == joined[1], joined
    expect(page.locator("#me")).to_have_text("Ada")
    assert page.evaluate("() => window.statuses.filter((text) => text !== '')") == []
    host.get_by_role("button", name="Start the game").click()
    player.shown_phase().to_have_id("phase-question")
    page.locator('#q-options button[data-index="0"]').click()
    expect(page.locator("#locked-in")).to_contain_text("locked in")
    assert player.errors == []
