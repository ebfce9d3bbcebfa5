"""Know your checker: run the configured gate (any backend, second opinion included) over questions whose answer is
known, and say how well it tells good from bad, in figures and in plain words.

The default set is the sample packs (quiz/pack_data/): each question as it is (good), and two bad copies of it:
the marked option moved to the next option, and the explanation made false (the right option's name swapped for a
wrong one). An operator's own labelled set (review/labelled_set.py's format: JSON items, or the CSV columns, with
`label`; probabilities and backend are not needed) can be given instead.

The checks run as play runs them: rounds of `ROUND_SIZE` questions through `Gate.from_settings()`, each round with
the configured call budget (VERIFIER_TIMEOUT), concurrency (VERIFIER_CONCURRENCY) and circuit breaker. The figures
are computed by `eval_report` (pure) from the per-question results.
"""

import asyncio
import json
import math
import re
import statistics
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from asgiref.sync import sync_to_async

from core.spreadsheet import csv_columns, csv_reader, csv_rows
from quiz.exceptions import InvalidQuestion
from quiz.packs import PACK_DIRECTORY, pack_file_read
from quiz.prompts import LANGUAGES
from quiz.validation import clean_question
from review.labelled_set import labelled_item_from_row, labelled_set_import
from review.models import CheckerEvalRun
from review.sweep import DEFECTIVE, GOOD, GRID, NEGATIVE_CHECKS, LabelledScore, SweepRow, sweep_row, widest_safe
from verifier import causes, conf, policy
from verifier.breaker import UNAVAILABLE
from verifier.gate import Gate, GateDecision, GateItem

# Questions per round: a round of play is about this long, and each round gets one call budget after its last
# question is handed over (as a round does when its writer finishes).
ROUND_SIZE = 10
SCORE = "score"  # the gate's score, next to the checks' own probabilities
# AUROC below this: the checker does not tell good from bad; below STRONG: only weakly.
SEPARATES = 0.6
STRONG = 0.8
# Kinds of labelled item.
AS_WRITTEN, MOVED, FALSE_EXPLANATION, GIVEN = "as_written", "moved", "false_explanation", "given"
# Failure reasons that mean "too slow" rather than "not there".
SLOW_REASONS = causes.TOO_SLOW_REASONS
UNREACHABLE_REASONS = causes.UNREACHABLE_REASONS


@dataclass(frozen=True)
class EvalItem:
    text: str
    options: tuple[str, ...]
    correct_index: int
    explanation: str
    label: str  # "correct" or "defective"
    kind: str = GIVEN
    language: str = ""  # by name ("German"), as the gate tells the checker


@dataclass(frozen=True)
class EvalResult:
    item: EvalItem
    outcome: str
    score: float | None
    probabilities: dict[str, float]
    reason: str
    message: str
    seconds: float
    calls: int | None
    backend: str
    model_id: str

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

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def score(self) -> CheckFigures | None:
        return next((check for check in self.checks if check.check == SCORE), None)


# -- the labelled sets ---------------------------------------------------------------------------------------


def pack_items(*, directory: Path | None = None) -> list[EvalItem]:
    """Every sample pack question as written, and its two bad copies (marked option moved; explanation false)."""
    items: list[EvalItem] = []
    for path in sorted((directory or PACK_DIRECTORY).glob("*.json")):
        pack = pack_file_read(path)
        language = LANGUAGES.get(pack.language, "")
        for question in pack.questions:
            base = EvalItem(
                text=question.text,
                options=tuple(question.options),
                correct_index=question.correct_index,
                explanation=question.explanation,
                label=GOOD,
                kind=AS_WRITTEN,
                language=language,
            )
            items.extend(bad_copies(base))
    return items


def bad_copies(item: EvalItem) -> list[EvalItem]:
    """The item itself, then its copy with the marked option moved one place on, then (when it has an explanation)
    its copy with the explanation made false."""
    moved = (item.correct_index + 1) % len(item.options)
    copies = [
        item,
        EvalItem(
            text=item.text,
            options=item.options,
            correct_index=moved,
            explanation=item.explanation,
            label=DEFECTIVE,
            kind=MOVED,
            language=item.language,
        ),
    ]
    if item.explanation.strip():
        copies.append(
            EvalItem(
                text=item.text,
                options=item.options,
                correct_index=item.correct_index,
                explanation=falsified_explanation(item.explanation, item.options, item.correct_index),
                label=DEFECTIVE,
                kind=FALSE_EXPLANATION,
                language=item.language,
            )
        )
    return copies


def falsified_explanation(explanation: str, options: tuple[str, ...], correct_index: int) -> str:
    """The explanation with the right option's name replaced by a wrong option's; when it does not name the right
    option, a false sentence in front: it then says a wrong option is the answer."""
    right = options[correct_index]
    wrong = options[(correct_index + 1) % len(options)]
    pattern = re.compile(re.escape(right), re.IGNORECASE)
    if pattern.search(explanation):
        return pattern.sub(wrong, explanation)
    return f"{wrong} is the answer, not {right}. {explanation}"


def items_from_file(path: Path) -> list[EvalItem]:
    """An operator's labelled set: JSON (a list, or {"items": [...]}) or CSV, in the labelled-set format; only the
    question, its options, the marked option, the explanation and the label are read. Raises ValueError naming
    the first bad item (JSON) or line (CSV)."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as error:
        raise ValueError(f"cannot read {path}: {error}") from None
    if path.suffix.lower() == ".csv":
        return _items_from_csv(text)
    try:
        data = json.loads(text)
    except ValueError as error:
        raise ValueError(f"{path.name} is not valid JSON: {error}") from None
    if isinstance(data, dict) and "items" in data:
        data = data["items"]
    if not isinstance(data, list):
        raise ValueError("a labelled set is a JSON list of objects")
    items = []
    for number, raw in enumerate(data, start=1):
        try:
            items.append(_item(raw))
        except (InvalidQuestion, ValueError, TypeError, KeyError) as error:
            raise ValueError(f"item {number}: {error}") from None
    if not items:
        raise ValueError("the labelled set is empty")
    return items


def _items_from_csv(text: str) -> list[EvalItem]:
    reader = csv_reader(text)
    columns = csv_columns(reader)
    if columns is None:
        raise ValueError("line 1: the file is empty; the first line must be the header")
    missing = [name for name in ("question", "option_a", "option_b", "correct", "label") if name not in columns]
    if missing:
        raise ValueError(f"line 1: the header is missing the column(s) {', '.join(missing)}")
    items = []
    for line, cells in csv_rows(reader):
        try:
            items.append(_item(labelled_item_from_row(columns, cells)))
        except (InvalidQuestion, ValueError, TypeError, KeyError) as error:
            raise ValueError(f"line {line}: {error}") from None
    if not items:
        raise ValueError("the labelled set has no rows")
    return items


def _item(raw: Any) -> EvalItem:
    if not isinstance(raw, Mapping):
        raise ValueError("each item must be an object")
    data = clean_question(
        {
            "text": raw.get("question", raw.get("text")),
            "options": raw.get("options"),
            "correct_index": raw.get("correct_index"),
            "explanation": raw.get("explanation", ""),
        }
    )
    label = str(raw.get("label") or "").strip().lower()
    if label not in (GOOD, DEFECTIVE):
        raise ValueError(f"label must be {GOOD} or {DEFECTIVE}, not {raw.get('label')!r}")
    return EvalItem(
        text=data.text,
        options=tuple(data.options),
        correct_index=data.correct_index,
        explanation=data.explanation,
        label=label,
        language=str(raw.get("language") or ""),
    )


# -- running --------------------------------------------------------------------------------------------------

Progress = Callable[[int, int], None]


def evaluate(
    items: list[EvalItem], *, progress: Progress | None = None, round_size: int = ROUND_SIZE
) -> tuple[EvalReport, list[EvalResult]]:
    """Run the configured gate over `items` (sync entry point): the report on it, and the per-question results."""
    started = time.monotonic()
    calls: list[int] = []
    results = asyncio.run(evaluate_async(items, progress=progress, round_size=round_size, calls=calls))
    gate_config = conf.gate_config()
    report = eval_report(
        results,
        backend=gate_config.backend,
        model_id=gate_config.model_id,
        timeout=gate_config.timeout,
        concurrency=gate_config.concurrency,
        wall_seconds=time.monotonic() - started,
        calls_total=sum(calls),
    )
    return report, results


async def evaluate_async(
    items: list[EvalItem],
    *,
    progress: Progress | None = None,
    round_size: int = ROUND_SIZE,
    calls: list[int] | None = None,
) -> list[EvalResult]:
    """Every item checked, in rounds of `round_size`, each through its own gate (one call budget per round);
    `calls` gets each round's count of calls that went out."""
    results: list[EvalResult] = []
    done = 0
    for start in range(0, len(items), max(1, round_size)):
        batch = items[start : start + round_size]
        gate = await sync_to_async(Gate.from_settings)()
        async with gate:
            gate.seal(writing=False)
            decisions: dict[int, GateDecision] = {}
            checks = [_numbered(index, gate.check(_gate_item(start + index, item))) for index, item in enumerate(batch)]
            for finished in asyncio.as_completed(checks):
                index, decision = await finished
                decisions[index] = decision
                done += 1
                if progress is not None:
                    progress(done, len(items))
        if calls is not None:
            calls.append(gate.budget.calls + (gate.second_budget.calls if gate.second_budget is not None else 0))
        results.extend(_result(item, decisions[index]) for index, item in enumerate(batch))
    return results


async def _numbered(index: int, check: Awaitable[GateDecision]) -> tuple[int, GateDecision]:
    return index, await check


def _gate_item(number: int, item: EvalItem) -> GateItem:
    return GateItem(
        key=f"eval{number}",
        text=item.text,
        options=item.options,
        correct_index=item.correct_index,
        explanation=item.explanation,
        language=item.language,
    )


def _result(item: EvalItem, decision: GateDecision) -> EvalResult:
    calls = decision.details.get("calls")
    second = decision.details.get("second_opinion")
    if isinstance(calls, int) and isinstance(second, dict) and second.get("outcome") not in ("skipped", None):
        calls += 1
    return EvalResult(
        item=item,
        outcome=str(decision.outcome),
        score=decision.score,
        probabilities=dict(decision.probabilities),
        reason=decision.reason,
        message=decision.message,
        seconds=decision.latency_ms / 1000,
        calls=calls if isinstance(calls, int) else None,
        backend=decision.backend,
        model_id=decision.model_id,
    )


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
    )
    verdict, advice = verdict_for(report)
    return EvalReport(**{**asdict(report), "checks": figures, "verdict": verdict, "advice": advice})


def verdict_for(report: EvalReport) -> tuple[str, list[str]]:
    """The plain-words verdict, and what to change (settings named)."""
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
    lines.append(f"VERDICT: {report.verdict}")
    lines.extend(f"NOTE: {note}" for note in report.advice)
    return "\n".join(lines) + "\n"


def _share(part: int, whole: int) -> str:
    return f"{part / whole * 100:.0f}%" if whole else "-"


# -- storing ----------------------------------------------------------------------------------------------------


def labels_store(results: Iterable[EvalResult], *, note: str = "checker_eval") -> tuple[int, int]:
    """The answered results as a labelled set for the sweep (review/labelled_set.py): (created, skipped)."""
    items = [
        {
            "question": result.item.text,
            "options": list(result.item.options),
            "correct_index": result.item.correct_index,
            "explanation": result.item.explanation,
            "backend": result.backend,
            "model_id": result.model_id,
            "probabilities": result.probabilities,
            "score": result.score,
            "label": result.item.label,
        }
        for result in results
        if result.answered and result.probabilities and result.model_id
    ]
    if not items:
        return 0, 0
    imported = labelled_set_import(items=items, note=note)
    return imported.created, imported.skipped


def run_store(report: EvalReport, *, source: str) -> CheckerEvalRun:
    """The run on record, for the admin's page of the last run."""
    score = report.score
    return CheckerEvalRun.objects.create(
        backend=report.backend[:20],
        model_id=report.model_id[:200],
        questions=report.questions,
        auroc=score.auroc if score is not None else None,
        verdict=report.verdict[:500],
        source=source[:300],
        report=report.as_dict(),
        text=format_text(report),
    )
