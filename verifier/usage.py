"""The tokens one check spent, by role: the checker's own calls, the blind re-answer's, the second opinion's.

Kept in the decision's details under "usage" ({role: core.cost.Usage as a dict}), so a verdict carries what it
cost and a round's cost is the sum of its verdicts' and its writer's. A count the server did not report (or
reported as nonsense) is estimated from the characters sent and marked estimated. A call that got no answer
(a timeout, a refused connection) is not counted: nothing says what it cost.
"""

from collections.abc import Iterable, Mapping
from typing import Any

from core import cost, metrics
from verifier.backends import BackendAnswer
from verifier.decisions import BlindCheck, GateDecision, GateItem

USAGE = "usage"
# What a checker writes back per check asked (a probability, a letter): a couple of tokens.
OUTPUT_CHARS_PER_CHECK = 8


def item_chars(item: GateItem) -> int:
    return len(item.text) + sum(len(option) for option in item.options) + len(item.explanation)


def check_usage(
    item: GateItem, *, model: str, answer: BackendAnswer, checks: tuple[str, ...]
) -> dict[str, dict[str, Any]]:
    usage = cost.call_usage(
        model=model,
        input_tokens=answer.input_tokens,
        output_tokens=answer.output_tokens,
        input_chars=item_chars(item) * max(1, answer.calls),
        output_chars=OUTPUT_CHARS_PER_CHECK * len(checks),
        calls=answer.calls,
    )
    return {cost.CHECKER: usage.as_dict()}


def blind_usage(item: GateItem, *, model: str, blind: BlindCheck | None) -> dict[str, dict[str, Any]]:
    if blind is None or (blind.reading is None and not blind.order_dependent):
        return {}
    usage = cost.call_usage(
        model=model,
        input_tokens=blind.input_tokens,
        output_tokens=blind.output_tokens,
        input_chars=(len(item.text) + sum(len(option) for option in item.options)) * max(1, blind.calls),
        output_chars=OUTPUT_CHARS_PER_CHECK * max(1, blind.calls),
        calls=blind.calls,
    )
    return {cost.BLIND: usage.as_dict()}


def second_usage(item: GateItem, *, model: str, record: Any) -> dict[str, dict[str, Any]]:
    """The second opinion's record (verifier.second_opinion): counted when it answered."""
    if not isinstance(record, Mapping) or record.get("outcome") == "failed" or "input_tokens" not in record:
        return {}
    usage = cost.call_usage(
        model=model,
        input_tokens=record.get("input_tokens"),
        output_tokens=record.get("output_tokens"),
        input_chars=item_chars(item),
        output_chars=OUTPUT_CHARS_PER_CHECK * len(record.get("probabilities") or {}),
    )
    return {cost.SECOND_OPINION: usage.as_dict()}


def decision_usages(decision: GateDecision | Mapping[str, Any]) -> list[tuple[str, cost.Usage]]:
    """(role, usage) of one decision, or of a verdict's stored details."""
    details = decision.details if isinstance(decision, GateDecision) else decision
    found = details.get(USAGE) if isinstance(details, Mapping) else None
    if not isinstance(found, Mapping):
        return []
    usages = []
    for role, data in found.items():
        usage = cost.Usage.from_dict(data)
        if role in cost.ROLES and usage is not None:
            usages.append((role, usage))
    return usages


def usage_summed(decisions: Iterable[GateDecision]) -> dict[str, dict[str, Any]]:
    """Several decisions' usage as one (a question asked several things, e.g. one ask per option), by role."""
    summed: dict[str, cost.Usage] = {}
    for decision in decisions:
        for role, usage in decision_usages(decision):
            summed.setdefault(role, cost.Usage(model=usage.model)).add(usage)
    return {role: usage.as_dict() for role, usage in summed.items()}


def usage_counted(decision: GateDecision, prices: Mapping[str, cost.Price]) -> None:
    """The decision's tokens and amount in the metrics, by model and role."""
    for role, usage in decision_usages(decision):
        _, price = cost.price_for(prices, usage.model)
        metrics.model_usage(model=usage.model, role=role, usage=usage, amount=cost.amount(usage, price))
