"""What the gate takes and gives back, as plain data: the item to check, the decision, a blind check's result,
a round's tally, and the reasons the review side reads."""

from dataclasses import dataclass, field
from typing import Any, Literal

from verifier import policy
from verifier.backends import GateFailure
from verifier.causes import (
    ROUND_BUDGET,
    SLOW_PAUSED,
    UNAVAILABLE,
)  # ROUND_BUDGET: a question the checker had not answered one call budget after writing
from verifier.prompts import OPTION_LABELS

OutcomeName = Literal["passed", "dropped", "unverified", "unchecked"]
# A passed question whose blind check failed, or whose blind checker confidently chose another option, carries
# one of these verdict reasons, so it waits in the review queue although it is played.
BLIND_MISSING_PREFIX = "blind_"
CHECKER_DISAGREES = "checker_disagrees"
# The server said it served another model than the pinned one: the question was judged at the stricter of the two
# models' pass marks, and waits in the review queue (its threshold was not calibrated for the model that scored it).
MODEL_CHANGED = "model_changed"
# A blind answer that named another option when the options were shown in another order: it follows the position,
# not the content, so it is recorded but not scored, and queues nothing.
ORDER_DEPENDENT = "order_dependent"


def add_tokens(*values: int | None) -> int | None:
    """Token counts summed; None when no part was counted."""
    known = [value for value in values if value is not None]
    return sum(known) if known else None


@dataclass(frozen=True)
class GateItem:
    key: str
    text: str
    options: tuple[str, ...]
    correct_index: int
    explanation: str = ""
    # The language the question is written in, by name ("German"); the checker is told. "" says nothing.
    language: str = ""


@dataclass(frozen=True)
class GateDecision:
    key: str
    outcome: OutcomeName
    score: float | None
    threshold: float
    probabilities: dict[str, float]
    reason: str
    latency_ms: int
    backend: str
    # The model id the server said it served (the pinned one when it did not say, or no call was answered).
    model_id: str
    calibrated: bool = False
    message: str = ""
    # The model id the gate asked for (VERIFIER_MODEL).
    requested_model_id: str = ""
    input_tokens: int | None = None
    output_tokens: int | None = None
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def playable(self) -> bool:
        # Failing open: only a question the checker positively scored below the bar is held back.
        return self.outcome != policy.Outcome.DROPPED

    @property
    def checker_chose(self) -> str:
        """The option letter the blind checker confidently picked instead of the marked one, or ""."""
        return str(self.details.get("checker_chose") or "")

    @property
    def blind_missing(self) -> bool:
        return "blind_missing" in self.details

    @property
    def blind_order_dependent(self) -> bool:
        blind = self.details.get("blind")
        return isinstance(blind, dict) and bool(blind.get("order_dependent"))


@dataclass(frozen=True)
class BlindCheck:
    """One blind question's result: a reading, or the failure that left it out (never both)."""

    reading: policy.BlindReading | None = None
    failure: GateFailure | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    details: dict[str, Any] = field(default_factory=dict)
    # The blind calls made: one per order the options were shown in, more where a backend retried one.
    calls: int = 1

    @property
    def order_dependent(self) -> bool:
        return self.failure is not None and self.failure.reason == ORDER_DEPENDENT

    def as_details(self, options: tuple[str, ...]) -> dict[str, Any]:
        if self.order_dependent:
            return {"blind": dict(self.details)}
        if self.reading is None:
            failure = self.failure or GateFailure("not_asked", "")
            return {"blind_missing": {"reason": failure.reason, "message": failure.message[:300]}}
        found: dict[str, Any] = {"blind": {**self.reading.as_details(), **self.details}}
        if self.reading.disagrees:
            index = OPTION_LABELS.index(self.reading.pick)
            found["checker_chose"] = self.reading.pick
            found["checker_chose_text"] = options[index] if index < len(options) else ""
            found["checker_chose_probability"] = round(self.reading.pick_probability, 6)
        return found


@dataclass
class RoundTally:
    checked: int = 0
    passed: int = 0
    dropped: int = 0
    unverified: int = 0
    unchecked: int = 0
    blind_missing: int = 0
    blind_order_dependent: int = 0
    second_opinion: int = 0
    second_opinion_changed: int = 0
    checker_disagrees: int = 0
    round_budget: int = 0
    checker_unavailable: int = 0
    model_changed: int = 0
    started: float | None = None
    finished: float | None = None

    def add(self, decision: GateDecision) -> None:
        self.checked += 1
        setattr(self, decision.outcome, getattr(self, decision.outcome) + 1)
        if decision.blind_missing and decision.outcome in ("passed", "dropped"):
            self.blind_missing += 1
        if decision.checker_chose:
            self.checker_disagrees += 1
        if decision.blind_order_dependent:
            self.blind_order_dependent += 1
        second = decision.details.get("second_opinion")
        if isinstance(second, dict):
            self.second_opinion += 1
            self.second_opinion_changed += bool(second.get("changed"))
        if decision.reason == ROUND_BUDGET:
            self.round_budget += 1
        if decision.reason in (UNAVAILABLE, SLOW_PAUSED):
            self.checker_unavailable += 1
        if decision.reason == MODEL_CHANGED:
            self.model_changed += 1

    @property
    def wall_ms(self) -> int:
        if self.started is None or self.finished is None:
            return 0
        return int((self.finished - self.started) * 1000)
