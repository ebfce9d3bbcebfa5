"""The round editor with a mixed round, in Chromium, in English, German and Spanish at 1366x768 and 1920x1080:
each question shows its own kind's fields and only those, a blank block switched to another kind changes its
fields, and every box fits and reads (page_checks)."""

import pytest
from playwright.sync_api import expect

from tests.browser.page_checks import check_page
from tests.quiz.test_kinds import MIXED, _file

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

LABELS = {  # the kind picker's label and the "number" kind's option, as each language says them
    "en": ("Kind of question", "A number", "The right number"),
    "de": ("Art der Frage", "Eine Zahl", "Die richtige Zahl"),
    "es": ("Tipo de pregunta", "Un número", "El número correcto"),
}


@pytest.mark.parametrize("language", ["en", "de", "es"])
def test_the_editor_shows_each_questions_own_fields_in_every_language(live_url, browser, tmp_path, language):
    picker, number_label, number_field = LABELS[language]
    for width, height in ((1366, 768), (1920, 1080)):
        context = browser.new_context(viewport={"width": width, "height": height}, locale=language)
        host = live_url.split("//", 1)[1].split(":", 1)[0]
        context.add_cookies([{"name": "django_language", "value": language, "domain": host, "path": "/"}])
        page = context.new_page()
        page.goto(f"{live_url}/rounds/import/")
        page.locator("textarea").fill(_file(MIXED))
        page.locator("textarea").locator("xpath=ancestor::form").locator("button[type=submit]").click()
        page.locator("a[href$='/edit/']").first.click()
        blocks = page.locator("[data-question-block]")
        expect(blocks.first).to_be_visible()
        kinds = [item.get("kind", "single") for item in MIXED]
        for index, kind in enumerate(kinds):
            block = blocks.nth(index)
            expect(block.get_by_label(picker)).to_have_value(kind)
            # Only its own fields: an option list for those with options, the right number for a number, ...
            expect(block.locator("fieldset.options")).to_be_visible(
                visible=kind in ("single", "multi", "order", "poll")
            )
            expect(block.get_by_label(number_field)).to_be_visible(visible=kind == "number")
        check_page(page, f"kinds-editor-{language}-{width}", scrolls=True)
        # A blank block made a number question: its number fields appear, its options go.
        blank = blocks.nth(len(kinds))
        blank.get_by_label(picker).select_option(label=number_label)
        expect(blank.get_by_label(number_field)).to_be_visible()
        expect(blank.locator("fieldset.options")).to_be_hidden()
        context.close()
