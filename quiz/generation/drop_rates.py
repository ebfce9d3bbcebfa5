"""The drop rates of recent rounds, per writer and checker model, and the over-ask they suggest (read from the
generation jobs: each records how many questions it had checked and how many the gate dropped)."""

import statistics
from dataclasses import dataclass

from django.conf import settings

from quiz.generation import over_ask
from quiz.models import GenerationJob, GenerationStatus, JobKind


@dataclass(frozen=True)
class DropHistory:
    writer_model: str
    checker_model: str
    # Each recent round's share of checked questions the gate dropped, newest first.
    rates: tuple[float, ...]

    @property
    def rounds(self) -> int:
        return len(self.rates)

    @property
    def median(self) -> float | None:
        return statistics.median(self.rates) if self.rates else None

    @property
    def median_percent(self) -> float | None:
        return None if self.median is None else self.median * 100

    @property
    def kept_percent(self) -> float | None:
        kept = self.kept_at_default
        return None if kept is None else kept * 100

    @property
    def suggested(self) -> float | None:
        """The over-ask that would have kept 95 % of these rounds whole (bounded 1.2x–2.5x)."""
        return over_ask.suggested(self.rates)

    @property
    def kept_at_default(self) -> float | None:
        """The share of these rounds the fixed 1.5x kept whole."""
        return over_ask.kept_whole(self.rates, over_ask.DEFAULT)


def _recent(limit: int):
    return GenerationJob.objects.filter(
        kind=JobKind.WRITE, gated=True, status=GenerationStatus.DONE, checked__gt=0
    ).order_by("-created_at")[: max(1, limit)]


def drop_history(*, writer_model: str, checker_model: str, limit: int | None = None) -> DropHistory:
    limit = limit or settings.QUIZ_OVER_ASK_ROUNDS
    jobs = GenerationJob.objects.filter(
        kind=JobKind.WRITE,
        gated=True,
        status=GenerationStatus.DONE,
        checked__gt=0,
        model_id=writer_model,
        checker_model_id=checker_model,
    ).order_by("-created_at")[: max(1, limit)]
    rates = tuple(min(1.0, dropped / checked) for dropped, checked in jobs.values_list("dropped", "checked"))
    return DropHistory(writer_model=writer_model, checker_model=checker_model, rates=rates)


def drop_histories(*, limit: int | None = None, pairs: int = 10) -> list[DropHistory]:
    """The writer/checker pairs of the most recent rounds (at most `pairs`), each with its own recent history."""
    limit = limit or settings.QUIZ_OVER_ASK_ROUNDS
    seen: list[tuple[str, str]] = []
    for pair in _recent(limit * pairs).values_list("model_id", "checker_model_id"):
        if pair not in seen:
            seen.append(pair)
        if len(seen) >= pairs:
            break
    return [drop_history(writer_model=writer, checker_model=checker, limit=limit) for writer, checker in seen]


def over_ask_for(*, writer_model: str, checker_model: str) -> float:
    """The over-ask a new round writes with: 1.5x, or with QUIZ_OVER_ASK_AUTO the one the recent rounds of these
    two models suggest, once there are QUIZ_OVER_ASK_MIN_ROUNDS of them."""
    if not settings.QUIZ_OVER_ASK_AUTO:
        return over_ask.DEFAULT
    history = drop_history(writer_model=writer_model, checker_model=checker_model)
    if history.rounds < max(1, settings.QUIZ_OVER_ASK_MIN_ROUNDS) or history.suggested is None:
        return over_ask.DEFAULT
    return history.suggested


def drop_rates_context() -> dict:
    """What the generate page and the sweep show of the drop rates (templates/quiz/_drop_rates.html)."""
    return {
        "drop_rates": drop_histories(pairs=5),
        "over_ask_auto": settings.QUIZ_OVER_ASK_AUTO,
        "over_ask_default": over_ask.DEFAULT,
    }
