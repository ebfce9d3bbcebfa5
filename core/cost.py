"""What a model's tokens cost: the operator's prices (MODEL_PRICES), the tokens a server reported (or an estimate
when it reported none or nonsense), and a round's cost by role. Plain data and arithmetic, no framework.

A price is dollars per million input tokens and per million output tokens: `jev-1.13.0=0.042/0,
gpt-4o-mini-2024-07-18=0.15/0.60`. A model with no price still has its tokens counted; its amount is None ("no
price"), never a guess.
"""

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

MILLION = Decimal(1_000_000)
# One call's count past this is a broken counter, not a reply: the call's tokens are estimated instead.
MAX_TOKENS_PER_CALL = 10_000_000
# A rough count for a server that says nothing: about four characters of English to a token.
CHARS_PER_TOKEN = 4
# The roles a round's tokens are spent in, in the order a page lists them.
WRITER = "writer"
CHECKER = "checker"
SECOND_OPINION = "second_opinion"
BLIND = "blind"
ROLES = (WRITER, CHECKER, SECOND_OPINION, BLIND)


class PriceSettingError(ValueError):
    """MODEL_PRICES does not parse; the message names the entry (and the model, when it has one)."""


@dataclass(frozen=True)
class Price:
    """Dollars per million tokens."""

    input: Decimal
    output: Decimal


def _dollars(text: str, *, model: str, which: str) -> Decimal:
    try:
        value = Decimal(text.strip().lstrip("$"))
    except InvalidOperation:
        raise PriceSettingError(
            f"MODEL_PRICES: the {which} price of {model!r} is {text.strip()!r}, not a number of dollars per million "
            "tokens"
        ) from None
    if not value.is_finite() or value < 0:
        raise PriceSettingError(f"MODEL_PRICES: the {which} price of {model!r} must be a number, 0 or more")
    return value


def prices_parse(text: str) -> dict[str, Price]:
    """`model=input/output,...` (dollars per million tokens) -> {model: Price}. Raises PriceSettingError."""
    prices: dict[str, Price] = {}
    for entry in (part.strip() for part in (text or "").split(",")):
        if not entry:
            continue
        model, equals, pair = entry.rpartition("=")
        model = model.strip()
        if not equals or not model:
            raise PriceSettingError(
                f"MODEL_PRICES: {entry!r} is not 'model=input/output' (dollars per million tokens), "
                "e.g. gpt-4o-mini-2024-07-18=0.15/0.60"
            )
        if pair.count("/") != 1:
            raise PriceSettingError(
                f"MODEL_PRICES: the price of {model!r} is {pair.strip()!r}; write input/output dollars per million "
                "tokens, e.g. 0.15/0.60"
            )
        if model in prices:
            raise PriceSettingError(f"MODEL_PRICES: {model!r} has two prices")
        input_text, output_text = pair.split("/")
        prices[model] = Price(
            input=_dollars(input_text, model=model, which="input"),
            output=_dollars(output_text, model=model, which="output"),
        )
    return prices


def reported_tokens(value: Any) -> int | None:
    """A count a server reported, or None when it is not one a reply could carry (absent, negative, not a number,
    past MAX_TOKENS_PER_CALL). A fraction is rounded up: never fewer tokens than the server said."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, str):
        value = value.strip()
        if not value.isdigit():
            return None
        value = int(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            return None
        value = math.ceil(value)
    if not isinstance(value, int) or value < 0 or value > MAX_TOKENS_PER_CALL:
        return None
    return value


def estimate_tokens(chars: int) -> int:
    return math.ceil(max(0, chars) / CHARS_PER_TOKEN)


@dataclass
class Usage:
    """Tokens one model spent in one role. `estimated`: some of them are an estimate (the server said none)."""

    model: str = ""
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    estimated: bool = False

    def add(self, other: "Usage") -> None:
        self.calls += other.calls
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.estimated = self.estimated or other.estimated

    def as_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "calls": self.calls,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "estimated": self.estimated,
        }

    @classmethod
    def from_dict(cls, data: Any) -> "Usage | None":
        """A stored usage read back; None for anything that is not one (an older record, a hand edit)."""
        if not isinstance(data, Mapping):
            return None

        def count(name: str) -> int:
            return reported_tokens(data.get(name)) or 0

        return cls(
            model=str(data.get("model") or "")[:200],
            calls=count("calls"),
            input_tokens=count("input_tokens"),
            output_tokens=count("output_tokens"),
            estimated=bool(data.get("estimated")),
        )


def call_usage(
    *, model: str, input_tokens: Any, output_tokens: Any, input_chars: int = 0, output_chars: int = 0, calls: int = 1
) -> Usage:
    """One answer's usage from what its server reported; a count it did not report (or reported as nonsense) is
    estimated from the characters sent and received, and the usage says so."""
    reported_in, reported_out = reported_tokens(input_tokens), reported_tokens(output_tokens)
    return Usage(
        model=model,
        calls=max(0, calls),
        input_tokens=estimate_tokens(input_chars) if reported_in is None else reported_in,
        output_tokens=estimate_tokens(output_chars) if reported_out is None else reported_out,
        estimated=reported_in is None or reported_out is None,
    )


def price_for(prices: Mapping[str, Price], *models: str) -> tuple[str, Price | None]:
    """The first of `models` with a price (the pinned id, then the one the server said served), and that price."""
    for model in models:
        if model and model in prices:
            return model, prices[model]
    return next((model for model in models if model), ""), None


def amount(usage: Usage, price: Price | None) -> Decimal | None:
    if price is None:
        return None
    return (usage.input_tokens * price.input + usage.output_tokens * price.output) / MILLION


def round_cost(usages: Iterable[tuple[str, Usage]], prices: Mapping[str, Price]) -> dict[str, Any]:
    """A round's cost as it is stored and exported: per role, its model(s), calls, tokens, whether estimated and the
    amount in dollars (None: some model of it has no price), and the total (None when no role is priced)."""
    by_role: dict[str, dict[str, Usage]] = {}
    for role, usage in usages:
        models = by_role.setdefault(role, {})
        models.setdefault(usage.model, Usage(model=usage.model)).add(usage)
    roles: dict[str, Any] = {}
    total = Decimal(0)
    priced_any = False
    unpriced: list[str] = []
    for role in sorted(by_role, key=lambda name: ROLES.index(name) if name in ROLES else len(ROLES)):
        summed = Usage()
        role_amount: Decimal | None = Decimal(0)
        for model, usage in by_role[role].items():
            summed.add(usage)
            _, price = price_for(prices, model)
            part = amount(usage, price)
            if part is None:
                role_amount = None
                unpriced.append(model)
            elif role_amount is not None:
                role_amount += part
        entry = summed.as_dict()
        entry["model"] = ", ".join(sorted(by_role[role]))
        entry["amount"] = None if role_amount is None else float(role_amount)
        roles[role] = entry
        if role_amount is not None:
            total += role_amount
            priced_any = True
    return {
        "roles": roles,
        "total": float(total) if priced_any else None,
        "input_tokens": sum(entry["input_tokens"] for entry in roles.values()),
        "output_tokens": sum(entry["output_tokens"] for entry in roles.values()),
        "estimated": any(entry["estimated"] for entry in roles.values()),
        # Models whose tokens are counted without a price (MODEL_PRICES names none for them).
        "no_price": sorted(set(unpriced)),
    }


def dollars_text(value: float | Decimal | None) -> str:
    """$0.004, $0.0011, $1.25: two significant figures below a dollar, cents above."""
    if value is None:
        return ""
    number = Decimal(str(value))
    if number <= 0:
        return "$0"
    if number >= 1:
        return f"${number:,.2f}"
    digits = -number.adjusted() + 1
    return "$" + f"{number:.{digits}f}".rstrip("0").rstrip(".")
