"""A round's cost in one line, in the reader's language: "written for $0.004, checked for $0.0011"."""

from collections.abc import Mapping
from typing import Any

from django.utils.translation import gettext

from core import cost


def _role_words(role: str, amount: str) -> str:
    words = {
        cost.WRITER: gettext("written for %(amount)s"),
        cost.CHECKER: gettext("checked for %(amount)s"),
        cost.SECOND_OPINION: gettext("second opinion for %(amount)s"),
        cost.BLIND: gettext("blind re-answer for %(amount)s"),
    }
    return words.get(role, "%(amount)s") % {"amount": amount}


def _role_unpriced(role: str, tokens: int) -> str:
    words = {
        cost.WRITER: gettext("written: %(tokens)s tokens, no price"),
        cost.CHECKER: gettext("checked: %(tokens)s tokens, no price"),
        cost.SECOND_OPINION: gettext("second opinion: %(tokens)s tokens, no price"),
        cost.BLIND: gettext("blind re-answer: %(tokens)s tokens, no price"),
    }
    return words.get(role, "%(tokens)s") % {"tokens": f"{tokens:,}"}


def cost_line(round_cost: Any) -> str:
    """The stored cost (core.cost.round_cost) as one line; "" when nothing was spent or nothing is recorded."""
    if not isinstance(round_cost, Mapping) or not isinstance(round_cost.get("roles"), Mapping):
        return ""
    parts = []
    roles = round_cost["roles"]
    # In the roles' own order: a JSON column (PostgreSQL's jsonb) keeps keys in an order of its own.
    for role in sorted(roles, key=lambda name: cost.ROLES.index(name) if name in cost.ROLES else len(cost.ROLES)):
        entry = roles[role]
        if not isinstance(entry, Mapping):
            continue
        amount = entry.get("amount")
        if isinstance(amount, int | float) and not isinstance(amount, bool):
            text = cost.dollars_text(amount)
            if entry.get("estimated"):
                text = gettext("about %(amount)s") % {"amount": text}
            parts.append(_role_words(role, text))
        else:
            tokens = (cost.reported_tokens(entry.get("input_tokens")) or 0) + (
                cost.reported_tokens(entry.get("output_tokens")) or 0
            )
            parts.append(_role_unpriced(role, tokens))
    if not parts:
        return ""
    line = ", ".join(parts)
    if round_cost.get("estimated"):
        line += " " + gettext("(some tokens estimated: the server did not report them)")
    return line
