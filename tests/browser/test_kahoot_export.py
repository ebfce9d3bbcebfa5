"""The Kahoot! export in real Chromium pages: from *My questions*, the host reaches a page that names each question
the spreadsheet shortens, changes or leaves out and why, then downloads the file, which says the same on its
"Export report" sheet. The page is laid out at 1366x768 and 1920x1080 and passes axe."""

import io
import json
from pathlib import Path

import pytest
from openpyxl import load_workbook
from playwright.sync_api import expect

from tests.browser.page_checks import check_page
from tests.browser.test_axe import AxeAudit
from tests.quiz.importers.test_kahoot_limits import RAW

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.mark.parametrize("viewport", [{"width": 1366, "height": 768}, {"width": 1920, "height": 1080}])
def test_the_host_sees_what_the_kahoot_export_changed_then_downloads_it(live_url, browser, viewport):
    audit = AxeAudit()
    page = browser.new_context(viewport=viewport, accept_downloads=True).new_page()
    page.goto(f"{live_url}/rounds/import/")
    page.get_by_label("Round title").fill("Rivers")
    page.get_by_label("Or paste GIFT, Aiken, Moodle XML, CSV or JSON").fill(json.dumps({"questions": RAW}))
    page.get_by_role("button", name="Import").click()
    expect(page.get_by_role("heading", name="Imported 6 questions")).to_be_visible()
    page.goto(f"{live_url}/rounds/")
    page.get_by_role("link", name="Export for Kahoot! of Rivers").click()
    expect(page.get_by_role("heading", name="6 changes to fit Kahoot!")).to_be_visible()
    rows = page.locator("#export-notes tbody tr")
    expect(rows).to_have_count(6)
    expect(rows.nth(2)).to_contain_text("left out: it has 5 answers; Kahoot! holds at most 4")
    expect(rows.nth(4)).to_contain_text("changed: its time of 45 s became 30 s, the nearest Kahoot! allows")
    size = f"{viewport['width']}"
    check_page(page, f"kahoot-export-report-{size}", scrolls=True)
    audit.check(page, f"kahoot-export-report-{size}")
    with page.expect_download() as download:
        page.get_by_role("link", name="Download the spreadsheet").click()
    book = load_workbook(io.BytesIO(Path(download.value.path()).read_bytes()), read_only=True)
    assert book.sheetnames == ["Sheet1", "Export report"]
    audit.assert_clean()
