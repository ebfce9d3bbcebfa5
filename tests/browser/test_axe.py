"""Every page and every phase of a game passes axe-core (the engine behind Lighthouse's accessibility audit) with no
serious or critical violation. axe-core comes with axe-playwright-python and is put into each page through the
browser's devtools protocol, so the pages' CSP (no inline script) stays as it is. The counts by impact are printed
for every page (`pytest -s` or the captured output of a failure)."""

import collections
import re

import pytest
from playwright.sync_api import expect

from tests.browser.test_quiz_night import ROUND_CSV

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

BLOCKING = {"serious", "critical"}
PHONE = {"width": 390, "height": 844}


class AxeAudit:
    def __init__(self):
        from axe_playwright_python.sync_playwright import Axe

        self.axe = Axe()
        self.counts: dict[str, collections.Counter] = {}
        self.blocking: dict[str, list[str]] = {}

    def check(self, page, name: str) -> None:
        page.wait_for_load_state("networkidle")
        results = self.axe.run(page)
        counts = collections.Counter()
        for violation in results.response["violations"]:
            impact = violation.get("impact") or "unknown"
            counts[impact] += len(violation["nodes"])
            if impact in BLOCKING:
                targets = [", ".join(map(str, node["target"])) for node in violation["nodes"][:3]]
                self.blocking.setdefault(name, []).append(
                    f"{impact} {violation['id']}: {violation['help']} at {targets}"
                )
        self.counts[name] = counts
        print(f"axe {name}: " + (", ".join(f"{k} {v}" for k, v in sorted(counts.items())) or "no violations"))
        for line in self.blocking.get(name, []):
            print(f"    {line}")

    def assert_clean(self) -> None:
        assert self.counts, "no page was audited"
        assert self.blocking == {}, "\n".join(
            f"{page}: {line}" for page, lines in self.blocking.items() for line in lines
        )


def _space(page) -> None:
    """The host's main button, as the projector's keyboard presses it."""
    page.evaluate("document.activeElement && document.activeElement.blur()")
    page.keyboard.press("Space")


def test_every_page_and_phase_passes_axe(live_url, browser, tmp_path):
    audit = AxeAudit()
    host = browser.new_context(viewport={"width": 1366, "height": 768}).new_page()
    host.goto(f"{live_url}/")
    audit.check(host, "home")
    host.goto(f"{live_url}/rounds/generate/")
    audit.check(host, "generate")
    host.goto(f"{live_url}/rounds/import/")
    audit.check(host, "import")
    host.get_by_label("Round title").fill("Capitals and shapes")
    csv_file = tmp_path / "round.csv"
    csv_file.write_text(ROUND_CSV)
    host.get_by_label("File", exact=True).set_input_files(str(csv_file))
    host.locator("form button[type=submit]").last.click()
    expect(host.locator("a[href*='/play/'], a[href*='edit'], form").first).to_be_visible()
    audit.check(host, "imported")
    host.goto(f"{live_url}/rounds/")
    audit.check(host, "rounds")
    edit = host.locator("a[href$='/edit/']").first
    if edit.count():
        edit.click()
        audit.check(host, "editor")
    host.goto(f"{live_url}/rounds/")
    host.get_by_role("link", name="Play this round").first.click()
    host.get_by_role("button", name="Create room").click()
    expect(host).to_have_url(re.compile(r"/host/[A-Z2-9]{6}/$"))
    code = host.url.rstrip("/").rsplit("/", 1)[1]
    audit.check(host, "host-lobby-empty")

    phone = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True).new_page()
    phone.goto(f"{live_url}/play/{code}/")
    audit.check(phone, "play-join")
    phone.get_by_label("Your nickname").fill("Ada")
    phone.get_by_role("button", name="Join").click()
    expect(host.locator("#player-list li")).to_have_count(1)
    audit.check(phone, "play-lobby")
    audit.check(host, "host-lobby")

    _space(host)
    expect(phone.locator("#q-options button").first).to_be_visible()
    audit.check(host, "host-question")
    audit.check(phone, "play-question")
    phone.locator("#q-options button").first.click()
    expect(host.locator("#r-options li.correct")).to_be_visible()
    audit.check(host, "host-reveal")
    audit.check(phone, "play-reveal")
    _space(host)
    expect(host.locator("#leaderboard li").first).to_be_visible()
    audit.check(host, "host-leaderboard")
    audit.check(phone, "play-leaderboard")
    _space(host)
    expect(phone.locator("#q-options button").first).to_be_visible()
    phone.locator("#q-options button").first.click()
    expect(host.locator("#r-options li.correct")).to_be_visible()
    for _ in range(3):  # reveal -> (leaderboard ->) podium
        if host.locator("#podium li").first.is_visible():
            break
        _space(host)
        host.wait_for_timeout(500)
    expect(host.locator("#podium li").first).to_be_visible()
    audit.check(host, "host-podium")
    audit.check(phone, "play-podium")
    host.goto(f"{live_url}/host/{code}/cohost/")
    audit.check(host, "cohost")
    audit.assert_clean()


def test_reduced_motion_is_respected(live_url, browser):
    """With the system's "reduce motion" on, the countdown bar does not slide; without it, it does."""
    bar_css = "getComputedStyle(document.querySelector('.countdown-bar')).transitionDuration"
    for motion, expected in (("reduce", "0s"), ("no-preference", "0.2s")):
        page = browser.new_context(reduced_motion=motion).new_page()
        page.goto(f"{live_url}/")
        page.evaluate(
            "() => { const t = document.createElement('div'); t.className = 'countdown-track phone';"
            " t.innerHTML = '<span class=\"countdown-bar\"></span>'; document.body.append(t); }"
        )
        assert page.evaluate(bar_css) == expected, motion
