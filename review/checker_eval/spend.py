"""What a checker evaluation cost and what the money bought (pure): the run's tokens and dollars, per 1,000
questions checked and per defect caught at the recommended threshold, the second opinion's share of it (the
cascade: cheap first, the strong judge only when unsure), and whether the blind re-answer follows the order the
options are shown in rather than their content (a position bias: "A", whatever A is)."""

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from core import cost
from review.thresholds.sweep import DEFECTIVE

# A blind re-answer is called position-biased when, of the questions asked in two orders, more than this share
# named the option at the same place in both (and so two different options) ...
FOLLOWS_ORDER_SHARE = 0.5
# ... or, asked in one order only, one shown place took at least this share of at least MIN_ANSWERS answers (the
# right option is shuffled to every place, so a checker that reads the content spreads its picks).
ONE_PLACE_SHARE = 0.8
MIN_ANSWERS = 8


def _per(amount: float | None, count: int, scale: int = 1) -> float | None:
    return None if amount is None or count <= 0 else amount * scale / count


def eval_cost(
    results: Sequence[Any], *, prices: Mapping[str, cost.Price], threshold: float | None, caught: int
) -> dict[str, Any]:
    """The run's cost: `results` are checker_eval's EvalResults (their `usages` by role, their second opinion);
    `threshold`/`caught`: the recommended threshold and the defects the first checker catches there."""
    usages = [usage for result in results for usage in result.usages]
    spent = cost.round_cost(usages, prices)
    roles = spent["roles"]
    first = [roles[role]["amount"] for role in (cost.CHECKER, cost.BLIND) if role in roles]
    first_amount = None if any(amount is None for amount in first) else float(sum(first))
    found: dict[str, Any] = {
        "questions": len(results),
        "input_tokens": spent["input_tokens"],
        "output_tokens": spent["output_tokens"],
        "estimated": spent["estimated"],
        "amount": spent["total"] if not spent["no_price"] else None,
        "roles": roles,
        "no_price": spent["no_price"],
        "per_thousand": _per(first_amount, len(results), 1000),
        "threshold": threshold,
        "caught": caught,
        "per_caught": _per(first_amount, caught) if threshold is not None else None,
        "first_amount": first_amount,
        "second_opinion": None,
    }
    seconds = [result.second for result in results if isinstance(result.second, Mapping)]
    if seconds or cost.SECOND_OPINION in roles:
        asked = [second for second in seconds if second.get("outcome") not in ("skipped", None)]
        settled = [second for second in asked if second.get("outcome") in ("passed", "dropped")]
        cascade_caught = sum(1 for r in results if r.item.label == DEFECTIVE and r.outcome == "dropped")
        added = (roles.get(cost.SECOND_OPINION) or {}).get("amount", 0.0)
        total = None if first_amount is None or added is None else first_amount + added
        found["second_opinion"] = {
            "asked": len(asked),
            "settled": len(settled),
            "changed": sum(1 for second in settled if second.get("changed")),
            "amount": added,
            "cascade_amount": total,
            "cascade_caught": cascade_caught,
            "cascade_per_thousand": _per(total, len(results), 1000),
            "cascade_per_caught": _per(total, cascade_caught),
        }
    return found


def position_bias(blinds: Iterable[Any]) -> dict[str, Any] | None:
    """From each question's recorded blind answer (the gate's details["blind"], with its `orders`): how often the
    pick followed the place shown rather than the option; None when no blind answer was recorded."""
    shown: Counter[str] = Counter()
    compared = follows_order = follows_content = 0
    for blind in blinds:
        orders = blind.get("orders") if isinstance(blind, Mapping) else None
        if not isinstance(orders, list):
            continue
        entries = [entry for entry in orders if isinstance(entry, Mapping) and "picked_shown" in entry]
        shown.update(str(entry["picked_shown"]) for entry in entries)
        if len(entries) >= 2:
            compared += 1
            same_place = len({entry["picked_shown"] for entry in entries}) == 1
            same_option = len({entry.get("picked") for entry in entries}) == 1
            follows_content += same_option
            follows_order += same_place and not same_option
    answers = sum(shown.values())
    if not answers:
        return None
    letter, count = shown.most_common(1)[0]
    share = count / answers
    biased = (compared > 0 and follows_order > FOLLOWS_ORDER_SHARE * compared) or (
        compared == 0 and answers >= MIN_ANSWERS and share >= ONE_PLACE_SHARE
    )
    return {
        "answers": answers,
        "compared": compared,
        "follows_order": follows_order,
        "follows_content": follows_content,
        "top_letter": letter,
        "top_share": round(share, 4),
        "biased": biased,
    }


def bias_words(bias: Mapping[str, Any] | None) -> str:
    """The report's sentence naming a position bias, or ""."""
    if not bias or not bias.get("biased"):
        return ""
    share = f"{bias['top_share'] * 100:.0f}%"
    if bias["compared"]:
        how = (
            f"asked each question with the options in two orders, it named the option at the same place in "
            f"{bias['follows_order']} of {bias['compared']} (so two different options), and "
        )
    else:
        how = ""
    return (
        f"its blind re-answer has a position bias: {how}{share} of its answers were the option shown as "
        f"{bias['top_letter']!r}. It answers by the order the options are shown in, not by their content, so its "
        "blind check measures nothing: use another checker or turn the blind check off (VERIFIER_BLIND=false)."
    )


def _dollars(amount: float | None) -> str:
    return "no price" if amount is None else cost.dollars_text(amount)


def cost_lines(spent: Mapping[str, Any] | None) -> list[str]:
    """The cost as the text report prints it."""
    if not spent:
        return []
    estimated = " (some tokens estimated: the server did not report them)" if spent["estimated"] else ""
    lines = [
        f"cost: {spent['input_tokens']:,} input and {spent['output_tokens']:,} output tokens, "
        f"{_dollars(spent['amount'])} in all{estimated}; the checker: {_dollars(spent['per_thousand'])} per 1,000 "
        "questions checked"
    ]
    if spent["threshold"] is None:
        lines[-1] += "; no recommended threshold, so no cost per caught defect"
    elif spent["caught"]:
        lines[-1] += (
            f", {_dollars(spent['per_caught'])} per caught defect at the recommended threshold "
            f"{spent['threshold']:g} ({spent['caught']} caught)"
        )
    else:
        lines[-1] += f"; the recommended threshold {spent['threshold']:g} catches no defect"
    second = spent.get("second_opinion")
    if second:
        lines.append(
            f"second opinion: asked about {second['asked']} borderline question(s), settled {second['settled']} "
            f"(changed {second['changed']}), for {_dollars(second['amount'])}; the cascade: "
            f"{_dollars(second['cascade_per_thousand'])} per 1,000 questions, "
            f"{_dollars(second['cascade_per_caught'])} per caught defect ({second['cascade_caught']} caught)"
        )
    if spent["no_price"]:
        lines.append(f"no price for: {', '.join(spent['no_price'])} (set MODEL_PRICES)")
    return lines
