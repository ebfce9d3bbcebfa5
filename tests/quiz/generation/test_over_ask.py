"""The over-ask from the data: from the drop rates of recent rounds, the over-ask that would have kept 95 % of them
whole (bounded 1.2x–2.5x); shown on the generate page and the sweep, and used when the operator lets it."""

import math

import pytest
from django.urls import reverse

from quiz.generation import over_ask
from quiz.generation.drop_rates import drop_history, over_ask_for
from quiz.generation.jobs import generation_job_create, generation_run
from quiz.models import GenerationJob, GenerationStatus, JobKind
from tests.quiz.generation import WRITER_MODEL

CHECKER_MODEL = "jev-1.13.0"


def test_the_suggested_over_ask_keeps_95_percent_of_the_rounds_whole():
    # 19 rounds that dropped a tenth, one that dropped 40 %: 95 % of them needed 1/(1 - 0.1) = 1.11x -> 1.2x.
    assert over_ask.suggested([0.1] * 19 + [0.4]) == 1.2
    # Two in twenty that dropped 40 % are more than 5 %: 1/(1 - 0.4) = 1.67x, rounded up to 1.7x.
    rates = [0.1] * 18 + [0.4, 0.4]
    assert over_ask.suggested(rates) == pytest.approx(1.7)
    assert over_ask.kept_whole(rates, 1.7) == 1.0 and over_ask.kept_whole(rates, 1.5) == 0.9
    # Exactly a fifth dropped needs exactly 1.25x: not rounded past it.
    assert over_ask.suggested([0.2] * 10) == pytest.approx(1.25)
    # A third dropped: 1.5x is just enough, the default.
    assert over_ask.suggested([1 / 3] * 10) == pytest.approx(1.5)


def test_the_suggestion_is_bounded_and_needs_a_history():
    assert over_ask.suggested([]) is None
    assert over_ask.suggested([0.0] * 30) == over_ask.LOWEST
    assert over_ask.suggested([0.9] * 30) == over_ask.HIGHEST
    assert over_ask.suggested([1.0] * 30) == over_ask.HIGHEST  # every question dropped
    assert over_ask.suggested([-0.5, 1.7, float("nan")]) == over_ask.HIGHEST  # clamped, the NaN left out
    assert math.isinf(over_ask.needed(1.0)) and over_ask.needed(0.5) == 2.0


def _history(rates, *, writer=WRITER_MODEL, checker=CHECKER_MODEL, checked=10) -> None:
    for rate in rates:
        GenerationJob.objects.create(
            kind=JobKind.WRITE,
            count=8,
            topic="History",
            status=GenerationStatus.DONE,
            gated=True,
            model_id=writer,
            checker_model_id=checker,
            checked=checked,
            dropped=round(rate * checked),
        )


@pytest.mark.django_db
def test_the_history_is_read_per_writer_and_checker(settings):
    settings.QUIZ_OVER_ASK_ROUNDS = 20
    _history([0.4] * 5)
    _history([0.1] * 30)  # newer: the last 20 rounds are these
    _history([0.9] * 5, checker="another-checker")
    history = drop_history(writer_model=WRITER_MODEL, checker_model=CHECKER_MODEL)
    assert history.rounds == 20 and history.median == pytest.approx(0.1) and history.suggested == 1.2
    assert drop_history(writer_model=WRITER_MODEL, checker_model="another-checker").suggested == 2.5


@pytest.mark.django_db
def test_the_over_ask_sets_itself_only_when_the_operator_lets_it(settings):
    settings.QUIZ_OVER_ASK_MIN_ROUNDS = 10
    _history([0.4] * 12)
    assert over_ask_for(writer_model=WRITER_MODEL, checker_model=CHECKER_MODEL) == 1.5
    settings.QUIZ_OVER_ASK_AUTO = True
    assert over_ask_for(writer_model=WRITER_MODEL, checker_model=CHECKER_MODEL) == pytest.approx(1.7)
    # Too few rounds of this pair yet: the default.
    assert over_ask_for(writer_model="new-writer", checker_model=CHECKER_MODEL) == 1.5


@pytest.mark.django_db(transaction=True)
def test_a_round_asks_for_the_over_ask_its_history_suggests(gate_on, settings, client):
    settings.QUIZ_OVER_ASK_AUTO = True
    settings.QUIZ_OVER_ASK_MIN_ROUNDS = 10
    _history([0.4] * 12)
    job = generation_job_create(owner_key="k", count=10, topic="Birds")
    generation_run(job_id=job.pk)
    job.refresh_from_db()
    assert job.status == GenerationStatus.DONE, job.message
    assert job.over_ask == pytest.approx(1.7) and job.asked == 17 and job.checker_model_id == CHECKER_MODEL
    assert (job.checked, job.dropped) == (17, 0)

    page = client.get(reverse("quiz:generate_new")).content.decode()
    row = page.split(f'data-writer="{WRITER_MODEL}" data-checker="{CHECKER_MODEL}"', 1)[1].split("</tr>", 1)[0]
    # 13 rounds now: twelve that dropped 40 % and the one just written that dropped none.
    assert "<td>13</td>" in row and "<td>40%</td>" in row and '"suggested-over-ask">1.70x<' in row
    assert "New rounds ask for the over-ask their writer and checker" in page
