"""What the gate says about its checks, in reasons, messages and log lines: a verdict's reason and message
(`verdict_reason`), the model the server says it served (`served_model`, a mismatch warned once), the line of a
question that fails open (`log_fail_open`) and the round's line when the gate closes (`log_round`)."""

import logging
from collections.abc import Mapping
from typing import Any

from verifier import conf, policy
from verifier.backends import CallBudget, GateFailure
from verifier.breaker import UNAVAILABLE
from verifier.decisions import BLIND_MISSING_PREFIX, CHECKER_DISAGREES, MODEL_CHANGED, BlindCheck, GateItem, RoundTally
from verifier.prompts import OPTION_LABELS

logger = logging.getLogger("verifier")


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


def served_model(details: Mapping[str, Any], blind: BlindCheck | None, *, config: conf.GateConfig) -> str:
    """The model id the server says it served; a mismatch with the pinned one is logged once per process."""
    served = str(details.get("served_model") or "")
    if not served and blind is not None:
        served = str(blind.details.get("served_model") or "")
    served = served[:200]
    if served and served != config.model_id:
        conf.model_mismatch_warn_once(
            logger=logger,
            who=f"gate: {config.backend}",
            pinned=config.model_id,
            served=served,
            consequence=(
                f"verdicts are filed under {served!r} with reason {MODEL_CHANGED}, judged at the stricter of its "
                "stored threshold and the pinned model's"
            ),
        )
    return served


def log_fail_open(item: GateItem, failure: GateFailure, *, config: conf.GateConfig, latency_ms: int) -> None:
    """A question passes unverified: the warning that says why (an info line while the breaker is open)."""
    # With the breaker open every question says the same: the breaker's own line is the warning.
    log = logger.info if failure.reason == UNAVAILABLE else logger.warning
    log(
        "gate fail-open: %s passes unverified (reason=%s backend=%s model=%s latency_ms=%d) %s",
        item.key,
        failure.reason,
        config.backend,
        config.model_id,
        latency_ms,
        failure.message,
    )


def log_round(
    *, config: conf.GateConfig, threshold: float, calibrated: bool, enabled: bool, tally: RoundTally, budget: CallBudget
) -> None:
    """The round's one line: its outcomes, reasons and calls."""
    logger.info(
        "gate round: backend=%s model=%s threshold=%.2f%s checked=%d passed=%d dropped=%d unverified=%d "
        "unchecked=%d blind_missing=%d blind_order_dependent=%d second_opinion=%d second_opinion_changed=%d "
        "checker_disagrees=%d round_budget=%d "
        "checker_unavailable=%d model_changed=%d calls=%d "
        "refused=%d max_in_flight=%d wall_ms=%d",
        config.backend,
        config.model_id or "-",
        threshold,
        "" if calibrated or not enabled else " (uncalibrated)",
        tally.checked,
        tally.passed,
        tally.dropped,
        tally.unverified,
        tally.unchecked,
        tally.blind_missing,
        tally.blind_order_dependent,
        tally.second_opinion,
        tally.second_opinion_changed,
        tally.checker_disagrees,
        tally.round_budget,
        tally.checker_unavailable,
        tally.model_changed,
        budget.calls,
        budget.refused,
        budget.max_in_flight,
        tally.wall_ms,
    )
