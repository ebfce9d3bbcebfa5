"""What the models cost over the last days, by model and role, and what the check caught for it: questions the gate
dropped that a reviewer later labelled defective (and the good ones it dropped). Read for the sweep page."""

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.utils import timezone

from core import cost
from quiz.models import GenerationJob
from review.models import ReviewLabel
from review.selectors import latest_labels
from verifier.conf import model_prices
from verifier.models import Verdict, VerdictOutcome
from verifier.usage import decision_usages

WINDOW_DAYS = 30


@dataclass(frozen=True)
class ModelSpend:
    model: str
    role: str
    calls: int
    input_tokens: int
    output_tokens: int
    estimated: bool
    # Dollars at today's MODEL_PRICES; None: the model has no price.
    amount: float | None


@dataclass(frozen=True)
class ReviewSpend:
    since: datetime
    rows: list[ModelSpend]
    total: float | None
    # What the checks cost (every role but the writer), and the questions the gate dropped since then: labelled
    # defective by a reviewer (caught), labelled correct (a good question dropped), not labelled yet.
    checking: float | None
    dropped: int
    caught: int
    good_dropped: int
    unlabelled: int

    @property
    def per_caught(self) -> float | None:
        return None if self.checking is None or not self.caught else self.checking / self.caught


def _usages(since: datetime) -> Iterable[tuple[str, cost.Usage]]:
    for details in Verdict.objects.filter(created_at__gte=since).values_list("details", flat=True).iterator():
        yield from decision_usages(details or {})
    jobs = GenerationJob.objects.filter(created_at__gte=since).exclude(cost={}).values_list("cost", flat=True)
    for spent in jobs.iterator():
        roles = spent.get("roles") if isinstance(spent, dict) else None
        writer = cost.Usage.from_dict((roles or {}).get(cost.WRITER))
        if writer is not None:
            yield cost.WRITER, writer


def review_spend(*, days: int = WINDOW_DAYS, now: datetime | None = None) -> ReviewSpend:
    since = (now or timezone.now()) - timedelta(days=days)
    prices = model_prices()
    summed: dict[tuple[str, str], cost.Usage] = {}
    for role, usage in _usages(since):
        summed.setdefault((usage.model, role), cost.Usage(model=usage.model)).add(usage)
    rows = []
    for (model, role), usage in sorted(summed.items(), key=lambda pair: (pair[0][0], cost.ROLES.index(pair[0][1]))):
        amount = cost.amount(usage, cost.price_for(prices, model)[1])
        rows.append(
            ModelSpend(
                model=model,
                role=role,
                calls=usage.calls,
                input_tokens=usage.input_tokens,
                output_tokens=usage.output_tokens,
                estimated=usage.estimated,
                amount=None if amount is None else float(amount),
            )
        )
    priced = [row.amount for row in rows if row.amount is not None]
    checks = [row.amount for row in rows if row.role != cost.WRITER]
    dropped_ids = list(
        Verdict.objects.filter(created_at__gte=since, outcome=VerdictOutcome.DROPPED)
        .order_by()
        .values_list("question_id", flat=True)
        .distinct()
    )
    labels = latest_labels(question_ids=dropped_ids)
    return ReviewSpend(
        since=since,
        rows=rows,
        total=sum(priced) if priced else None,
        checking=None if any(amount is None for amount in checks) else float(sum(checks)),
        dropped=len(dropped_ids),
        caught=sum(1 for label in labels.values() if label == ReviewLabel.DEFECTIVE),
        good_dropped=sum(1 for label in labels.values() if label == ReviewLabel.CORRECT),
        unlabelled=len(dropped_ids) - len(labels),
    )
