"""The per-process cache of what the live game shows of a question."""

import pytest

from quiz import selectors

pytestmark = pytest.mark.django_db


def test_questions_of_rounds_no_longer_played_leave_the_cache(make_round, monkeypatch):
    clock = [1000.0]
    monkeypatch.setattr(selectors.time, "monotonic", lambda: clock[0])
    rounds = [make_round() for _ in range(170)]  # 3 questions each: 510 cached questions
    for round_ in rounds:
        for position in range(3):
            selectors.round_question_facts(round_id=round_.pk, position=position)
    assert selectors.round_question_facts_cached() == 510
    clock[0] += selectors.FACTS_TTL  # those rooms have moved on
    shown = selectors.round_question_facts(round_id=rounds[0].pk, position=1)
    assert shown.text == "Which planet is closest to the Sun?" and shown.option_count == 4
    # The 510 expired ones are gone; the round shown is kept whole (one query reads a round's questions).
    assert selectors.round_question_facts_cached() == 3
