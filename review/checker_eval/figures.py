"""A checker evaluation's figures (pure): per-question results in, the report out (AUROC and sweep per check,
the calls and seconds, the verdict and advice), and the report as the text `manage.py checker_eval` prints."""

import math
import statistics
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

from core.cost import Price, Usage
from review.checker_eval.spend import bias_words, cost_lines, eval_cost, position_bias
from review.thresholds.sweep import (
    DEFECTIVE,
    GOOD,
    GRID,
    NEGATIVE_CHECKS,
    LabelledScore,
    SweepRow,
    sweep_row,
    widest_safe,
)
from verifier import causes, policy
from verifier.causes import UNAVAILABLE

SCORE = "score"  # the gate's score, next to the checks' own probabilities
# AUROC below this: the checker does not tell good from bad; below STRONG: only weakly.
SEPARATES = 0.6
STRONG = 0.8
# Failure reasons that mean "too slow" rather than "not there".
SLOW_REASONS = causes.TOO_SLOW_REASONS
UNREACHABLE_REASONS = causes.UNREACHABLE_REASONS


class Labelled(Protocol):
    """What the figures read of an item (review/checker_eval/items.py's EvalItem is one): its label."""

    label: str


@dataclass(frozen=True)
class EvalResult:
    item: Labelled
    outcome: str
    score: float | None
    probabilities: dict[str, float]
    reason: str
    message: str
    seconds: float
    calls: int | None
    backend: str
    model_id: str
    # The tokens it spent by role (verifier/usage.py), its blind answer and second opinion as recorded.
    usages: tuple[tuple[str, Usage], ...] = ()
    blind: dict[str, Any] | None = None
    second: dict[str, Any] | None = None

    @property
    def answered(self) -> bool:
        return self.score is not None and self.outcome in (policy.Outcome.PASSED, policy.Outcome.DROPPED)


@dataclass(frozen=True)
class CheckFigures:
    check: str  # a check's name, or "score" for the gate's score
    inverted: bool  # a high value means a defect (read as 1 - p)
    good: int
    bad: int
    auroc: float | None
    good_median: float | None
    bad_median: float | None
    rows: list[SweepRow]
    widest_safe: SweepRow | None


@dataclass(frozen=True)
class EvalReport:
    backend: str
    model_id: str
    timeout: float
    concurrency: int
    questions: int
    good: int
    bad: int
    answered: int
    unverified: int
    unverified_reasons: dict[str, int]
    checks: list[CheckFigures]
    calls_median: float | None
    calls_p95: float | None
    seconds_median: float | None
    seconds_p95: float | None
    wall_seconds: float
    verdict: str
    advice: list[str] = field(default_factory=list)
    # Every call that went out to the checker (and its second opinion), answered or not.
    calls_total: int | None = None
    # What the run cost and bought (spend.eval_cost), and whether the blind re-answer follows the order shown.
    cost: dict[str, Any] | None = None
    position_bias: dict[str, Any] | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def score(self) -> CheckFigures | None:
        return next((check for check in self.checks if check.check == SCORE), None)


# -- the figures (pure) ---------------------------------------------------------------------------------------


def auroc(good: list[float], bad: list[float]) -> float | None:
    """The chance that a good question scores above a bad one (ties count half); None without both classes."""
    if not good or not bad:
        return None
    wins = 0.0
    for g in good:
        for b in bad:
            wins += 1.0 if g > b else 0.5 if g == b else 0.0
    return wins / (len(good) * len(bad))


def percentile(values: list[float], share: float) -> float | None:
    """The nearest-rank percentile (p95: share 0.95); None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)]


def _median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def check_figures(check: str, pairs: list[tuple[float, str]]) -> CheckFigures:
    """(value, label) pairs of one check (or the score) into its figures; a defect-check is read as 1 - p."""
    inverted = check in NEGATIVE_CHECKS
    values = [(1.0 - value if inverted else value, label) for value, label in pairs]
    good = [value for value, label in values if label == GOOD]
    bad = [value for value, label in values if label == DEFECTIVE]
    scored = [
        LabelledScore(question_id=index, backend="", model_id="", score=value, label=label)
        for index, (value, label) in enumerate(values)
    ]
    rows = [sweep_row(scored, threshold) for threshold in GRID]
    return CheckFigures(
        check=check,
        inverted=inverted,
        good=len(good),
        bad=len(bad),
        auroc=auroc(good, bad),
        good_median=_median(good),
        bad_median=_median(bad),
        rows=rows,
        widest_safe=widest_safe(rows) if good else None,
    )


def eval_report(
    results: Iterable[EvalResult],
    *,
    backend: str,
    model_id: str,
    timeout: float,
    concurrency: int,
    wall_seconds: float,
    calls_total: int | None = None,
    prices: Mapping[str, Price] | None = None,
) -> EvalReport:
    results = list(results)
    answered = [result for result in results if result.answered]
    checks: dict[str, list[tuple[float, str]]] = {}
    for result in answered:
        for check, value in sorted(result.probabilities.items()):
            if policy.is_probability(value):
                checks.setdefault(check, []).append((float(value), result.item.label))
    figures = [check_figures(check, pairs) for check, pairs in sorted(checks.items())]
    figures.append(check_figures(SCORE, [(float(r.score), r.item.label) for r in answered if r.score is not None]))
    unverified = [result for result in results if not result.answered]
    reasons = Counter(result.reason or result.outcome for result in unverified)
    calls = [float(result.calls) for result in results if result.calls is not None]
    seconds = [result.seconds for result in results]
    served = Counter(result.model_id for result in answered if result.model_id)
    report = EvalReport(
        backend=backend,
        model_id=served.most_common(1)[0][0] if served else model_id,
        timeout=timeout,
        concurrency=concurrency,
        questions=len(results),
        good=sum(1 for result in results if result.item.label == GOOD),
        bad=sum(1 for result in results if result.item.label == DEFECTIVE),
        answered=len(answered),
        unverified=len(unverified),
        unverified_reasons=dict(reasons.most_common()),
        checks=figures,
        calls_median=_median(calls),
        calls_p95=percentile(calls, 0.95),
        seconds_median=_median(seconds),
        seconds_p95=percentile(seconds, 0.95),
        wall_seconds=round(wall_seconds, 3),
        verdict="",
        calls_total=calls_total,
        position_bias=position_bias(result.blind for result in results),
    )
    safe = report.score.widest_safe if report.score is not None else None
    spent = eval_cost(
        results,
        prices=prices or {},
        threshold=safe.threshold if safe is not None and safe.caught else None,
        caught=safe.caught if safe is not None else 0,
    )
    report = EvalReport(**{**asdict(report), "checks": figures, "cost": spent})
    verdict, advice = verdict_for(report)
    return EvalReport(**{**asdict(report), "checks": figures, "verdict": verdict, "advice": advice})


def verdict_for(report: EvalReport) -> tuple[str, list[str]]:
    """The plain-words verdict (a position bias named after it), and what to change (settings named)."""
    verdict, advice = _verdict(report)
    bias = bias_words(report.position_bias)
    return (f"{verdict} Also, {bias}" if bias else verdict), advice


def _verdict(report: EvalReport) -> tuple[str, list[str]]:
    advice: list[str] = []
    slow = sum(count for reason, count in report.unverified_reasons.items() if reason in SLOW_REASONS)
    unreachable = sum(count for reason, count in report.unverified_reasons.items() if reason in UNREACHABLE_REASONS)
    paused = report.unverified_reasons.get(UNAVAILABLE, 0)
    # After failures in a row the breaker pauses the checker: those count with what made it open.
    timed_out = slow
    if slow >= unreachable:
        slow += paused
    else:
        unreachable += paused
    if report.questions and slow * 2 > report.questions:
        then = f", and the breaker then paused the checker for {paused} more" if paused and timed_out else ""
        advice.append(
            f"{timed_out} of {report.questions} checks ran out of time at {report.timeout:g} s{then}: the checker "
            "is too slow for VERIFIER_TIMEOUT; raise VERIFIER_TIMEOUT (or lower VERIFIER_CONCURRENCY, or use a "
            "faster checker) and run this again."
        )
    if report.questions and unreachable * 2 > report.questions:
        advice.append(
            f"{unreachable} of {report.questions} checks could not reach the checker: check VERIFIER_BASE_URL and "
            "that the server is up."
        )
    if report.unverified and report.answered and report.unverified * 5 > report.questions:
        advice.append(
            f"{report.unverified} of {report.questions} questions went unverified: the figures rest on the "
            f"{report.answered} the checker answered."
        )
    score = report.score
    if not report.answered or score is None:
        return "the checker answered none of the questions: it cannot gate anything as configured.", advice
    if score.auroc is None:
        return "the set holds only one kind of question (good or bad), so how well it separates is unknown.", advice
    if score.auroc < SEPARATES:
        return "this checker does not separate good from bad questions: do not gate on it.", advice
    safe = score.widest_safe
    if safe is None or safe.caught == 0:
        where = "no threshold of the grid drops a bad question without dropping a good one"
    else:
        where = (
            f"a threshold of {safe.threshold:g} drops no good question and catches {safe.caught} of {score.bad} bad "
            "ones"
        )
    if score.auroc < STRONG:
        return (
            f"this checker separates good from bad questions only weakly (AUROC {score.auroc:.2f}); {where}: gate on "
            "it only with a threshold from your own labels, and expect it to let bad questions through.",
            advice,
        )
    return f"this checker separates good from bad questions (AUROC {score.auroc:.2f}); {where}.", advice


# -- as text --------------------------------------------------------------------------------------------------


def _number(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def format_text(report: EvalReport) -> str:
    lines = [
        f"== checker_eval: {report.backend} {report.model_id or '(no model id)'} "
        f"(VERIFIER_TIMEOUT {report.timeout:g} s, VERIFIER_CONCURRENCY {report.concurrency})",
        f"questions: {report.questions} ({report.good} good, {report.bad} bad); answered {report.answered}, "
        f"unverified {report.unverified} ({_share(report.unverified, report.questions)})",
    ]
    if report.unverified_reasons:
        why = ", ".join(f"{reason} {count}" for reason, count in report.unverified_reasons.items())
        lines.append(f"unverified because: {why}")
    lines.append(
        f"calls per answered question: median {_number(report.calls_median, 1)}, p95 {_number(report.calls_p95, 1)}"
        f" ({report.calls_total if report.calls_total is not None else '-'} calls in all); "
        f"seconds per question: median {_number(report.seconds_median)}, p95 {_number(report.seconds_p95)}; "
        f"{report.wall_seconds:.1f} s in all"
    )
    for figures in report.checks:
        name = "the gate's score" if figures.check == SCORE else figures.check
        lines.append("")
        lines.append(
            f"-- {name}{' (as 1 - p)' if figures.inverted else ''}: AUROC {_number(figures.auroc, 3)}; "
            f"median good {_number(figures.good_median)}, bad {_number(figures.bad_median)} "
            f"({figures.good} good, {figures.bad} bad)"
        )
        safe = figures.widest_safe
        if safe is None:
            lines.append("widest threshold that drops no good question: none")
        else:
            lines.append(
                f"widest threshold that drops no good question: {safe.threshold:g} "
                f"(catches {safe.caught} of {figures.bad} bad)"
            )
    # One table: per threshold of the sweep's grid, what each check (and the score) catches / drops of the good.
    lines.append("")
    names = ["score" if figures.check == SCORE else figures.check for figures in report.checks]
    widths = [max(len(name), 13) for name in names]
    lines.append("what each threshold catches (bad dropped) / drops (good dropped):")
    lines.append(f"{'threshold':>9} " + " ".join(name.rjust(width) for name, width in zip(names, widths, strict=True)))
    for index, threshold in enumerate(GRID):
        cells = []
        for figures, width in zip(report.checks, widths, strict=True):
            row = figures.rows[index]
            cells.append(f"{row.caught}/{row.good_dropped}".rjust(width))
        lines.append(f"{threshold:>9g} " + " ".join(cells))
    lines.append("")
    lines.extend(cost_lines(report.cost))
    lines.append(f"VERDICT: {report.verdict}")
    lines.extend(f"NOTE: {note}" for note in report.advice)
    return "\n".join(lines) + "\n"


def _share(part: int, whole: int) -> str:
    return f"{part / whole * 100:.0f}%" if whole else "-"
