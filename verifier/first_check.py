"""The first check: the question with its marked answer (and, grounded, its source) asked of the round's
backend, the checks it is asked (closed-book or grounded), and the judgement on the probabilities it gave."""

import logging
from typing import Any

from verifier import conf, policy
from verifier.backends import Backend, CallBudget, GateFailure
from verifier.decisions import GateItem
from verifier.prompts import question_document

logger = logging.getLogger("verifier")


def checks_for(item: GateItem, *, grounded: bool) -> tuple[str, ...]:
    if grounded:
        return policy.grounded_checks()
    return policy.closed_book_checks(has_explanation=bool(item.explanation.strip()))


async def ask(
    item: GateItem, checks: tuple[str, ...], *, backend: Backend, budget: CallBudget, source_text: str | None
) -> Any:
    """The backend's answer, or the GateFailure that says why there is none. Never raises for a backend's fault."""
    document = question_document(
        text=item.text,
        options=item.options,
        correct_index=item.correct_index,
        explanation=item.explanation,
        source_text=source_text,
        language=item.language,
    )
    try:
        return await backend.ask(document=document, checks=checks, budget=budget)
    except GateFailure as failure:
        return failure
    except Exception as exc:  # noqa: BLE001 - any surprise from a backend must fail open, not empty a round
        logger.warning("gate unexpected error for %s", item.key, exc_info=True)
        return GateFailure("unexpected_error", f"{type(exc).__name__}: {exc}")


def judgement(
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
