"""What the gate decides from the probabilities a backend returned. Pure: no I/O, no Django."""

import math
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

from verifier.conf import GroundedBounds

ANSWER_CORRECT = "answer_correct"
EXPLANATION_TRUE = "explanation_true"
SUPPORTED = "supported"
ANSWERS_QUESTION = "answers_question"
UNSUPPORTED_DETAIL = "unsupported_detail"
CONTRADICTION = "contradiction"

GROUNDED_CHECKS = (SUPPORTED, ANSWERS_QUESTION, UNSUPPORTED_DETAIL, CONTRADICTION)


class Outcome(StrEnum):
    PASSED = "passed"
    DROPPED = "dropped"
    UNVERIFIED = "unverified"
    UNCHECKED = "unchecked"


@dataclass(frozen=True)
class Judgement:
    outcome: Outcome
    score: float
    reason: str = ""


def closed_book_checks(*, has_explanation: bool) -> tuple[str, ...]:
    # Asking about an explanation that is not there invites a guess the gate would then act on.
    return (ANSWER_CORRECT, EXPLANATION_TRUE) if has_explanation else (ANSWER_CORRECT,)


def grounded_checks() -> tuple[str, ...]:
    return GROUNDED_CHECKS


def is_probability(value: object) -> bool:
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and math.isfinite(value)
        and 0.0 <= float(value) <= 1.0
    )


def closed_book_score(*, probabilities: Mapping[str, float], has_explanation: bool) -> float:
    return min(float(probabilities[name]) for name in closed_book_checks(has_explanation=has_explanation))


def closed_book_judgement(*, probabilities: Mapping[str, float], has_explanation: bool, threshold: float) -> Judgement:
    score = closed_book_score(probabilities=probabilities, has_explanation=has_explanation)
    if score >= threshold:
        return Judgement(outcome=Outcome.PASSED, score=score)
    return Judgement(outcome=Outcome.DROPPED, score=score, reason=f"score {score:.2f} < threshold {threshold:.2f}")


def grounded_failures(*, probabilities: Mapping[str, float], bounds: GroundedBounds) -> list[str]:
    failures = []
    if probabilities[SUPPORTED] < bounds.supported_min:
        failures.append(f"{SUPPORTED} {probabilities[SUPPORTED]:.2f} < {bounds.supported_min:.2f}")
    if probabilities[ANSWERS_QUESTION] < bounds.answers_question_min:
        failures.append(f"{ANSWERS_QUESTION} {probabilities[ANSWERS_QUESTION]:.2f} < {bounds.answers_question_min:.2f}")
    if probabilities[UNSUPPORTED_DETAIL] > bounds.unsupported_detail_max:
        failures.append(
            f"{UNSUPPORTED_DETAIL} {probabilities[UNSUPPORTED_DETAIL]:.2f} > {bounds.unsupported_detail_max:.2f}"
        )
    if probabilities[CONTRADICTION] > bounds.contradiction_max:
        failures.append(f"{CONTRADICTION} {probabilities[CONTRADICTION]:.2f} > {bounds.contradiction_max:.2f}")
    return failures


def grounded_judgement(*, probabilities: Mapping[str, float], bounds: GroundedBounds) -> Judgement:
    # The score is only for display and sorting: the worst of the four, each turned so that higher is better.
    score = min(
        probabilities[SUPPORTED],
        probabilities[ANSWERS_QUESTION],
        1.0 - probabilities[UNSUPPORTED_DETAIL],
        1.0 - probabilities[CONTRADICTION],
    )
    failures = grounded_failures(probabilities=probabilities, bounds=bounds)
    if failures:
        return Judgement(outcome=Outcome.DROPPED, score=score, reason="; ".join(failures))
    return Judgement(outcome=Outcome.PASSED, score=score)
