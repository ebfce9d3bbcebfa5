"""The sweep: what each threshold would have done to the labelled questions. Pure: no I/O, no Django.

A question is dropped when the gate's rule (`policy.passes`) would drop it: a score below the threshold; a
score equal to the threshold passes.
"""

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from verifier import policy

GOOD = "correct"
DEFECTIVE = "defective"
GRID: tuple[float, ...] = tuple(round(0.05 * step, 2) for step in range(1, 20))  # 0.05 .. 0.95
RELIABILITY_BINS = 10
# For these checks a high probability means a defect; calibration reads them as 1 - p of "good".
NEGATIVE_CHECKS = frozenset({policy.UNSUPPORTED_DETAIL, policy.CONTRADICTION})


@dataclass(frozen=True)
class LabelledScore:
    question_id: int
    backend: str
    model_id: str
    score: float
    label: str  # "correct" or "defective"
    probabilities: Mapping[str, float] = field(default_factory=dict)
    # What the second opinion said on this verdict (details["second_opinion"]), when it was asked.
    second_opinion: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class SecondOpinionSummary:
    """How many labelled questions reached the second opinion and what it changed."""

    reached: int  # asked (borderline)
    failed: int  # no answer: the first verdict stood
    changed: int
    passed_to_dropped: int
    dropped_to_passed: int
    changes_right: int  # a change the label agrees with: a defective one dropped, a good one passed
    changes_wrong: int


@dataclass(frozen=True)
class SweepRow:
    threshold: float
    caught: int  # defective questions dropped
    good_dropped: int
    dropped: int
    shown: int
    precision: float | None  # of drops: caught / dropped
    shown_share: float
    error_rate_shown: float | None  # defective among shown
    catch_rate: float | None  # caught / defective
    false_drop_rate: float | None  # good dropped / good


@dataclass(frozen=True)
class ReliabilityBin:
    low: float
    high: float
    count: int
    mean_predicted: float | None
    observed_correct: float | None


@dataclass(frozen=True)
class CheckCalibration:
    check: str
    count: int
    brier: float | None
    bins: list[ReliabilityBin]
    inverted: bool  # True when p is the probability of a defect, read as 1 - p


@dataclass(frozen=True)
class SweepResult:
    backend: str
    model_id: str
    good: int
    defective: int
    rows: list[SweepRow]
    widest_safe: SweepRow | None
    warning: str
    calibration: list[CheckCalibration]
    second_opinion: SecondOpinionSummary | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _ratio(numerator: int, denominator: int) -> float | None:
    return numerator / denominator if denominator else None


def thresholds_for(scores: Iterable[float]) -> list[float]:
    """The grid plus every distinct score (each score is the threshold at which that question starts to drop)."""
    return sorted(set(GRID) | {float(score) for score in scores})


def sweep_row(items: list[LabelledScore], threshold: float) -> SweepRow:
    good = sum(1 for item in items if item.label == GOOD)
    defective = len(items) - good
    dropped_labels = [item.label for item in items if not policy.passes(score=item.score, threshold=threshold)]
    caught = dropped_labels.count(DEFECTIVE)
    good_dropped = dropped_labels.count(GOOD)
    dropped = caught + good_dropped
    shown = len(items) - dropped
    return SweepRow(
        threshold=threshold,
        caught=caught,
        good_dropped=good_dropped,
        dropped=dropped,
        shown=shown,
        precision=_ratio(caught, dropped),
        shown_share=_ratio(shown, len(items)) or 0.0,
        error_rate_shown=_ratio(defective - caught, shown),
        catch_rate=_ratio(caught, defective),
        false_drop_rate=_ratio(good_dropped, good),
    )


def sweep_rows(items: list[LabelledScore]) -> list[SweepRow]:
    return [sweep_row(items, threshold) for threshold in thresholds_for(item.score for item in items)]


def widest_safe(rows: list[SweepRow]) -> SweepRow | None:
    """The highest threshold that drops no labelled-good question."""
    safe = [row for row in rows if row.good_dropped == 0]
    return max(safe, key=lambda row: row.threshold) if safe else None


def labels_warning(*, good: int, defective: int, minimum: int) -> str:
    if good >= minimum and defective >= minimum:
        return ""
    return f"Too few labels to trust: {good} good and {defective} defective (fewer than {minimum} of either class)."


def reliability(pairs: list[tuple[float, int]], *, bins: int = RELIABILITY_BINS) -> list[ReliabilityBin]:
    """(predicted probability of good, 1 if labelled good else 0) pairs into equal-width bins; 1.0 is in the last."""
    grouped: list[list[tuple[float, int]]] = [[] for _ in range(bins)]
    for predicted, outcome in pairs:
        # round(): 0.7 * 10 must land in bin 7, not 6.999… in bin 6.
        grouped[min(math.floor(round(predicted * bins, 9)), bins - 1)].append((predicted, outcome))
    table = []
    for index, members in enumerate(grouped):
        count = len(members)
        table.append(
            ReliabilityBin(
                low=round(index / bins, 4),
                high=round((index + 1) / bins, 4),
                count=count,
                mean_predicted=sum(p for p, _ in members) / count if count else None,
                observed_correct=sum(y for _, y in members) / count if count else None,
            )
        )
    return table


def brier(pairs: list[tuple[float, int]]) -> float | None:
    if not pairs:
        return None
    return sum((predicted - outcome) ** 2 for predicted, outcome in pairs) / len(pairs)


def calibration(items: list[LabelledScore]) -> list[CheckCalibration]:
    by_check: dict[str, list[tuple[float, int]]] = defaultdict(list)
    for item in items:
        outcome = 1 if item.label == GOOD else 0
        for check, probability in item.probabilities.items():
            if not policy.is_probability(probability):
                continue
            predicted = 1.0 - float(probability) if check in NEGATIVE_CHECKS else float(probability)
            by_check[check].append((predicted, outcome))
    return [
        CheckCalibration(
            check=check,
            count=len(pairs),
            brier=brier(pairs),
            bins=reliability(pairs),
            inverted=check in NEGATIVE_CHECKS,
        )
        for check, pairs in sorted(by_check.items())
    ]


def second_opinion_summary(items: list[LabelledScore]) -> SecondOpinionSummary | None:
    asked = [item for item in items if isinstance(item.second_opinion, Mapping)]
    if not asked:
        return None
    changes = [item for item in asked if item.second_opinion.get("changed")]
    to_dropped = [item for item in changes if item.second_opinion.get("outcome") == policy.Outcome.DROPPED]
    to_passed = [item for item in changes if item.second_opinion.get("outcome") == policy.Outcome.PASSED]
    right = sum(1 for item in to_dropped if item.label == DEFECTIVE) + sum(1 for i in to_passed if i.label == GOOD)
    return SecondOpinionSummary(
        reached=len(asked),
        failed=sum(1 for item in asked if item.second_opinion.get("outcome") in ("failed", "skipped")),
        changed=len(changes),
        passed_to_dropped=len(to_dropped),
        dropped_to_passed=len(to_passed),
        changes_right=right,
        changes_wrong=len(to_dropped) + len(to_passed) - right,
    )


def sweep(items: Iterable[LabelledScore], *, min_labels: int = 10) -> list[SweepResult]:
    """One result per (backend, model id), in name order."""
    groups: dict[tuple[str, str], list[LabelledScore]] = defaultdict(list)
    for item in items:
        groups[(item.backend, item.model_id)].append(item)
    results = []
    for (backend, model_id), members in sorted(groups.items()):
        good = sum(1 for item in members if item.label == GOOD)
        defective = len(members) - good
        rows = sweep_rows(members)
        results.append(
            SweepResult(
                backend=backend,
                model_id=model_id,
                good=good,
                defective=defective,
                rows=rows,
                widest_safe=widest_safe(rows) if good else None,
                warning=labels_warning(good=good, defective=defective, minimum=min_labels),
                calibration=calibration(members),
                second_opinion=second_opinion_summary(members),
            )
        )
    return results


def score_from_probabilities(probabilities: Mapping[str, float]) -> float:
    """The gate's score for a set of check probabilities (for imported sets that carry no score)."""
    if all(check in probabilities for check in policy.GROUNDED_CHECKS):
        return min(
            float(probabilities[policy.SUPPORTED]),
            float(probabilities[policy.ANSWERS_QUESTION]),
            1.0 - float(probabilities[policy.UNSUPPORTED_DETAIL]),
            1.0 - float(probabilities[policy.CONTRADICTION]),
        )
    if policy.ANSWER_CORRECT in probabilities:
        return policy.closed_book_score(
            probabilities=probabilities,
            has_explanation=policy.EXPLANATION_TRUE in probabilities,
            has_blind=policy.BLIND in probabilities,
        )
    return min(float(value) for value in probabilities.values())


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:.0f}%"


def format_text(results: list[SweepResult]) -> str:
    """The sweep as plain text, for the management command."""
    if not results:
        return "No labelled questions with recorded scores yet: label some in the review queue, or --import a set."
    lines: list[str] = []
    for result in results:
        lines.append(f"== {result.backend} {result.model_id or '(no model id)'}")
        lines.append(f"labelled: {result.good} good, {result.defective} defective")
        if result.warning:
            lines.append(f"WARNING: {result.warning}")
        if result.widest_safe is None:
            lines.append("widest safe threshold: none (no labelled-good question)")
        else:
            safe = result.widest_safe
            lines.append(
                f"widest threshold that drops no labelled-good question: {safe.threshold:g} "
                f"(catches {safe.caught} of {result.defective} defective, {_percent(safe.catch_rate)})"
            )
        second = result.second_opinion
        if second is not None:
            lines.append(
                f"second opinion: {second.reached} question(s) reached it, {second.failed} without an answer "
                f"(the first verdict stood); it changed {second.changed}: {second.passed_to_dropped} passed -> "
                f"dropped, {second.dropped_to_passed} dropped -> passed ({second.changes_right} as labelled, "
                f"{second.changes_wrong} against the label)"
            )
        lines.append("")
        lines.append(f"{'threshold':>9} {'caught':>6} {'good drop':>9} {'precision':>9} {'shown':>6} {'err shown':>9}")
        for row in result.rows:
            lines.append(
                f"{row.threshold:>9.4g} {row.caught:>6} {row.good_dropped:>9} {_percent(row.precision):>9} "
                f"{_percent(row.shown_share):>6} {_percent(row.error_rate_shown):>9}"
            )
        for check in result.calibration:
            lines.append("")
            brier_text = "-" if check.brier is None else f"{check.brier:.4f}"
            lines.append(
                f"calibration of {check.check}{' (as 1 - p)' if check.inverted else ''}: "
                f"n={check.count}, Brier {brier_text}"
            )
            lines.append(f"{'bin':>11} {'count':>5} {'mean p':>7} {'observed':>8}")
            for bin_ in check.bins:
                if not bin_.count:
                    continue
                lines.append(
                    f"{bin_.low:.1f}-{bin_.high:.1f}".rjust(11)
                    + f" {bin_.count:>5} {bin_.mean_predicted:>7.2f} {_percent(bin_.observed_correct):>8}"
                )
        lines.append("")
    return "\n".join(lines)
