"""What the gate decides from the probabilities a backend returned. Pure: no I/O, no Django."""

import hashlib
import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

ANSWER_CORRECT = "answer_correct"
EXPLANATION_TRUE = "explanation_true"
SUPPORTED = "supported"
ANSWERS_QUESTION = "answers_question"
UNSUPPORTED_DETAIL = "unsupported_detail"
CONTRADICTION = "contradiction"
# P(marked option) when the checker answers the question blind (without the marked answer or the explanation).
BLIND = "blind"

GROUNDED_CHECKS = (SUPPORTED, ANSWERS_QUESTION, UNSUPPORTED_DETAIL, CONTRADICTION)


@dataclass(frozen=True)
class GroundedBounds:
    """The four bounds a grounded question must keep (read from settings by `verifier.conf.grounded_bounds`)."""

    supported_min: float
    answers_question_min: float
    unsupported_detail_max: float
    contradiction_max: float


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


def scored_checks(*, has_explanation: bool, has_blind: bool = False) -> tuple[str, ...]:
    """The probabilities whose minimum is the closed-book score."""
    return closed_book_checks(has_explanation=has_explanation) + ((BLIND,) if has_blind else ())


def closed_book_score(*, probabilities: Mapping[str, float], has_explanation: bool, has_blind: bool = False) -> float:
    checks = scored_checks(has_explanation=has_explanation, has_blind=has_blind)
    return min(float(probabilities[name]) for name in checks)


def passes(*, score: float, threshold: float) -> bool:
    """The gate's pass rule: a score at or above the threshold passes (the sweep asks the same question)."""
    return score >= threshold


def closed_book_judgement(
    *, probabilities: Mapping[str, float], has_explanation: bool, threshold: float, has_blind: bool = False
) -> Judgement:
    score = closed_book_score(probabilities=probabilities, has_explanation=has_explanation, has_blind=has_blind)
    if passes(score=score, threshold=threshold):
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


@dataclass(frozen=True)
class BlindReading:
    """What the blind answer says about the marked option."""

    probabilities: dict[str, float]  # option letter -> probability, summing to 1
    marked: str
    marked_probability: float
    pick: str  # the most probable option (the marked one on a tie)
    pick_probability: float
    disagrees: bool  # the checker confidently chose another option

    def as_details(self) -> dict[str, object]:
        return {
            "probabilities": {letter: round(p, 6) for letter, p in self.probabilities.items()},
            "marked": self.marked,
            "marked_probability": round(self.marked_probability, 6),
            "pick": self.pick,
            "pick_probability": round(self.pick_probability, 6),
            "disagrees": self.disagrees,
        }


def normalised(probabilities: Mapping[str, float], *, letters: tuple[str, ...]) -> dict[str, float] | None:
    """Spread over exactly `letters` (a letter not given counts 0), scaled to sum to 1; None when nothing is left."""
    values = {letter: max(0.0, float(probabilities.get(letter, 0.0))) for letter in letters}
    mass = sum(values.values())
    if mass <= 0.0 or not math.isfinite(mass):
        return None
    return {letter: value / mass for letter, value in values.items()}


def blind_reading(*, probabilities: Mapping[str, float], marked: str, disagree_at: float) -> BlindReading:
    """`probabilities` is already normalised over the options (see `normalised`)."""
    marked_probability = float(probabilities.get(marked, 0.0))
    pick = most_probable(probabilities, marked=marked)
    pick_probability = float(probabilities[pick])
    disagrees = pick != marked and pick_probability > marked_probability and pick_probability >= disagree_at
    return BlindReading(
        probabilities=dict(probabilities),
        marked=marked,
        marked_probability=marked_probability,
        pick=pick,
        pick_probability=pick_probability,
        disagrees=disagrees,
    )


def blind_orders(*, seed: str, question: str, options: Sequence[str], count: int) -> list[list[int]]:
    """The orders the blind question shows the options in: `order[i]` is the index of the option shown at letter i.

    The first is a shuffle drawn from the seed and the question (the same question is shown the same way, so a
    run can be reproduced); the second, when asked for, is the first moved one place, so every option sits at
    another letter than the first time and a checker that answers by position picks two different options.
    """
    order = list(range(len(options)))
    digest = hashlib.sha256("\0".join((seed, question, *options)).encode()).digest()
    random.Random(digest).shuffle(order)
    orders = [order]
    if count >= 2 and len(order) >= 2:
        orders.append(order[1:] + order[:1])
    return orders


def unshuffled(shown: Mapping[str, float], *, order: Sequence[int], letters: Sequence[str]) -> dict[str, float]:
    """Probabilities per shown letter back onto the options' own letters (`letters` are the options' letters)."""
    return {letters[index]: float(shown.get(letters[position], 0.0)) for position, index in enumerate(order)}


def most_probable(probabilities: Mapping[str, float], *, marked: str) -> str:
    """The most probable letter; the marked one on a tie."""
    return max(probabilities, key=lambda letter: (probabilities[letter], letter == marked))


def averaged(readings: Sequence[Mapping[str, float]]) -> dict[str, float]:
    letters = list(readings[0])
    return {letter: sum(float(reading.get(letter, 0.0)) for reading in readings) / len(readings) for letter in letters}


def borderline(*, score: float, threshold: float, band: float) -> bool:
    """Whether a score lies within `band` of its threshold, either side (the ends count)."""
    return band > 0 and abs(score - threshold) <= band + 1e-9


def served_pass_mark(
    served: str, *, pinned: str, threshold: float, calibrated: bool, thresholds: Mapping[str, float] | None
) -> tuple[float, bool]:
    """(pass mark, calibrated) for the model the server served: the pinned one's when it served the pinned
    model or did not say; otherwise the stricter of the pinned model's and the served model's stored one.

    A server chooses what it says it served, so a served id must never lower the bar: a lie (or a server moved
    to a model calibrated lower) would pass what the pinned model's bar holds back. The stricter bar is
    "calibrated" only when it is the served model's own stored one."""
    if not served or served == pinned:
        return threshold, calibrated
    stored = thresholds.get(served) if thresholds is not None else None
    if stored is not None and stored >= threshold:
        return stored, True
    return threshold, False
