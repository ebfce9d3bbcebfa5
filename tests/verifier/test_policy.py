import math

import pytest

from verifier import policy
from verifier.policy import GroundedBounds

# The bounds the settings ship with (config/settings_checker.py).
BOUNDS = GroundedBounds(
    supported_min=0.85, answers_question_min=0.80, unsupported_detail_max=0.15, contradiction_max=0.10
)
GOOD_GROUNDED = {"supported": 0.9, "answers_question": 0.85, "unsupported_detail": 0.1, "contradiction": 0.05}


def test_score_is_the_lower_of_answer_and_explanation():
    judgement = policy.closed_book_judgement(
        probabilities={"answer_correct": 0.77, "explanation_true": 0.45}, has_explanation=True, threshold=0.6
    )
    assert judgement.score == 0.45
    assert judgement.outcome == policy.Outcome.DROPPED


def test_answer_score_alone_when_there_is_no_explanation():
    assert policy.closed_book_checks(has_explanation=False) == ("answer_correct",)
    judgement = policy.closed_book_judgement(
        # A stray explanation probability is ignored when no explanation was asked about.
        probabilities={"answer_correct": 0.77, "explanation_true": 0.1},
        has_explanation=False,
        threshold=0.6,
    )
    assert judgement.score == 0.77
    assert judgement.outcome == policy.Outcome.PASSED


def test_both_checks_asked_when_there_is_an_explanation():
    assert policy.closed_book_checks(has_explanation=True) == ("answer_correct", "explanation_true")


@pytest.mark.parametrize(
    ("score", "outcome"),
    [(0.6, policy.Outcome.PASSED), (0.5999, policy.Outcome.DROPPED), (0.61, policy.Outcome.PASSED)],
)
def test_threshold_edge_equal_passes(score, outcome):
    judgement = policy.closed_book_judgement(
        probabilities={"answer_correct": score, "explanation_true": 0.99}, has_explanation=True, threshold=0.6
    )
    assert judgement.outcome == outcome


def test_grounded_passes_when_every_bound_holds():
    assert policy.grounded_judgement(probabilities=GOOD_GROUNDED, bounds=BOUNDS).outcome == policy.Outcome.PASSED


def test_grounded_bounds_are_inclusive():
    edge = {"supported": 0.85, "answers_question": 0.80, "unsupported_detail": 0.15, "contradiction": 0.10}
    assert policy.grounded_judgement(probabilities=edge, bounds=BOUNDS).outcome == policy.Outcome.PASSED


@pytest.mark.parametrize(
    ("check", "value"),
    [("supported", 0.84), ("answers_question", 0.79), ("unsupported_detail", 0.16), ("contradiction", 0.11)],
)
def test_grounded_any_bound_broken_drops(check, value):
    judgement = policy.grounded_judgement(probabilities={**GOOD_GROUNDED, check: value}, bounds=BOUNDS)
    assert judgement.outcome == policy.Outcome.DROPPED
    assert check in judgement.reason


def test_grounded_score_is_the_worst_margin():
    judgement = policy.grounded_judgement(probabilities={**GOOD_GROUNDED, "contradiction": 0.3}, bounds=BOUNDS)
    assert judgement.score == pytest.approx(0.7)


@pytest.mark.parametrize("value", [0.0, 1.0, 0.5, 1])
def test_is_probability_accepts(value):
    assert policy.is_probability(value)


@pytest.mark.parametrize("value", [math.nan, math.inf, -0.01, 1.01, "0.5", None, True])
def test_is_probability_refuses(value):
    assert not policy.is_probability(value)
