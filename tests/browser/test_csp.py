"""The pages work under the Content-Security-Policy in real Chromium: no violation is reported on the home,
host, player, round-editor and admin pages, and the game's WebSockets connect with connect-src 'self'."""

import re

import pytest
from django.core.management import call_command
from playwright.sync_api import expect

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# Recorded before any page script runs; Chromium also logs each refusal to the console.
RECORD_VIOLATIONS = """
window.__cspViolations = [];
document.addEventListener("securitypolicyviolation", (event) => {
  window.__cspViolations.push(`${event.violatedDirective} ${event.blockedURI} ${event.sourceFile}:${event.lineNumber}`);
});
"""


class Watched:
    """A page whose CSP violations (events and console lines) and WebSocket frames are recorded."""

    def __init__(self, context):
        context.add_init_script(RECORD_VIOLATIONS)
        self.page = context.new_page()
        self.console: list[str] = []
        self.frames: list[str] = []
        self.page.on("console", self._console)
        self.page.on("websocket", lambda ws: ws.on("framereceived", lambda payload: self.frames.append(ws.url)))

    def _console(self, message) -> None:
        if "Content Security Policy" in message.text or "Content-Security-Policy" in message.text:
            self.console.append(message.text)

    def violations(self) -> list[str]:
        return self.page.evaluate("() => window.__cspViolations") + self.console


@pytest.fixture
def packs(transactional_db):
    # Before the browser starts: Playwright's loop then runs in this thread, and Django refuses sync queries.
    call_command("load_packs", verbosity=0)


def test_no_page_breaks_the_policy_and_the_websockets_connect(admin_user, packs, live_url, browser):
    host = Watched(browser.new_context(viewport={"width": 1280, "height": 800}))
    response = host.page.goto(f"{live_url}/")
    assert "script-src 'self'" in response.headers["content-security-policy"]
    host.page.locator("input[name=source]").first.check()
    host.page.get_by_label("Seconds per question (10–120)").fill("30")
    host.page.get_by_role("button", name="Create room").click()
    expect(host.page).to_have_url(re.compile(r"/host/[A-Z2-9]{6}/$"))
    code = host.page.url.rstrip("/").rsplit("/", 1)[1]
    expect(host.page.locator(".qr svg")).to_be_visible()

    player = Watched(browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True))
    player.page.goto(f"{live_url}/play/{code}/")
    player.page.get_by_label("Your nickname").fill("Ada")
    player.page.get_by_role("button", name="Join").click()
    expect(player.page.get_by_text("You're in!")).to_be_visible()
    # The join reached the host over its own WebSocket: both sockets are connected under connect-src 'self'.
    expect(host.page.locator("#player-list li")).to_have_count(1)
    host.page.screenshot(path="/tmp/csp-host-lobby.png", full_page=True)
    assert any(url.startswith("ws://127.0.0.1:") for url in host.frames)
    assert any(url.startswith("ws://127.0.0.1:") for url in player.frames)

    # One question to the reveal: the answer bars are styled by script, which the policy must allow.
    host.page.get_by_role("button", name="Start the game").click()
    expect(player.page.locator('#q-options button[data-index="0"]')).to_be_visible()
    player.page.locator('#q-options button[data-index="0"]').click()
    expect(host.page.locator("#r-explanation")).to_be_visible()
    expect(host.page.locator("#r-options .bar").first).to_be_attached()
    host.page.screenshot(path="/tmp/csp-host-reveal.png", full_page=True)
    assert host.violations() == [] and player.violations() == []
    share = host.page.locator("#r-options .bar").first.evaluate("bar => bar.style.getPropertyValue('--share')")
    assert share in ("0", "1")

    # The host's other pages: "My questions", the editor (it clones a <template>), writing a round.
    for path in ["/rounds/", "/rounds/new/", "/rounds/import/", "/rounds/generate/"]:
        host.page.goto(f"{live_url}{path}")
        expect(host.page.locator("h1")).to_be_visible()
    host.page.goto(f"{live_url}/rounds/new/")
    host.page.get_by_role("button", name=re.compile("Add a question", re.I)).click()
    assert host.violations() == []

    # The admin, logged in through its own form.
    admin = Watched(browser.new_context())
    admin.page.goto(f"{live_url}/admin/login/")
    admin.page.get_by_label("Username").fill(admin_user.username)
    admin.page.get_by_label("Password").fill("password")
    admin.page.get_by_role("button", name="Log in").click()
    expect(admin.page.get_by_text("Site administration")).to_be_visible()
    # The sweep page carries its own <style> block: allowed in the admin only.
    paths = ["/admin/review/reviewitem/", "/admin/verifier/threshold/", "/admin/verifier/threshold/sweep/"]
    for path in [*paths, "/admin/lobby/room/"]:
        admin.page.goto(f"{live_url}{path}")
        expect(admin.page.locator("#content")).to_be_visible()
    assert admin.violations() == []
