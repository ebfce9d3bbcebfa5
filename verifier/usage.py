"""The tokens a check spent, read back: by role (the checker's own calls, the blind re-answer's, the second
opinion's), kept in the decision's details under "usage" ({role: core.cost.Usage as a dict}), so a verdict carries
what it cost and a round's cost is the sum of its verdicts' and its writer's. The verdict writes them
(verifier/question/verdict.py: `spent`); the review side and the round's cost line read them here.
"""

from collections.abc import Iterable, Mapping
from typing import Any

from core import cost
from verifier.decisions import GateDecision

USAGE = "usage"


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
