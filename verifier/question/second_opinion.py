"""The second opinion: a borderline closed-book verdict is asked again of another judge, which then decides.

Its own backend, call budget and breaker (VERIFIER_SECOND_OPINION_*); a second opinion that fails, times out or
runs out of the round's budget leaves the first verdict standing. The round runtime (gate.py) builds one per
gate and reschedules its pending calls when the round is sealed.
"""

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any

from verifier import conf, policy
from verifier.backends import Backend, CallBudget, GateFailure
from verifier.breaker import BreakerGuard, gate_breaker
from verifier.decisions import ROUND_BUDGET, GateItem
from verifier.prompts import question_document
from verifier.registry import backend_for

logger = logging.getLogger("verifier")


class SecondOpinion:
    """The second judge of one round: `ask` it about a borderline question (verifier.policy.borderline)."""

    def __init__(
        self,
        config: conf.GateConfig,
        *,
        threshold: tuple[float, bool],
        backend: Backend | None,
        guarded: bool,
        sealed: Callable[[], bool],
        past_deadline: Callable[[], bool],
    ) -> None:
        self.config = config
        # (pass mark, calibrated) of the second opinion's model.
        self.threshold = threshold
        self.backend = backend or backend_for(config)
        breaker = gate_breaker(config) if guarded else None
        self.guard: BreakerGuard | None = (
            BreakerGuard(breaker, batch=config.concurrency, sealed=sealed) if breaker is not None else None
        )
        self.budget = CallBudget(
            concurrency=config.concurrency,
            timeout=config.timeout,
            guard=self.guard,
            past_deadline=past_deadline,
            backend=config.backend,
        )
        self._pending: set[asyncio.Timeout] = set()

    def reschedule(self, cut: float) -> None:
        """The round was sealed: every second opinion still out is given up at `cut` at the latest."""
        for scope in self._pending:
            when = scope.when()
            scope.reschedule(min(when, cut) if when is not None else cut)

    async def ask(
        self, item: GateItem, checks: tuple[str, ...], first: policy.Judgement, *, cut: float | None
    ) -> tuple[dict[str, Any], policy.Judgement]:
        """Ask the second opinion's judge the same checks. (what it said, the judgement that decides): its own when
        it answered, the first one when it failed, timed out or the round's budget ran out."""
        second_threshold, second_calibrated = self.threshold
        record: dict[str, Any] = {
            "backend": self.config.backend,
            "model_id": self.config.model_id,
            "threshold": second_threshold,
            "calibrated": second_calibrated,
            "first": {"outcome": str(first.outcome), "score": round(first.score, 6)},
        }
        started = time.monotonic()
        loop = asyncio.get_running_loop()
        if cut is not None and cut <= loop.time():
            record.update(outcome="skipped", reason=ROUND_BUDGET, changed=False, latency_ms=0)
            return record, first
        document = question_document(
            text=item.text,
            options=item.options,
            correct_index=item.correct_index,
            explanation=item.explanation,
            language=item.language,
        )
        try:
            async with asyncio.timeout_at(cut) as scope:
                self._pending.add(scope)
                try:
                    answer = await self.backend.ask(document=document, checks=checks, budget=self.budget)
                finally:
                    self._pending.discard(scope)
        except GateFailure as failure:
            answer = failure
        except TimeoutError:
            if not scope.expired():
                raise
            answer = GateFailure(ROUND_BUDGET, "no second opinion within the round's budget")
        except Exception as exc:  # noqa: BLE001 - a second opinion fails open to the first verdict
            logger.warning("gate unexpected error in the second opinion on %s", item.key, exc_info=True)
            answer = GateFailure("unexpected_error", f"{type(exc).__name__}: {exc}")
        record["latency_ms"] = int((time.monotonic() - started) * 1000)
        if isinstance(answer, GateFailure):
            logger.warning(
                "gate second opinion missing for %s: the first verdict stands (reason=%s backend=%s model=%s) %s",
                item.key,
                answer.reason,
                self.config.backend,
                self.config.model_id,
                answer.message,
            )
            record.update(outcome="failed", reason=answer.reason, message=answer.message[:300], changed=False)
            return record, first
        probabilities = dict(answer.probabilities)
        judgement = policy.closed_book_judgement(
            probabilities=probabilities,
            has_explanation=policy.EXPLANATION_TRUE in checks,
            threshold=second_threshold,
        )
        served = str(answer.details.get("served_model") or "")[:200]
        record.update(
            model_id=served or self.config.model_id,
            requested_model_id=self.config.model_id,
            probabilities={check: round(p, 6) for check, p in probabilities.items()},
            score=round(judgement.score, 6),
            outcome=str(judgement.outcome),
            reason=judgement.reason,
            changed=judgement.outcome != first.outcome,
            input_tokens=answer.input_tokens,
            output_tokens=answer.output_tokens,
        )
        return record, judgement
