"""The blind check: the question and its options without the marked answer, asked once per order shown.

The checker answers as a player would; its answer, mapped back to the options' own letters, is the third score
a closed-book verdict takes the least of (verifier.policy), and a confident other pick flags the question. The
round runtime (gate.py) calls `blind_check` beside the main check, on the same call budget.
"""

import asyncio
import logging
from typing import Any

from verifier import conf, policy
from verifier.backends import Backend, BlindAnswer, CallBudget, GateFailure
from verifier.decisions import ORDER_DEPENDENT, BlindCheck, GateItem
from verifier.prompts import blind_document, option_letters

# A blind answer's details that belong to the order it was shown in (letters as shown there).
PER_ORDER_DETAILS = frozenset({"served_choice", "confidence"})
logger = logging.getLogger("verifier")


def blind_applicable(item: GateItem) -> bool:
    letters = option_letters(item.options)
    return len(letters) >= 2 and 0 <= item.correct_index < len(letters)


def add_tokens(*values: int | None) -> int | None:
    known = [value for value in values if value is not None]
    return sum(known) if known else None


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
