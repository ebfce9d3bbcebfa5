"""The generation page in real Chromium: its live socket drops mid-round (a proxy between the browser and the
server cuts every connection), it reconnects on its own, and the page still ends on the finished round."""

import re
import threading

import pytest
from playwright.sync_api import expect

from tests.fakes.writer_server import *  # noqa: F403
from tests.fakes.writer_server import Turn, WriterServer, good_question
from tests.support.proxy import OutageProxy

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def held_writer(settings, writer_server: WriterServer):
    """A writer that starts no reply until the test lets it go, so the socket can drop while the job runs."""
    settings.OPENAI_BASE_URL = f"{writer_server.url}/v1"
    settings.OPENAI_API_KEY = "test-key"
    settings.QUIZ_WRITER_MODEL = "writer-2025-01-01"
    settings.QUIZ_WRITER_TIMEOUT = 30.0
    settings.VERIFIER_BACKEND = "off"
    # The job runs in the server's own process, as `make run` (no Redis, no worker) starts it.
    settings.QUIZ_GENERATION_RUNNER = "quiz.generation.runner.generation_start_in_process"
    release = threading.Event()

    def held_question(*args, **kwargs):
        release.wait(20)
        return good_question(*args, **kwargs)

    writer_server.writer.make_question = held_question
    yield release
    release.set()


def wait_until(page, condition, seconds: float = 10) -> None:
    for _ in range(int(seconds * 10)):
        if condition():
            return
        page.wait_for_timeout(100)  # lets Playwright deliver the page's events meanwhile
    raise AssertionError("timed out")


@pytest.fixture
def proxied_url(live_url):
    host, port = live_url.removeprefix("http://").split(":")
    proxy = OutageProxy(host, int(port))
    yield proxy, f"http://127.0.0.1:{proxy.port}"
    proxy.close()


def test_the_generation_page_reconnects_after_its_socket_drops_and_shows_the_round(held_writer, proxied_url, browser):
    proxy, url = proxied_url
    page = browser.new_context().new_page()
    # While the proxy is cut the browser itself logs failed connections; the page's own script must not throw.
    script_errors: list[str] = []
    page.on("pageerror", lambda error: script_errors.append(str(error)))
    sockets = []
    frames: dict[int, list[str]] = {}

    def opened(ws) -> None:
        sockets.append(ws)
        number = len(sockets)
        frames[number] = []
        ws.on("framereceived", lambda payload: frames[number].append(payload))

    page.on("websocket", opened)
    page.goto(f"{url}/rounds/generate/")
    page.get_by_label("Topic").fill("Birds")
    page.get_by_label("Questions", exact=True).fill("3")
    page.get_by_role("button", name="Write the round").click()
    expect(page.get_by_role("heading", name="Birds")).to_be_visible()
    expect(page.locator('[data-field="status_label"]')).to_have_text("Writing")
    wait_until(page, lambda: sockets and frames[1])
    assert len(sockets) == 1 and '"type": "progress"' in frames[1][0], "the page's socket has the job's snapshot"

    # Every connection is cut, new ones refused: the page says so and keeps trying.
    proxy.cut_off()
    expect(page.locator('[data-field="connection"]')).to_have_text("Reconnecting…")
    page.wait_for_timeout(1200)
    proxy.restore()
    expect(page.locator('[data-field="connection"]')).to_have_text("", timeout=15000)
    assert len(sockets) >= 2, "the page opened a new socket"
    wait_until(page, lambda: frames[len(sockets)])
    assert '"type": "progress"' in frames[len(sockets)][0], "the new socket got the job's snapshot"

    # The writer goes on; the round arrives, the page reloads and the server renders it.
    held_writer.set()
    expect(page.get_by_role("link", name="Play this round")).to_be_visible(timeout=20000)
    expect(page.locator('[data-field="status_label"]')).to_have_text("Done")
    expect(page.locator(".generated-questions > li")).to_have_count(3)
    assert script_errors == []


def test_the_generation_page_shows_a_refused_socket_and_connects_once_allowed(held_writer, live_url, browser, settings):
    settings.WS_MAX_PER_IP = 0  # every WebSocket from this address is refused, with a frame that says why
    page = browser.new_context().new_page()
    page.goto(f"{live_url}/rounds/generate/")
    page.get_by_label("Topic").fill("Birds")
    page.get_by_label("Questions", exact=True).fill("3")
    page.get_by_role("button", name="Write the round").click()
    connection = page.locator('[data-field="connection"]')
    # The refusal stays in sight while the page keeps trying.
    expect(connection).to_have_text(re.compile(r"^Too many connections from your network\. .* Reconnecting…$"))

    settings.WS_MAX_PER_IP = 30
    expect(connection).to_have_text("", timeout=15000)
    held_writer.set()
    expect(page.get_by_role("link", name="Play this round")).to_be_visible(timeout=20000)


def test_the_generation_page_counts_repeats_while_writing_and_says_why_the_round_is_short(
    settings, writer_server: WriterServer, live_url, browser
):
    settings.OPENAI_BASE_URL = f"{writer_server.url}/v1"
    settings.OPENAI_API_KEY = "test-key"
    settings.QUIZ_WRITER_MODEL = "writer-2025-01-01"
    settings.QUIZ_MAX_ATTEMPTS = 1
    settings.VERIFIER_BACKEND = "off"
    settings.QUIZ_GENERATION_RUNNER = "quiz.generation.runner.generation_start_in_process"
    planet = {"options": ["Mercury", "Venus", "Mars", "Earth"], "correct_index": 0, "explanation": ""}
    first, repeats = (
        "Who is the first planet from the Sun?",
        ["What is the first planet from the sun", "WHAT'S THE FIRST PLANET FROM THE SUN?"],
    )
    # The repeats come first and the reply goes on for seconds after them: the count shows while it is written.
    writer_server.writer.turns = [
        Turn(questions=[{**planet, "question": text} for text in [first, *repeats]] + [good_question(0, 1)])
    ]
    writer_server.writer.chars_per_token = 4
    writer_server.writer.token_delay = 0.03
    page = browser.new_context().new_page()
    page.goto(f"{live_url}/rounds/generate/")
    page.get_by_label("Topic").fill("Planets")
    page.get_by_label("Questions", exact=True).fill("3")
    page.get_by_role("button", name="Write the round").click()
    expect(page.locator('[data-field="duplicates"]')).to_have_text("2", timeout=10000)
    expect(page.locator('[data-field="status_label"]')).to_have_text("Writing")
    expect(page.get_by_role("link", name="Play this round")).to_be_visible(timeout=20000)
    expect(
        page.get_by_text(
            "2 questions repeated earlier ones and were dropped. "
            "This round has 2 usable questions of the 3 you asked for."
        )
    ).to_be_visible()
    expect(page.locator(".generated-questions > li")).to_have_count(2)
