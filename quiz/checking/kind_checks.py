"""What the checker is asked about a question of any kind, and the one verdict the question gets from it.

A kind reduces its question to single-choice asks (`Kind.gate_asks`, quiz/kinds): a `single` question is one ask,
itself; a `multi` one is one Yes/No ask per option, ... Each ask is one `GateItem` with the question's
explanation, checked by the gate as any question is (the same backends, call budget, breaker and fail-open), all
of a question's asks at once. `question_decision` makes their decisions the question's one decision; a question
with no ask (a poll) is not checked.

Callers: the writer (quiz.generation.writer) and "Check my questions" (quiz.checking.rounds). Plain data and the
gate's calls only: no database here.
"""

import asyncio
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from quiz.kinds import GateAsk, kind_of
from verifier import policy
from verifier.gate import Gate, GateDecision, GateItem
from verifier.usage import USAGE, usage_summed

# The reason of a question the checker was not asked about (its kind has nothing it could be wrong about).
NOT_ASKED = "not_asked"

# Worst first: one dropped ask drops the question; a failure to check one (unverified) leaves the question
# unverified, never dropped; it passes only when every ask passed.
_RANK = {
    policy.Outcome.DROPPED: 0,
    policy.Outcome.UNVERIFIED: 1,
    policy.Outcome.UNCHECKED: 2,
    policy.Outcome.PASSED: 3,
}


@dataclass(frozen=True)
class AskedQuestion:
    """A question as the gate is asked about it: its key (the verdict's) and, per ask, the item sent."""

    key: str
    asks: tuple[GateAsk, ...]
    items: tuple[GateItem, ...]


def asked_question(question: Any, *, key: str, language: str = "") -> AskedQuestion:
    """The asks of a question (a model row, a QuestionData: anything a kind reads, with `text` and `explanation`)
    as the gate's items. One ask is sent under the question's own key, several as `key.1`, `key.2`, ..."""
    asks = tuple(kind_of(question).gate_asks(question))
    keys = [key] if len(asks) == 1 else [f"{key}.{number}" for number in range(1, len(asks) + 1)]
    items = tuple(
        GateItem(
            key=item_key,
            text=ask.text,
            options=tuple(ask.options),
            correct_index=ask.correct_index,
            explanation=question.explanation,
            language=language,
        )
        for item_key, ask in zip(keys, asks, strict=True)
    )
    return AskedQuestion(key=key, asks=asks, items=items)


async def question_check(gate: Gate, asked: AskedQuestion) -> GateDecision:
    """Every ask of the question checked at once, and their one decision; a question with no ask is not checked
    (`not_asked`: no call goes out)."""
    if not asked.asks:
        return not_asked(gate, key=asked.key)
    async with asyncio.TaskGroup() as group:
        checks = [group.create_task(gate.check(item)) for item in asked.items]
    return question_decision(asked.key, list(zip(asked.asks, (check.result() for check in checks), strict=True)))


def not_asked(gate: Gate, *, key: str) -> GateDecision:
    """The decision of a question of a kind the checker is not asked about: not checked, and played."""
    return GateDecision(
        key=key,
        outcome="unchecked",
        score=None,
        threshold=gate.threshold,
        probabilities={},
        reason=NOT_ASKED,
        latency_ms=0,
        backend=gate.config.backend,
        model_id="",
        calibrated=gate.calibrated,
    )


def question_decision(key: str, asked: Sequence[tuple[GateAsk, GateDecision]]) -> GateDecision:
    """One question's decision from the decisions of its asks: the worst ask decides.

    The worst is the one of the worst outcome (dropped, then unverified, then not checked, then passed), and of
    those the one with the lowest score (the first when none has a score). So one dropped ask drops the question;
    an ask the checker failed to answer (fail-open) leaves it unverified unless another ask was dropped, never
    dropped; it passes only when every ask passed, with the lowest ask's score. The question's decision is the
    deciding ask's (outcome, score, probabilities, threshold, model, reason, message, and its details at the
    top), with the question's key; its message names what that ask asked (`GateAsk.claim`) when the checker
    judged it. One exception: a pass whose deciding ask has no reason takes the reason of the lowest other
    passed ask that has one (its blind check missing or disagreeing, the model changed), so the question still
    waits in the review queue. `latency_ms` is the longest ask's (they run at once), the tokens and calls are
    summed, and `details["asks"]` keeps every ask and its decision (the audit shows why), `details["decided_by"]`
    the index of the deciding one."""
    if not asked:
        raise ValueError("a question with no ask has no decision: it is not checked")
    order = sorted(range(len(asked)), key=lambda index: _worst_first(asked[index][1], index))
    deciding = order[0]
    decision = asked[deciding][1]
    reason, message = decision.reason, _message(*asked[deciding])
    if decision.outcome == policy.Outcome.PASSED and not reason:
        flagged = next((i for i in order if asked[i][1].outcome == policy.Outcome.PASSED and asked[i][1].reason), None)
        if flagged is not None:
            reason, message = asked[flagged][1].reason, _message(*asked[flagged])
    details: dict[str, Any] = {
        **decision.details,
        "asks": [_ask_record(ask, ask_decision) for ask, ask_decision in asked],
        "decided_by": deciding,
    }
    calls = [d.details.get("calls") for _ask, d in asked if isinstance(d.details.get("calls"), int)]
    if calls:
        details["calls"] = sum(calls)
    if spent := usage_summed(d for _ask, d in asked):
        details[USAGE] = spent
    return replace(
        decision,
        key=key,
        reason=reason,
        message=message[:500],
        latency_ms=max(d.latency_ms for _ask, d in asked),
        input_tokens=_total(d.input_tokens for _ask, d in asked),
        output_tokens=_total(d.output_tokens for _ask, d in asked),
        details=details,
    )


def _worst_first(decision: GateDecision, index: int) -> tuple[int, float, int]:
    # An outcome not known here counts as unverified: it neither drops nor passes the question.
    rank = _RANK.get(decision.outcome, _RANK[policy.Outcome.UNVERIFIED])
    score = decision.score if decision.score is not None and math.isfinite(decision.score) else -math.inf
    return rank, score, index


def _message(ask: GateAsk, decision: GateDecision) -> str:
    judged = decision.outcome in (policy.Outcome.PASSED, policy.Outcome.DROPPED)
    if ask.claim and decision.message and judged:
        return f"{ask.claim} — {decision.message}"
    return decision.message


def _total(values: Any) -> int | None:
    counted = [value for value in values if value is not None]
    return sum(counted) if counted else None


def _ask_record(ask: GateAsk, decision: GateDecision) -> dict[str, Any]:
    return {
        "key": decision.key,
        "text": ask.text,
        "options": list(ask.options),
        "correct_index": ask.correct_index,
        "claim": ask.claim,
        "outcome": str(decision.outcome),
        "score": decision.score,
        "threshold": decision.threshold,
        "probabilities": dict(decision.probabilities),
        "reason": decision.reason,
        "message": decision.message,
        "model_id": decision.model_id,
        "latency_ms": decision.latency_ms,
        "details": dict(decision.details),
    }
