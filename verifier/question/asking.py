"""The first step of a question's path through the gate: the checker asked, both questions side by side.

The first check is the question with its marked answer (and, grounded, its source), asked the checks
`checks_for` names (closed-book or grounded). The blind check is the question and its options without the
marked answer, asked once per order shown: the checker answers as a player would; its answer, mapped back to the
options' own letters, is the third score a closed-book verdict takes the least of (verifier.policy), and a
confident other pick flags the question. `ask_checker` asks both at once on the round's call budget and returns
what came back (`Asked`) for the verdict (verifier/question/verdict.py) to judge; nothing here raises for a backend's
fault.
"""

import asyncio
import logging
import time
from dataclasses import dataclass
from typing import Any

from verifier import conf, policy
from verifier.backends import Backend, BackendAnswer, BlindAnswer, CallBudget, GateFailure
from verifier.decisions import MODEL_CHANGED, ORDER_DEPENDENT, BlindCheck, GateItem, add_tokens
from verifier.prompts import blind_document, option_letters, question_document

# A blind answer's details that belong to the order it was shown in (letters as shown there).
PER_ORDER_DETAILS = frozenset({"served_choice", "confidence"})
logger = logging.getLogger("verifier")


@dataclass(frozen=True)
class Asked:
    """What the checker said about one question: the first check's answer (or why there is none), the blind
    check's (None when it was not asked), the checks asked, when asking began and the model the server served."""

    checks: tuple[str, ...]
    answer: BackendAnswer | GateFailure
    blind: BlindCheck | None
    started: float
    served: str


def checks_for(item: GateItem, *, grounded: bool) -> tuple[str, ...]:
    if grounded:
        return policy.grounded_checks()
    return policy.closed_book_checks(has_explanation=bool(item.explanation.strip()))


async def ask_checker(
    item: GateItem,
    *,
    config: conf.GateConfig,
    backend: Backend,
    budget: CallBudget,
    source_text: str | None,
    blind_enabled: bool,
) -> Asked:
    """Ask the first check and, closed-book, the blind question: two independent calls at once, the blind one
    never sees the marked answer or the explanation."""
    grounded = source_text is not None
    checks = checks_for(item, grounded=grounded)
    started = time.monotonic()
    first = first_check(item, checks, backend=backend, budget=budget, source_text=source_text)
    blind: BlindCheck | None = None
    if blind_enabled and not grounded and blind_applicable(item):
        answer, blind = await asyncio.gather(
            first, blind_check(item, enabled=True, config=config, backend=backend, budget=budget)
        )
    else:
        answer = await first
    served = "" if isinstance(answer, GateFailure) else served_model(answer.details, blind, config=config)
    return Asked(checks=checks, answer=answer, blind=blind, started=started, served=served)


async def first_check(
    item: GateItem, checks: tuple[str, ...], *, backend: Backend, budget: CallBudget, source_text: str | None
) -> BackendAnswer | GateFailure:
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


def served_model(details: dict[str, Any], blind: BlindCheck | None, *, config: conf.GateConfig) -> str:
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


def blind_applicable(item: GateItem) -> bool:
    letters = option_letters(item.options)
    return len(letters) >= 2 and 0 <= item.correct_index < len(letters)


async def blind_check(
    item: GateItem, *, enabled: bool, config: conf.GateConfig, backend: Backend, budget: CallBudget
) -> BlindCheck:
    """Ask the blind question alone (its own call, one per order shown). Never raises for a backend's fault.

    The options are shown in an order shuffled per question (VERIFIER_BLIND_SEED), and with
    VERIFIER_BLIND_ORDERS=2 once more with every option moved one place; each answer is mapped back to the
    options' own letters and the answers averaged. Two answers that name two different options (a checker
    that answers by position: "A" whatever A is) are recorded but not scored, and flag nothing.
    """
    letters = option_letters(item.options)
    if not enabled:
        return BlindCheck(failure=GateFailure("blind_off", "the blind check is off or not supported"))
    if not blind_applicable(item):
        return BlindCheck(failure=GateFailure("blind_not_applicable", "the marked option has no letter"))
    options = item.options[: len(letters)]
    orders = policy.blind_orders(seed=config.blind_seed, question=item.text, options=options, count=config.blind_orders)
    shown = await asyncio.gather(
        *(_blind_in_order(item, order, letters, backend=backend, budget=budget) for order in orders)
    )
    # Every call made, a backend's retries included (an order that failed counts as one).
    calls = sum(1 if isinstance(result, GateFailure) else result[0].calls for result in shown)
    for result in shown:
        if isinstance(result, GateFailure):
            return BlindCheck(failure=result, calls=calls)
    answers = [answer for answer, _ in shown]
    readings = [reading for _, reading in shown]
    marked = letters[item.correct_index]
    picks = [policy.most_probable(reading, marked=marked) for reading in readings]
    recorded = [
        {
            "order": order,
            "picked_shown": letters[order.index(letters.index(pick))],
            "picked": letters.index(pick),
            "probabilities_shown": {letter: round(p, 6) for letter, p in answer_shown.items()},
            **answer.details,
        }
        for order, pick, (answer, answer_shown) in zip(
            orders,
            picks,
            ((a, policy.normalised(a.probabilities, letters=letters) or {}) for a in answers),
            strict=True,
        )
    ]
    # What is common to the orders (the format, the served model) at the top; what one order's answer said (its
    # letter as shown, its stated confidence) only in that order's entry, where the letters mean what was shown.
    common = {k: v for k, v in answers[0].details.items() if k not in PER_ORDER_DETAILS}
    details: dict[str, Any] = {**common, "orders": recorded}
    input_tokens = add_tokens(*(answer.input_tokens for answer in answers))
    output_tokens = add_tokens(*(answer.output_tokens for answer in answers))
    probabilities = policy.averaged(readings)
    if len(set(picks)) > 1:
        shown_letters = ", ".join(entry["picked_shown"] for entry in recorded)
        chosen = ", then ".join(f"{pick}. {item.options[letters.index(pick)]}" for pick in picks)
        return BlindCheck(
            failure=GateFailure(
                ORDER_DEPENDENT,
                f"the answer followed the order shown ({shown_letters}: {chosen}); not scored",
            ),
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            details={
                **details,
                "probabilities": {letter: round(p, 6) for letter, p in probabilities.items()},
                "marked": marked,
                "scored": False,
                "order_dependent": True,
            },
            calls=calls,
        )
    reading = policy.blind_reading(probabilities=probabilities, marked=marked, disagree_at=config.blind_disagree)
    return BlindCheck(
        reading=reading,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        details=details,
        calls=calls,
    )


async def _blind_in_order(
    item: GateItem, order: list[int], letters: tuple[str, ...], *, backend: Backend, budget: CallBudget
) -> tuple[BlindAnswer, dict[str, float]] | GateFailure:
    """One blind call with the options shown in `order`: (the answer, P per the options' own letters)."""
    options = tuple(item.options[index] for index in order)
    try:
        answer: BlindAnswer = await backend.ask_blind(
            document=blind_document(text=item.text, options=options, language=item.language),
            letters=letters,
            budget=budget,
        )
    except GateFailure as failure:
        return failure
    except Exception as exc:  # noqa: BLE001 - the blind call fails open like every other call
        logger.warning("gate unexpected error in the blind check of %s", item.key, exc_info=True)
        return GateFailure("unexpected_error", f"{type(exc).__name__}: {exc}")
    shown = policy.normalised(answer.probabilities, letters=letters)
    if shown is None:
        return GateFailure("missing_probability", "every option scored 0")
    return answer, policy.unshuffled(shown, order=order, letters=letters)
