"""What writing one round cost: the writer's tokens and every check's (by role), priced at MODEL_PRICES."""

from collections.abc import Mapping
from typing import Any

from core import cost, metrics
from quiz.generation.write_outcome import WriteOutcome
from verifier.usage import decision_usages


def outcome_usages(outcome: WriteOutcome) -> list[tuple[str, cost.Usage]]:
    """(role, usage) of the writer and of every question checked, the dropped and the unused ones included."""
    usages: list[tuple[str, cost.Usage]] = []
    if outcome.writer_usage.calls:
        usages.append((cost.WRITER, outcome.writer_usage))
    for candidate in outcome.candidates:
        if candidate.decision is not None:
            usages.extend(decision_usages(candidate.decision))
    return usages


def outcome_cost(outcome: WriteOutcome, prices: Mapping[str, cost.Price]) -> dict[str, Any]:
    return cost.round_cost(outcome_usages(outcome), prices)


def writer_counted(outcome: WriteOutcome, prices: Mapping[str, cost.Price]) -> None:
    """The writer's tokens and amount in the metrics (the checks count their own as they are decided)."""
    usage = outcome.writer_usage
    if usage.calls:
        _, price = cost.price_for(prices, usage.model)
        metrics.model_usage(model=usage.model, role=cost.WRITER, usage=usage, amount=cost.amount(usage, price))
