"""The "Gemischte Fragen" pack (every question kind, twice) played in German in Chromium: the host's screen at
1366x768 and a phone. Each kind is answered the way a player would (a tap, several taps and a button, typing, the
up and down buttons of an order, the number field), each page passes axe and fits its screen, and the phone's
verdict says right, partly right or wrong as the README's scoring does."""

import re
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.core.management import call_command
from playwright.sync_api import expect

from lobby.models import Answer
from tests.browser.page_checks import check_page
from tests.browser.test_axe import AxeAudit

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

RIGHT_ORDER = {
    4: ["Merkur", "Venus", "Erde", "Mars"],
    11: [
        "Das Ende des Weströmischen Reichs",
        "Die normannische Eroberung Englands",
        "Kolumbus erreicht Amerika",
        "Der Beginn der Französischen Revolution",
    ],
}


@pytest.fixture
def packs(transactional_db):
    call_command("load_packs", verbosity=0)


def _space(page) -> None:
    page.evaluate("document.activeElement && document.activeElement.blur()")
    page.keyboard.press("Space")


def _option(phone, text):
    return phone.locator("#q-options button.option").filter(
        has=phone.locator(".option-text", has_text=re.compile(rf"^{re.escape(text)}$"))
    )


def _put_in_order(phone, right: list[str]) -> None:
    """With the ↑ buttons only, as someone who cannot drag would: each item moved up to its place in turn."""
    for place, text in enumerate(right):
        while True:
            rows = phone.locator(".order-row .option-text").all_inner_texts()
            at = rows.index(text)
            if at == place:
                break
            phone.get_by_role("button", name=f"„{text}“ nach oben").click()


def test_the_mixed_pack_plays_every_kind_in_german_on_the_phone_and_the_host_screen(packs, live_url, browser):
    axe = AxeAudit()
    host = browser.new_context(locale="de-DE", viewport={"width": 1366, "height": 768}).new_page()
    host.goto(f"{live_url}/")
    host.locator("label", has_text="Gemischte Fragen").locator("input").check()
    host.get_by_role("button", name="Raum erstellen").click()
    expect(host).to_have_url(re.compile(r"/host/[A-Z2-9]{6}/$"))
    code = host.url.rstrip("/").rsplit("/", 1)[1]

    phone = browser.new_context(locale="de-DE", viewport={"width": 390, "height": 844}, is_mobile=True).new_page()
    phone.goto(f"{live_url}/play/{code}/")
    phone.get_by_label("Dein Spitzname").fill("Ada")
    phone.get_by_role("button", name="Mitspielen").click()
    expect(phone.get_by_text("Du bist dabei!")).to_be_visible()
    host.get_by_role("button", name="Spiel starten").click()

    # Question by question: (what the phone does, the verdict it then shows).
    def tap(text):
        return lambda: _option(phone, text).click()

    def several(*texts):
        def go():
            for text in texts:
                _option(phone, text).click()
            phone.get_by_role("button", name="Antwort abschicken").click()

        return go

    def typed(text):
        def go():
            phone.get_by_label("Deine Antwort").fill(text)
            phone.get_by_role("button", name="Antwort abschicken").click()

        return go

    def ordered(index):
        def go():
            _put_in_order(phone, RIGHT_ORDER[index])
            phone.get_by_role("button", name="Reihenfolge abschicken").click()

        return go

    def as_shown():
        return lambda: phone.get_by_role("button", name="Reihenfolge abschicken").click()

    def number(value):
        def go():
            phone.locator("#number-answer").fill(str(value))
            phone.get_by_role("button", name="Antwort abschicken").click()

        return go

    def words(*texts):
        def go():
            for n, text in enumerate(texts, start=1):
                phone.get_by_label(f"Antwort {n}").fill(text)
            phone.get_by_role("button", name="Antwort abschicken").click()

        return go

    plays = [
        (tap("Mars"), "Richtig!"),
        (tap("Falsch"), "Richtig!"),
        (several("2", "11", "17"), "Richtig!"),
        (typed("Canbera"), "Richtig!"),  # one typo forgiven
        (ordered(4), "Richtig!"),
        (number(1969), "Richtig!"),
        (tap("Den Weltraum"), "Danke – deine Stimme zählt"),
        (tap("Atlantik"), "Diesmal nicht"),
        (tap("Wahr"), "Richtig!"),
        (several("Spanien"), "Teilweise richtig!"),  # one of the three right ones
        (typed("Kupfer"), "Diesmal nicht"),
        (as_shown(), None),  # as the room shuffled it: some items may happen to be in place
        (number(8900), "Richtig!"),  # 51 m off, inside the 150 m band: points, fewer than exact
        (tap("Lesen"), "Danke – deine Stimme zählt"),
        (words("Neugier", " neugier ", "Experimente"), "Danke – deine Stimme zählt"),
        (words("Delfin"), "Danke – deine Stimme zählt"),
    ]
    for index, (answer, verdict) in enumerate(plays):
        expect(phone.locator("#q-progress")).to_contain_text(f"Frage {index + 1} von 16")
        expect(phone.locator("#q-options")).to_be_visible()
        if index < 7 or index == 14:  # the first of each kind: audited and measured, on both screens
            axe.check(phone, f"kind-{index}-phone-question")
            axe.check(host, f"kind-{index}-host-question")
            check_page(phone, f"kind-{index}-phone-de")
            check_page(host, f"kind-{index}-host-de-1366")
        answer()
        expect(phone.locator("#phase-reveal")).to_be_visible()
        if verdict:
            expect(phone.locator("#verdict")).to_contain_text(verdict)
        expect(host.locator("#phase-reveal")).to_be_visible()
        if index < 7 or index == 14:
            axe.check(phone, f"kind-{index}-phone-reveal")
            axe.check(host, f"kind-{index}-host-reveal")
            check_page(phone, f"kind-{index}-phone-de-reveal", scrolls=True)
            check_page(host, f"kind-{index}-host-de-1366-reveal")
        if index == 3:  # the typed answer's reveal: the accepted answer and what the room typed, as text
            expect(host.locator("#r-options")).to_contain_text("Akzeptiert: Canberra")
            expect(host.locator("#r-options")).to_contain_text("Canbera")
        if index == 14:  # the word cloud: the phone's words, a repeat sent once, each with its hide button
            expect(host.locator("#r-options .cloud-word .word")).to_have_text(["Neugier", "Experimente"])
            expect(host.get_by_role("button", name="„Neugier“ ausblenden")).to_be_visible()
        if index == 4:
            expect(host.locator("#r-options li.order-item")).to_have_text(
                [re.compile(rf"{n}\.\s*{re.escape(t)}") for n, t in enumerate(RIGHT_ORDER[4], 1)]
            )
        _space(host)
        expect(phone.locator("#phase-leaderboard")).to_be_visible()
        expect(host.locator("#phase-leaderboard")).to_be_visible()
        _space(host)
    expect(phone.locator("#phase-finished")).to_be_visible()
    axe.assert_clean()

    # What was stored agrees with what the phone said.
    with ThreadPoolExecutor(1) as pool:
        stored = pool.submit(
            lambda: list(
                Answer.objects.filter(player__nickname="Ada")
                .order_by("question_index")
                .values_list("correct", "credit", "points")
            )
        ).result()
    assert len(stored) == 16
    assert [correct for correct, _, _ in stored[:6]] == [True] * 6 and stored[6][2] == 0 and stored[13][2] == 0
    multi_partly, number_close = stored[9], stored[12]
    assert multi_partly[0] is False and 0 < multi_partly[1] < 1 and multi_partly[2] > 0
    assert number_close[0] is True and 0.5 < number_close[1] < 1
