"""A host in real Chromium picks a file far over the upload cap on the AI round's page: the browser shows the 413
page in the host's language (the server answered while the browser was still sending), not a reset connection."""

import pytest
from playwright.sync_api import expect

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

MIB = 1024 * 1024


@pytest.fixture
def configured(settings):
    settings.OPENAI_API_KEY = "test-key"
    settings.OPENAI_BASE_URL = "http://127.0.0.1:9/v1"
    settings.QUIZ_WRITER_MODEL = "writer-2025-01-01"
    settings.VERIFIER_BACKEND = "off"


@pytest.mark.parametrize(("language", "heading", "text"), [
    ("en", "Too large", "at most 5.1 MB can be sent at once"),
    ("de", "Zu groß", "höchstens 5.1 MB können auf einmal gesendet werden"),
])  # fmt: skip
def test_a_file_over_the_cap_shows_the_too_large_page(configured, live_url, browser, tmp_path, language, heading, text):
    big = tmp_path / "notes.txt"
    with big.open("wb") as out:
        for _ in range(50):
            out.write(b"The kestrel hovers. " * (MIB // 20))
    page = browser.new_context(locale=language).new_page()
    page.goto(f"{live_url}/rounds/generate/")
    page.fill("input[name=topic]", "Birds")
    page.set_input_files("input[name=source_file]", str(big))
    statuses = []
    page.on("response", lambda response: statuses.append(response.status))
    with page.expect_navigation():
        page.click("main button.btn-primary")
    assert statuses[0] == 413
    expect(page.locator("h1")).to_have_text(heading)
    expect(page.locator("main")).to_contain_text(text)
    # Back leads to the form again, nothing saved.
    page.click("main a.btn")
    expect(page.locator("input[name=source_file]")).to_be_visible()
