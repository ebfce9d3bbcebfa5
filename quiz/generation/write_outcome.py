"""What writing one round came to: the progress the host watches, the candidates with the gate's decisions, the
timeline the bench reads, and the outcome with each played question's mark and the round's check status."""

from dataclasses import dataclass, field
from typing import Literal

from core.cost import Usage
from quiz.check_labels import UNCHECKED_MARK, counts_of, mark_of_cause
from quiz.models import CheckStatus
from quiz.validation import QuestionData
from verifier import causes
from verifier.gate import GateDecision

# What the checker did with a played question (quiz.check_labels.mark_of_cause): passed, rejected, too_slow,
# unreachable, paused, model_changed, unverified (an answer it could not use), unchecked.
Mark = str


@dataclass
class WriterProgress:
    asked: int = 0
    written: int = 0
    checked: int = 0
    dropped: int = 0
    invalid: int = 0
    # Items dropped as repeats of an earlier question (not counted as invalid).
    duplicates: int = 0
    attempt: int = 0
    problems: list[str] = field(default_factory=list)

    def copy(self) -> "WriterProgress":
        return WriterProgress(**{**self.__dict__, "problems": list(self.problems)})


@dataclass
class Candidate:
    key: str
    data: QuestionData
    attempt: int
    decision: GateDecision | None = None
    # The model id the server said wrote it (its streamed chunks' `model`), "" when it did not say.
    served_model: str = ""


@dataclass
class Timeline:
    """When the model was writing and when each check ran (monotonic seconds), for the bench's figures."""

    started: float = 0.0
    writing: list[tuple[float, float]] = field(default_factory=list)
    checks: list[tuple[float, float]] = field(default_factory=list)
    # When the first question was ready to play (passed the gate, or failed open), 0.0 if none ever was.
    first_ready: float = 0.0
    finished: float = 0.0

    def overlap_share(self) -> float:
        """Share of the time spent checking that fell while the model was still writing."""
        total = sum(end - start for start, end in self.checks)
        if total <= 0:
            return 0.0
        overlapped = 0.0
        for check_start, check_end in self.checks:
            for write_start, write_end in self.writing:
                overlapped += max(0.0, min(check_end, write_end) - max(check_start, write_start))
        return min(1.0, overlapped / total)


OutcomeKind = Literal["full", "short", "ungated", "failed", "cancelled"]


@dataclass
class WriteOutcome:
    kind: OutcomeKind
    played: list[Candidate]
    candidates: list[Candidate]
    marks: dict[str, Mark]
    check_status: str
    message: str
    progress: WriterProgress
    timeline: Timeline
    # Round.check_counts: how many played questions the checker passed, rejected, or left unverified and why.
    check_counts: dict = field(default_factory=dict)
    # The writer's tokens over every attempt (reported by its server, or estimated), under its pinned model id.
    writer_usage: Usage = field(default_factory=Usage)

    @property
    def playable(self) -> bool:
        return self.kind in ("full", "short", "ungated") and bool(self.played)


def mark_of(decision: GateDecision | None) -> Mark:
    if decision is None:
        return UNCHECKED_MARK
    return mark_of_cause(causes.cause_of(outcome=decision.outcome, reason=decision.reason))


def check_counts(played: list[Candidate]) -> dict:
    return counts_of((c.decision.outcome, c.decision.reason) if c.decision else ("unchecked", "") for c in played)


def round_status(marks: list[Mark], *, gated: bool) -> str:
    if not gated or all(mark == UNCHECKED_MARK for mark in marks):
        return CheckStatus.UNCHECKED
    if all(mark == causes.PASSED for mark in marks):
        return CheckStatus.CHECKED
    if all(mark not in (causes.PASSED, UNCHECKED_MARK) for mark in marks):
        return CheckStatus.UNVERIFIED
    return CheckStatus.PARTLY_UNVERIFIED
