"""Running a checker evaluation as play runs the gate (rounds of `ROUND_SIZE`, one gate and call budget
each), and storing what it found: the answered results as a labelled set, the run for the admin's page."""

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterable

from asgiref.sync import sync_to_async

from review.checker_eval.figures import EvalReport, EvalResult, eval_report, format_text
from review.checker_eval.items import EvalItem
from review.labelled_set import labelled_set_import
from review.models import CheckerEvalRun
from verifier import conf
from verifier.gate import Gate, GateDecision, GateItem
from verifier.usage import decision_usages

# Questions per round: a round of play is about this long, and each round gets one call budget after its last
# question is handed over (as a round does when its writer finishes).
ROUND_SIZE = 10


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
        prices=gate_config.prices,
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
        usages=tuple(decision_usages(decision)),
        blind=decision.details.get("blind") if isinstance(decision.details.get("blind"), dict) else None,
        second=second if isinstance(second, dict) else None,
    )


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
