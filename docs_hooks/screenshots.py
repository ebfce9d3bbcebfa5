"""Take the README's screenshots (docs/img/) from a running server: the host screen and a phone mid-question.

Start a server as `make run` does (sample packs loaded), then:

    .venv/bin/python docs_hooks/screenshots.py http://127.0.0.1:8000

A host creates a room on the "World geography" pack, four phones join, the game starts and two phones answer;
the host screen (1366x768) in the lobby and mid-question, and one phone (390x844) are saved as small
palette PNGs.
"""

import re
import shutil
import sys
from io import BytesIO
from pathlib import Path

from PIL import Image
from playwright.sync_api import expect, sync_playwright

OUT = Path(__file__).resolve().parent.parent / "docs" / "img"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
PLAYERS = ["Ada", "Bo", "Chiara", "Dev"]


def save_small(png: bytes, path: Path, *, width: int, height: int | None = None) -> None:
    image = Image.open(BytesIO(png)).convert("RGB")
    if height is not None:
        image = image.crop((0, 0, image.width, min(height, image.height)))
    if image.width > width:
        image = image.resize((width, round(image.height * width / image.width)), Image.LANCZOS)
    image.quantize(colors=128, method=Image.Quantize.MEDIANCUT).save(path, optimize=True)


def main(url: str) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
        host = browser.new_context(viewport={"width": 1366, "height": 768}).new_page()
        host.goto(f"{url}/")
        host.get_by_role("radio", name=re.compile("^World geography")).check()
        host.get_by_label("Seconds per question (10–120)").fill("60")
        host.get_by_role("button", name="Create room").click()
        expect(host).to_have_url(re.compile(r"/host/[A-Z2-9]{6}/$"))
        code = host.url.rstrip("/").rsplit("/", 1)[1]

        phones = []
        for nickname in PLAYERS:
            context = browser.new_context(
                viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True, device_scale_factor=1
            )
            phone = context.new_page()
            phone.goto(f"{url}/play/{code}/")
            phone.get_by_label("Your nickname").fill(nickname)
            phone.get_by_role("button", name="Join").click()
            expect(phone.get_by_text("You're in!")).to_be_visible()
            phones.append(phone)
        expect(host.locator("#player-list li")).to_have_count(len(PLAYERS))
        host.wait_for_timeout(500)
        save_small(host.screenshot(), OUT / "host-lobby.png", width=1024)

        host.get_by_role("button", name="Start the game").click()
        for phone in phones:
            expect(phone.locator("#q-options button").first).to_be_visible()
        for phone, pick in zip(phones[1:3], (0, 1), strict=True):
            phone.locator("#q-options button").nth(pick).click()
        host.wait_for_timeout(1500)
        save_small(host.screenshot(), OUT / "host-question.png", width=1024)
        save_small(phones[0].screenshot(), OUT / "phone-question.png", width=390, height=500)
        browser.close()


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:8000")
