"""What a round's writing came to once it stopped: the questions played, the marks and status the editor
shows, and the host's message (full, short, ungated, failed or cancelled), from what the writer counted.
`quiz.generation.writer.RoundWriter` hands itself over when its attempts are done."""

import logging
from typing import Protocol

from django.utils.translation import gettext

from quiz.generation.prompts import RoundSpec
from quiz.generation.write_outcome import (
    Candidate,
    Mark,
    OutcomeKind,
    Timeline,
    WriteOutcome,
    WriterProgress,
    check_counts,
    mark_of,
    round_status,
)
from quiz.generation.writer_messages import (
    AttemptFacts,
    RoundFacts,
    failed_message,
    full_message,
    short_message,
    ungated_message,
)
from quiz.jobs.conf import WriterConfig
from quiz.models import CheckStatus
from verifier import causes
from verifier.gate import MODEL_CHANGED

logger = logging.getLogger("quiz.generation.writer")


class FinishedWriting(Protocol):
    """What the writer counted (quiz.generation.writer.RoundWriter)."""

    spec: RoundSpec
    config: WriterConfig
    gated: bool
    cancelled: bool
    error: str
    budget_stopped: bool
    candidates: list[Candidate]
    attempts: list[AttemptFacts]
    invalid_reasons: list[str]
    progress: WriterProgress
    timeline: Timeline


def survivors(candidates: list[Candidate]) -> list[Candidate]:
    """The candidates the gate let through (passed, or failed open)."""
    return [c for c in candidates if c.decision is not None and c.decision.playable]


def round_facts(writer: FinishedWriting, played: list[Candidate]) -> RoundFacts:
    return RoundFacts(
        count=writer.spec.count,
        played=len(played),
        attempts=writer.attempts,
        job_budget=writer.config.job_budget,
        budget_stopped=writer.budget_stopped,
        invalid_reasons=writer.invalid_reasons,
        duplicates=writer.progress.duplicates,
        dropped=writer.progress.dropped,
        error=writer.error,
        unchecked_reasons=[
            c.decision.reason for c in played if c.decision is not None and c.decision.outcome == "unverified"
        ],
        model_changed=next(
            (
                (c.decision.requested_model_id, c.decision.model_id)
                for c in writer.candidates
                if c.decision is not None and c.decision.reason == MODEL_CHANGED
            ),
            None,
        ),
    )


def outcome_of(writer: FinishedWriting) -> WriteOutcome:
    count = writer.spec.count
    kept = survivors(writer.candidates)

    def outcome(kind: OutcomeKind, played: list[Candidate], marks: dict[str, Mark], status: str, message: str):
        return WriteOutcome(
            kind=kind,
            played=played,
            candidates=list(writer.candidates),
            marks=marks,
            check_status=status,
            message=message,
            progress=writer.progress.copy(),
            timeline=writer.timeline,
            check_counts=check_counts(played) if writer.gated else {},
        )

    if writer.cancelled:
        return outcome("cancelled", [], {}, CheckStatus.UNCHECKED, gettext("Cancelled."))
    checked = [c for c in writer.candidates if c.decision is not None]
    if not checked:
        return outcome("failed", [], {}, CheckStatus.UNCHECKED, failed_message(round_facts(writer, [])))
    if not kept:
        # The checker dropped everything on every attempt: play the ungated round rather than nothing.
        played = checked[:count]
        logger.warning(
            "writer: the gate dropped all %d questions over %d attempts; playing the round ungated, "
            "marked rejected by the checker and queued for review (model=%s topic=%r)",
            len(checked),
            writer.progress.attempt,
            writer.config.model,
            writer.spec.topic[:80],
        )
        return outcome(
            "ungated",
            played,
            dict.fromkeys((c.key for c in played), causes.REJECTED),
            CheckStatus.REJECTED,
            ungated_message(round_facts(writer, played), checked=len(checked)),
        )
    played = kept[:count]
    marks: dict[str, Mark] = {c.key: mark_of(c.decision) for c in played}
    status = round_status(list(marks.values()), gated=writer.gated)
    facts = round_facts(writer, played)
    if len(played) >= count:
        return outcome("full", played, marks, status, full_message(facts))
    return outcome("short", played, marks, status, short_message(facts))
