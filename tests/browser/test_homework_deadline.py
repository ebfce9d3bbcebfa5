"""A homework player whose right answers are promised for after the deadline, and who keeps the finished page
open, sees them drawn in Chromium when the deadline passes, without a reload."""

from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from lobby.homework import services as homework
from lobby.models import Assignment, Player, Room
from tests.factories import RoundFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

AHEAD = timedelta(seconds=20)  # time enough to join and finish before the deadline


def _db(work):
    with ThreadPoolExecutor(1) as pool:  # Playwright's sync API keeps an event loop running in this thread
        return pool.submit(work).result()


def _assignment() -> str:
    created = homework.assignment_create(
        round_id=RoundFactory().pk, deadline=timezone.now() + AHEAD, reveal="deadline", timer_seconds=60
    )
    Room.objects.filter(pk=created.room.pk).update(option_seed="")  # the round's order: SAMPLE's indexes
    return created.room.code


def _finish(code: str) -> None:
    player = Player.objects.get(room__code=code, nickname="Ann")
    for index, option in enumerate([1, 2, 0]):  # tests/factories.py SAMPLE's right options
        homework.homework_open(player_id=player.pk, question_index=index)
        homework.homework_answer(player_id=player.pk, question_index=index, given={"option": option})


def test_the_answers_promised_after_the_deadline_appear_when_it_passes(live_url, browser):
    code = _db(_assignment)
    phone = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True).new_page()
    phone.goto(f"{live_url}/hw/{code}/")
    phone.locator("#nickname").fill("Ann")
    phone.get_by_role("button", name="Join").click()
    expect(phone.locator("#open-question")).to_be_visible()
    _db(lambda: _finish(code))
    phone.reload()
    expect(phone.get_by_text("You have finished this homework.")).to_be_visible()
    expect(phone.locator("#final-later")).to_be_visible()
    expect(phone.locator("#hw-review")).to_be_hidden()
    deadline = _db(lambda: Assignment.objects.get(room__code=code).deadline)
    assert timezone.now() < deadline, "the player finished after the deadline: nothing would be waited for"

    # No reload: the page asks again when the deadline has passed.
    wait_ms = (deadline - timezone.now()).total_seconds() * 1000
    expect(phone.get_by_role("heading", name="The right answers")).to_be_visible(timeout=wait_ms + 10_000)
    expect(phone.locator("#hw-answers > li")).to_have_count(3)
    expect(phone.locator("#hw-answers > li").first.locator(".verdict")).to_contain_text("Correct! +")
    expect(phone.locator("#final-score")).to_contain_text("Your score:")
    expect(phone.locator("#final-later")).to_be_hidden()
