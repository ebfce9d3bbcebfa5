"""Start while the round is still being written, in real Chromium pages (issue 30): the host opens a room on a
round with one question ready, the host's screen counts what is ready, waits at the leaderboard for the next one
("still being checked"), goes on by itself once it is ready, and ends early with a note when the writing stops.
The phone is in Spanish, counts the questions planned and is told of the wait and of the early end; the host's
check badge follows the round's check as questions pass."""

import re
from concurrent.futures import ThreadPoolExecutor

import pytest
from playwright.sync_api import expect

from quiz.models import Provenance, Question, Round

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ROUND_CSV = """question,option_a,option_b,option_c,option_d,correct,explanation,source
What is 6 x 7?,36,42,48,56,B,Six times seven is forty-two.,arithmetic
"""
TITLE = "Written live"


def _in_db(function):
    # In a thread of its own: Playwright's sync API keeps an event loop running in this one.
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(function).result()


def _being_written() -> None:
    Round.objects.filter(title=TITLE).update(writing=True, expected_count=3, check_counts={"total": 1})


def _second_question_ready() -> None:
    round_ = Round.objects.get(title=TITLE)
    question = Question.objects.create(
        text="What is 2 + 2?", options=["3", "4", "5"], correct_index=1, provenance=Provenance.MODEL
    )
    round_.entries.create(question=question, position=1)
    Round.objects.filter(pk=round_.pk).update(check_counts={"total": 2, "unchecked": 1})


def _writing_stopped() -> None:
    Round.objects.filter(title=TITLE).update(writing=False)


def _answer(phone, text: str) -> None:
    phone.locator("#q-options button").filter(has_text=text).click()
    expect(phone.locator("#verdict")).to_contain_text("¡Correcto!", timeout=15000)


def test_a_game_plays_its_ready_questions_waits_for_the_next_and_ends_early(live_url, browser, tmp_path):
    host = browser.new_context(viewport={"width": 1366, "height": 768}).new_page()
    host.goto(f"{live_url}/rounds/import/")
    host.get_by_label("Round title").fill(TITLE)
    csv_file = tmp_path / "round.csv"
    csv_file.write_text(ROUND_CSV)
    host.get_by_label("File", exact=True).set_input_files(str(csv_file))
    host.get_by_role("button", name="Import").click()
    _in_db(_being_written)
    host.get_by_role("link", name="Play this round").click()
    host.get_by_role("button", name="Create room").click()
    expect(host).to_have_url(re.compile(r"/host/[A-Z2-9]{6}/$"))
    code = host.url.rstrip("/").rsplit("/", 1)[1]
    expect(host.locator("#writing-note")).to_have_text("1 question ready, more are being checked")
    expect(host.locator("#check-status")).to_have_text("checked: the 1 passed")

    phone = browser.new_context(locale="es-ES", viewport={"width": 390, "height": 844}, is_mobile=True).new_page()
    phone.goto(f"{live_url}/play/{code}/")
    phone.get_by_label("Tu apodo").fill("Ada")
    phone.get_by_role("button", name="Unirse").click()
    expect(phone.get_by_text("¡Ya estás dentro!")).to_be_visible()

    host.get_by_role("button", name="Start the game").click()
    expect(phone.locator("#q-text")).to_have_text("What is 6 x 7?")
    # The round's planned count, not the one question ready so far.
    expect(phone.locator("#q-progress")).to_have_text("Pregunta 1 de 3")
    _answer(phone, "42")
    host.get_by_role("button", name="Leaderboard").click()
    host.get_by_role("button", name="Next question").click()
    # Not ready yet: the host's screen says so and waits.
    expect(host.locator("#writing-note")).to_have_text("Next question is still being checked… (1 ready)")
    expect(host.locator("#next-btn")).to_be_disabled()
    expect(phone.locator("#writing-note")).to_have_text("La siguiente pregunta aún se está escribiendo…")

    _in_db(_second_question_ready)
    # The clock moves the game on once it is ready.
    expect(phone.locator("#q-text")).to_have_text("What is 2 + 2?", timeout=10000)
    expect(host.locator("#q-text")).to_have_text("What is 2 + 2?")
    # The check badge follows the round's check as its questions pass, not the label of when the room opened.
    expect(host.locator("#check-status")).to_have_text("checked: 1 not checked")
    _answer(phone, "4")
    _in_db(_writing_stopped)
    host.get_by_role("button", name="Leaderboard").click()
    host.get_by_role("button", name=re.compile("Next question|Final results")).click()
    expect(host.locator("#writing-note")).to_have_text("The round ended early: its writing stopped after 2 questions.")
    expect(host.locator("#podium")).to_contain_text("Ada")
    expect(host.locator("#check-status")).to_have_text("checked: 1 not checked")
    # The phone is told why too.
    expect(phone.locator("#writing-note")).to_have_text(
        "La ronda terminó antes: su redacción se detuvo tras 2 preguntas."
    )
