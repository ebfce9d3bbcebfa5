"""A homework player whose answers are shown "only after the deadline" sees, in Chromium, nothing of them until
then, and after it every question with their answer, the verdict in the live phone's words ("Partly right!" for
a partly right multi answer) and the right answer drawn as the live phone draws each kind's reveal."""

from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from lobby.homework import services as homework
from lobby.models import Assignment, Player, Room
from quiz.importing import parse_json
from tests.browser.test_axe import AxeAudit
from tests.factories import RoundFactory
from tests.quiz.test_kinds import MIXED, _file

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# Ann's answers in the positions her page shows (the round's order: option_seed ""; an order question's items
# are never shown in order: [cat, horse, whale, ant], so the right order is positions [3, 0, 1, 2]).
GIVEN = [{"option": 0}, {"option": 1}, {"options": [0]}, {"text": "canberra"}, {"order": [3, 0, 1, 2]},
         {"value": 1970}, {"option": 1}, {"texts": ["sunny"]}]  # fmt: skip
# The round's last step is a slide: homework steps over it, so the seventh answer above finishes the homework.
# What each question's card says after the deadline: the verdict, Ann's answer, the right answer.
SHOWN = [
    ("Correct! +", "Your answer: A — Paris", "Answer: A — Paris"),
    ("Not this time", "Your answer: B — False", "Answer: A — True"),
    ("Partly right! +", "Your answer: A — 2", "Answer: A — 2; C — 4"),
    ("Correct! +", "Your answer: “canberra”", "Answer: Canberra"),
    ("Correct! +", "Your answer: ant → cat → horse → whale", "Answer: ant → cat → horse → whale"),
    ("Correct! +", "Your answer: 1970 AD", "Answer: 1969 AD"),
    ("Thanks — your vote is counted", "Your answer: B — Coffee", "Answer: A poll: no right answer"),
]


def _db(work):
    with ThreadPoolExecutor(1) as pool:  # Playwright's sync API keeps an event loop running in this thread
        return pool.submit(work).result()


def _assignment() -> str:
    round_ = RoundFactory(questions=parse_json(_file(MIXED)).questions)
    created = homework.assignment_create(
        round_id=round_.pk, deadline=timezone.now() + timedelta(days=1), reveal="deadline", timer_seconds=60
    )
    Room.objects.filter(pk=created.room.pk).update(option_seed="")
    return created.room.code


def _answer_every_question(code: str) -> None:
    player = Player.objects.get(room__code=code, nickname="Ann")
    for index, given in enumerate(GIVEN):
        homework.homework_open(player_id=player.pk, question_index=index)
        homework.homework_answer(player_id=player.pk, question_index=index, given=given)


def test_after_the_deadline_the_player_sees_each_kinds_right_answer(live_url, browser):
    audit = AxeAudit()
    code = _db(_assignment)
    phone = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True).new_page()
    phone.goto(f"{live_url}/hw/{code}/")
    phone.locator("#nickname").fill("Ann")
    phone.get_by_role("button", name="Join").click()
    expect(phone.locator("#open-question")).to_be_visible()
    _db(lambda: _answer_every_question(code))
    phone.reload()
    expect(phone.get_by_text("You have finished this homework.")).to_be_visible()
    expect(phone.locator("#final-later")).to_be_visible()
    expect(phone.locator("#hw-review")).to_be_hidden()
    assert "Paris" not in phone.content() and "Canberra" not in phone.content()

    _db(lambda: Assignment.objects.filter(room__code=code).update(deadline=timezone.now() - timedelta(seconds=1)))
    phone.reload()
    expect(phone.get_by_role("heading", name="The right answers")).to_be_visible()
    expect(phone.locator("#final-later")).to_be_hidden()
    cards = phone.locator("#hw-answers > li")
    expect(cards).to_have_count(len(MIXED))
    for index, (verdict, given, answer) in enumerate(SHOWN):
        card = cards.nth(index)
        expect(card.locator("h3")).to_have_text(MIXED[index]["question"])
        expect(card.locator(".verdict")).to_contain_text(verdict)
        expect(card.locator(".hw-given")).to_have_text(given)
        expect(card.locator(".right-answer")).to_have_text(answer)
    audit.check(phone, "homework-answers-after-deadline")
    audit.assert_clean()
