"""The second step of a question's path through the gate: the verdict on what the checker said.

From the answers the first step brought back (verifier/question/asking.py, `Asked`): the pass mark of the model that
served, the first judgement, a second opinion on the borderline (verifier/question/second_opinion.py), the reason and
message a reviewer reads, what the check cost (kept under "usage" in the details and counted in the metrics),
and the `GateDecision`. A question that got no answer passes `unverified` (`fail_open`, with its warning line),
one the gate does not check `unchecked`.
"""

import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from core import cost, metrics
from verifier import conf, policy
from verifier.backends import BackendAnswer, GateFailure
from verifier.breaker import UNAVAILABLE
from verifier.decisions import (
    BLIND_MISSING_PREFIX,
    CHECKER_DISAGREES,
    MODEL_CHANGED,
    BlindCheck,
    GateDecision,
    GateItem,
    add_tokens,
)
from verifier.prompts import OPTION_LABELS
from verifier.question.asking import Asked
from verifier.question.second_opinion import SecondOpinion
from verifier.usage import USAGE

logger = logging.getLogger("verifier")
# What a checker writes back per check asked (a probability, a letter): a couple of tokens.
OUTPUT_CHARS_PER_CHECK = 8


@dataclass(frozen=True)
class RoundMarks:
    """What a verdict needs of its round: the settings, the pinned model's pass mark (stored per model id in
    `thresholds`: a served model's own, applied when it is the stricter) and whether the gate checks at all."""

    config: conf.GateConfig
    threshold: float
    calibrated: bool
    thresholds: Mapping[str, float] | None
    enabled: bool
    # Judged against a source (a grounded round), not closed-book.
    grounded: bool

    def for_served(self, served: str) -> tuple[float, bool]:
        """(pass mark, calibrated) for the model the server served (verifier.policy.served_pass_mark)."""
        return policy.served_pass_mark(
            served,
            pinned=self.config.model_id,
            threshold=self.threshold,
            calibrated=self.calibrated,
            thresholds=self.thresholds,
        )


def decision(item: GateItem, marks: RoundMarks, **fields: Any) -> GateDecision:
    pinned = marks.config.model_id if marks.enabled else ""
    fields.setdefault("threshold", marks.threshold)
    fields.setdefault("calibrated", marks.calibrated)
    fields["model_id"] = fields.get("model_id") or pinned
    return GateDecision(key=item.key, backend=marks.config.backend, requested_model_id=pinned, **fields)


def unchecked(item: GateItem, marks: RoundMarks) -> GateDecision:
    return decision(item, marks, outcome="unchecked", score=None, probabilities={}, reason="gate_off", latency_ms=0)


def fail_open(
    item: GateItem, failure: GateFailure, started: float, marks: RoundMarks, *, blind: BlindCheck | None = None
) -> GateDecision:
    """The question passes unverified, with the warning that says why (an info line while the breaker is open)."""
    latency_ms = int((time.monotonic() - started) * 1000)
    # With the breaker open every question says the same: the breaker's own line is the warning.
    log = logger.info if failure.reason == UNAVAILABLE else logger.warning
    log(
        "gate fail-open: %s passes unverified (reason=%s backend=%s model=%s latency_ms=%d) %s",
        item.key,
        failure.reason,
        marks.config.backend,
        marks.config.model_id,
        latency_ms,
        failure.message,
    )
    return decision(
        item,
        marks,
        outcome="unverified",
        score=None,
        probabilities={},
        reason=failure.reason,
        message=failure.message[:500],
        latency_ms=latency_ms,
        # A blind answer alone does not judge a question, but the reviewer still sees what it said.
        details=blind.as_details(item.options) if blind is not None and blind.reading is not None else {},
    )


async def judged(
    item: GateItem, asked: Asked, marks: RoundMarks, *, second: SecondOpinion | None, cut: float | None
) -> GateDecision:
    """The verdict on the checker's answers; `second` is asked when the first judgement is borderline (closed-book
    only), given up at `cut` (the round's deadline, None before the round is sealed)."""
    answer, blind, checks, served = asked.answer, asked.blind, asked.checks, asked.served
    if isinstance(answer, GateFailure):
        return fail_open(item, answer, asked.started, marks, blind=blind)
    config, grounded = marks.config, marks.grounded
    latency_ms = int((time.monotonic() - asked.started) * 1000)
    probabilities = dict(answer.probabilities)
    details: dict[str, Any] = {**answer.details, "calls": answer.calls, "checks": list(checks)}
    threshold, calibrated = marks.for_served(served)
    input_tokens, output_tokens = answer.input_tokens, answer.output_tokens
    has_blind = blind is not None and blind.reading is not None
    if blind is not None:
        details["calls"] += blind.calls
        details["checks"].append(policy.BLIND)
        details.update(blind.as_details(item.options))
        input_tokens = add_tokens(input_tokens, blind.input_tokens)
        output_tokens = add_tokens(output_tokens, blind.output_tokens)
        if blind.reading is not None:
            probabilities[policy.BLIND] = round(blind.reading.marked_probability, 6)
    judgement = first_judgement = first(
        probabilities, checks, config=config, grounded=grounded, threshold=threshold, has_blind=has_blind
    )
    if (
        second is not None
        and not grounded
        and policy.borderline(score=judgement.score, threshold=threshold, band=config.second_opinion_band)
    ):
        details["second_opinion"], judgement = await second.ask(item, checks, judgement, cut=cut)
    details[USAGE] = spent(
        item,
        answer,
        checks,
        blind,
        model=config.model_id,
        second_model=second.config.model_id if second is not None else "",
        second_record=details.get("second_opinion"),
        prices=config.prices,
    )
    reason, message = verdict_reason(
        item, judgement, blind, config=config, served=served, first=first_judgement, details=details
    )
    return decision(
        item,
        marks,
        outcome=str(judgement.outcome),
        # The first checker's score and probabilities: what its threshold and the sweep go by.
        score=round(first_judgement.score, 6),
        probabilities=probabilities,
        reason=reason,
        message=message,
        latency_ms=latency_ms,
        model_id=served,
        threshold=threshold,
        calibrated=calibrated,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        details=details,
    )


def first(
    probabilities: dict[str, float],
    checks: tuple[str, ...],
    *,
    config: conf.GateConfig,
    grounded: bool,
    threshold: float,
    has_blind: bool,
) -> policy.Judgement:
    """The first checker's judgement: against the source's bounds when grounded, else at the pass mark."""
    if grounded:
        return policy.grounded_judgement(probabilities=probabilities, bounds=config.grounded_bounds)
    return policy.closed_book_judgement(
        probabilities=probabilities,
        has_explanation=policy.EXPLANATION_TRUE in checks,
        threshold=threshold,
        has_blind=has_blind,
    )


def item_chars(item: GateItem) -> int:
    return len(item.text) + sum(len(option) for option in item.options) + len(item.explanation)


def spent(
    item: GateItem,
    answer: BackendAnswer,
    checks: tuple[str, ...],
    blind: BlindCheck | None,
    *,
    model: str,
    second_model: str,
    second_record: Any,
    prices: Mapping[str, cost.Price],
) -> dict[str, dict[str, Any]]:
    """The tokens the check spent, by role ({role: core.cost.Usage as a dict}: the checker's own calls, the blind
    re-answer's, the second opinion's), counted in the metrics with their amount. A count the server did not
    report is estimated from the characters sent and marked estimated; a call that got no answer (a timeout, a
    refused connection) is not counted: nothing says what it cost."""
    usages = {
        cost.CHECKER: cost.call_usage(
            model=model,
            input_tokens=answer.input_tokens,
            output_tokens=answer.output_tokens,
            input_chars=item_chars(item) * max(1, answer.calls),
            output_chars=OUTPUT_CHARS_PER_CHECK * len(checks),
            calls=answer.calls,
        )
    }
    if blind is not None and (blind.reading is not None or blind.order_dependent):
        usages[cost.BLIND] = cost.call_usage(
            model=model,
            input_tokens=blind.input_tokens,
            output_tokens=blind.output_tokens,
            input_chars=(len(item.text) + sum(len(option) for option in item.options)) * max(1, blind.calls),
            output_chars=OUTPUT_CHARS_PER_CHECK * max(1, blind.calls),
            calls=blind.calls,
        )
    record = second_record
    if isinstance(record, Mapping) and record.get("outcome") != "failed" and "input_tokens" in record:
        usages[cost.SECOND_OPINION] = cost.call_usage(
            model=second_model,
            input_tokens=record.get("input_tokens"),
            output_tokens=record.get("output_tokens"),
            input_chars=item_chars(item),
            output_chars=OUTPUT_CHARS_PER_CHECK * len(record.get("probabilities") or {}),
        )
    stored = {role: usage.as_dict() for role, usage in usages.items()}
    # Counted as stored, read back as verifier.usage.decision_usages reads a verdict's usage.
    for role, usage in ((role, cost.Usage.from_dict(data)) for role, data in stored.items()):
        if usage is not None:
            _, price = cost.price_for(prices, usage.model)
            metrics.model_usage(model=usage.model, role=role, usage=usage, amount=cost.amount(usage, price))
    return stored


def verdict_reason(
    item: GateItem,
    judgement: policy.Judgement,
    blind: BlindCheck | None,
    *,
    config: conf.GateConfig,
    served: str,
    first: policy.Judgement,
    details: Mapping[str, Any],
) -> tuple[str, str]:
    """(reason, message): a drop says why; a pass says when the blind check is missing or disagrees; a model the
    server served instead of the pinned one is the reason; a second opinion that decided (`judgement` is not
    `first`) leads the message, from the "second_opinion" record in the verdict's `details`."""
    reason, message = _reason(item, judgement, blind, config=config)
    if served and served != config.model_id:
        # One reason per verdict: the model change, which decides how every other part of it is read. The
        # other notes stay in the message, the blind answer and a disagreement in the details; each page says
        # the change in its reader's language from the two model ids.
        reason = MODEL_CHANGED
    if judgement is not first:
        record = details["second_opinion"]
        message = (
            f"second opinion ({record['model_id']}) {record['outcome']}: score {record['score']:.2f}, "
            f"first {first.outcome} at {first.score:.2f}" + (f"; {message}" if message else "")
        )[:500]
    return reason, message


def _reason(
    item: GateItem, judgement: policy.Judgement, blind: BlindCheck | None, *, config: conf.GateConfig
) -> tuple[str, str]:
    """(reason, message): a drop says why; a pass says when the blind check is missing or disagrees."""
    reason = "below_threshold" if judgement.outcome == policy.Outcome.DROPPED else ""
    notes = [judgement.reason] if judgement.reason else []
    if blind is not None and blind.reading is not None and blind.reading.disagrees:
        pick = blind.reading.pick
        text = item.options[OPTION_LABELS.index(pick)]
        notes.append(f"the checker chose {pick}. {text} ({blind.reading.pick_probability:.2f})")
        reason = reason or CHECKER_DISAGREES
    elif blind is not None and blind.order_dependent:
        # Not a missing check: the checker answered, by position. Nothing to review in this question.
        notes.append(f"blind answer not scored: {blind.failure.message}")
    elif blind is not None and blind.failure is not None:
        # The min of what was measured decides; the reviewer is told the third score is missing.
        notes.append(f"blind check missing: {blind.failure.reason}: {blind.failure.message}")
        reason = reason or (BLIND_MISSING_PREFIX + blind.failure.reason)[:40]
        logger.warning(
            "gate blind check missing for %s: scored on the other checks (reason=%s backend=%s model=%s) %s",
            item.key,
            blind.failure.reason,
            config.backend,
            config.model_id,
            blind.failure.message,
        )
    return reason, "; ".join(notes)[:500]
