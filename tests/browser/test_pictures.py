"""A question's picture on the host screen and the phone: drawn from the app's own URL under the pages' CSP
(img-src 'self'), with its alt text, the question and its options still whole on the projector at 1366x768 and
1920x1080 (host_layout.js), in the question and at the reveal. Screenshots go to $TMPDIR/quizgate-pictures/."""

import io
import tempfile
import threading
from pathlib import Path

import pytest
from django.contrib.sessions.backends.db import SessionStore
from PIL import Image, ImageDraw
from playwright.sync_api import expect

from lobby import services
from lobby.tokens import HOST_TOKENS, host_token
from quiz.models import CheckStatus, Provenance
from quiz.pictures.images import image_from_bytes
from quiz.services import question_create
from quiz.validation import QuestionData
from tests.browser.page_checks import check_host_layout
from tests.factories import RoomFactory, RoundFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SHOTS = Path(tempfile.gettempdir()) / "quizgate-pictures"
SIZES = [(1366, 768), (1920, 1080)]
ALT = "A flag with three vertical stripes: blue, white and red"


def _flag() -> bytes:
    """A landscape photo-sized picture (3000 x 2000: shrunk to 1600 x 1067 when stored)."""
    image = Image.new("RGB", (3000, 2000), "white")
    draw = ImageDraw.Draw(image)
    draw.rectangle((0, 0, 999, 1999), fill=(0, 85, 164))
    draw.rectangle((2000, 0, 2999, 1999), fill=(239, 65, 53))
    buffer = io.BytesIO()
    image.save(buffer, format="JPEG", quality=90)
    return buffer.getvalue()


def _off_the_loop(call):
    result = {}
    thread = threading.Thread(target=lambda: result.setdefault("value", call()))
    thread.start()
    thread.join()
    return result.get("value")


def _room_with_a_picture():
    data = QuestionData(
        text="Which country's flag is this?",
        options=("France", "Italy", "Ireland", "The Netherlands"),
        correct_index=0,
        explanation="Blue, white and red in vertical stripes: the French tricolour.",
        image=image_from_bytes(_flag(), alt=ALT),
    )
    question = question_create(data=data, provenance=Provenance.HOST)
    # Checked by the gate, which reads the words only: the host screen says the picture was not checked.
    round_ = RoundFactory(title="Flags", questions=[question], check_status=CheckStatus.CHECKED)
    room = RoomFactory(round=round_, timer_seconds=120)
    session = SessionStore()
    session[HOST_TOKENS] = {room.code: host_token(room_code=room.code)}
    session.create()
    player = services.player_join(code=room.code, nickname="Ada")
    return room, session, player


def _picture_drawn(page, selector):
    picture = page.locator(f"{selector} img")
    expect(picture).to_be_visible()
    expect(picture).to_have_attribute("alt", ALT)
    expect(picture).to_have_attribute("src", __import__("re").compile(r"^/rounds/images/[0-9a-f]{64}\.jpg$"))
    # Loaded, not refused by the CSP or broken: the browser decoded it at its stored size.
    page.wait_for_function(f"document.querySelector('{selector} img').naturalWidth === 1600")
    box = picture.bounding_box()
    assert box["width"] > 100 and box["height"] > 60, box


def _each_size(page, name):
    for width, height in SIZES:
        page.set_viewport_size({"width": width, "height": height})
        check_host_layout(page, f"{name}-{width}x{height}", screenshots=SHOTS)
        box = page.locator("#phase-question:visible img, #phase-reveal:visible img").bounding_box()
        # A picture a room can see from the back: at least a quarter of the screen's height.
        assert box["height"] >= 0.25 * height, (name, width, height, box)


def test_the_picture_is_on_the_host_screen_and_the_phone_with_its_alt_text(live_url, browser):
    room, session, player = _off_the_loop(_room_with_a_picture)
    host = live_url.split("//")[1].split(":")[0]
    context = browser.new_context(viewport={"width": 1366, "height": 768})
    context.add_cookies([{"name": "sessionid", "value": session.session_key, "domain": host, "path": "/"}])
    page = context.new_page()
    refused = []
    page.on(
        "console", lambda message: refused.append(message.text) if "Content Security Policy" in message.text else None
    )
    page.goto(f"{live_url}/host/{room.code}/")
    expect(page.locator("#player-count")).to_contain_text("1")

    phone_context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True)
    phone = phone_context.new_page()
    phone.goto(f"{live_url}/play/{room.code}/")
    phone.evaluate("([key, token]) => localStorage.setItem(key, token)", [f"quizgate.player.{room.code}", player.token])
    phone.reload()

    page.locator("#start-btn").click()
    expect(page.locator("#q-text")).to_have_text("Which country's flag is this?")
    _picture_drawn(page, "#q-picture")
    expect(page.locator("#picture-unseen")).to_be_visible()
    expect(page.locator("#picture-unseen")).to_have_text("checked without its picture")
    _each_size(page, "question")

    expect(phone.locator("#q-text")).to_have_text("Which country's flag is this?")
    _picture_drawn(phone, "#q-picture")
    phone.screenshot(path=str(SHOTS / "phone-question-390x844.png"))
    # The answer buttons stay on the phone's first screen under the picture.
    last = phone.locator("#q-options button").last.bounding_box()
    assert last["y"] + last["height"] <= 844, last

    page.locator("#close-btn").click()
    expect(page.locator("#r-explanation")).to_contain_text("French tricolour")
    _picture_drawn(page, "#r-picture")
    _each_size(page, "reveal")
    assert refused == []
