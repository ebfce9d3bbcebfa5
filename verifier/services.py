"""The gate's public face: the writer and the lobby call these.

Sync parts (settings, the threshold lookup, recording verdicts) run before and after the async part;
the async part never touches the database.
"""

import asyncio
import logging
import time
from collections.abc import AsyncIterable, AsyncIterator, Iterable
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Literal, Self

from asgiref.sync import sync_to_async
from django.db import transaction

from quiz.exceptions import InvalidQuestion
from quiz.models import Provenance, Question, RoundQuestion
from quiz.services import question_create
from quiz.validation import clean_question
from verifier import conf, policy
from verifier.backends import Backend, CallBudget, GateFailure, backend_for
from verifier.models import Flag, FlagKind, Review, ReviewLabel, Threshold, Verdict, VerdictOutcome
from verifier.prompts import question_document
from verifier.selectors import IMPORTED, labelled_scores, threshold_for
from verifier.sweep import score_from_probabilities

logger = logging.getLogger("verifier")

OutcomeName = Literal["passed", "dropped", "unverified", "unchecked"]


@dataclass(frozen=True)
class GateItem:
    key: str
    text: str
    options: tuple[str, ...]
    correct_index: int
    explanation: str = ""


@dataclass(frozen=True)
class GateDecision:
    key: str
    outcome: OutcomeName
    score: float | None
    threshold: float
    probabilities: dict[str, float]
    reason: str
    latency_ms: int
    backend: str
    model_id: str
    calibrated: bool = False
    message: str = ""
    input_tokens: int | None = None
    output_tokens: int | None = None
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def playable(self) -> bool:
        # Failing open: only a question the checker positively scored below the bar is held back.
        return self.outcome != policy.Outcome.DROPPED


@dataclass
class RoundTally:
    checked: int = 0
    passed: int = 0
    dropped: int = 0
    unverified: int = 0
    unchecked: int = 0
    started: float | None = None
    finished: float | None = None

    def add(self, decision: GateDecision) -> None:
        self.checked += 1
        setattr(self, decision.outcome, getattr(self, decision.outcome) + 1)

    @property
    def wall_ms(self) -> int:
        if self.started is None or self.finished is None:
            return 0
        return int((self.finished - self.started) * 1000)


class Gate:
    """One round's gate: one backend client, one semaphore shared by every call of the round.

    A streaming writer builds it (sync), then awaits `check(item)` per question as each one is written,
    and closes it (`async with gate:` or `await gate.aclose()`), which logs the round's line.
    """

    def __init__(
        self,
        *,
        config: conf.GateConfig,
        threshold: float,
        calibrated: bool,
        backend: Backend | None = None,
        source_text: str | None = None,
    ) -> None:
        self.config = config
        self.threshold = threshold
        self.calibrated = calibrated
        self.source_text = source_text
        self.backend = backend or backend_for(config)
        self.budget = CallBudget(concurrency=config.concurrency, timeout=config.timeout)
        self.tally = RoundTally()
        self._closed = False

    @classmethod
    def from_settings(cls, *, threshold: float | None = None, source_text: str | None = None) -> "Gate":
        """Sync: reads settings and, unless `threshold` is given, the stored threshold from the database."""
        config = conf.gate_config()
        if threshold is not None:
            value, calibrated = threshold, False
        elif config.backend in ("systemone", "llm"):
            value, calibrated = threshold_for(backend=config.backend, model_id=config.model_id)
        else:
            value, calibrated = config.default_threshold, False
        return cls(config=config, threshold=value, calibrated=calibrated, source_text=source_text)

    @property
    def enabled(self) -> bool:
        return self.config.backend in ("systemone", "llm")

    @property
    def grounded(self) -> bool:
        return self.source_text is not None

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        await self.backend.aclose()
        if self.tally.checked:
            self._log_round()

    def _decision(self, item: GateItem, **fields: Any) -> GateDecision:
        return GateDecision(
            key=item.key,
            threshold=self.threshold,
            calibrated=self.calibrated,
            backend=self.config.backend,
            model_id=self.config.model_id if self.enabled else "",
            **fields,
        )

    def _checks_for(self, item: GateItem) -> tuple[str, ...]:
        if self.grounded:
            return policy.grounded_checks()
        return policy.closed_book_checks(has_explanation=bool(item.explanation.strip()))

    async def check(self, item: GateItem) -> GateDecision:
        now = time.monotonic()
        if self.tally.started is None:
            self.tally.started = now
        decision = await self._check(item)
        self.tally.add(decision)
        self.tally.finished = time.monotonic()
        return decision

    async def _check(self, item: GateItem) -> GateDecision:
        if not self.enabled:
            return self._decision(
                item, outcome="unchecked", score=None, probabilities={}, reason="gate_off", latency_ms=0
            )
        checks = self._checks_for(item)
        document = question_document(
            text=item.text,
            options=item.options,
            correct_index=item.correct_index,
            explanation=item.explanation,
            source_text=self.source_text,
        )
        started = time.monotonic()
        try:
            answer = await self.backend.ask(document=document, checks=checks, budget=self.budget)
        except GateFailure as failure:
            return self._fail_open(item, failure, started)
        except Exception as exc:  # noqa: BLE001 - any surprise from a backend must fail open, not empty a round
            logger.warning("gate unexpected error for %s", item.key, exc_info=True)
            return self._fail_open(item, GateFailure("unexpected_error", f"{type(exc).__name__}: {exc}"), started)
        latency_ms = int((time.monotonic() - started) * 1000)
        if self.grounded:
            judgement = policy.grounded_judgement(
                probabilities=answer.probabilities, bounds=self.config.grounded_bounds
            )
        else:
            judgement = policy.closed_book_judgement(
                probabilities=answer.probabilities,
                has_explanation=policy.EXPLANATION_TRUE in checks,
                threshold=self.threshold,
            )
        return self._decision(
            item,
            outcome=str(judgement.outcome),
            score=round(judgement.score, 6),
            probabilities=answer.probabilities,
            reason="below_threshold" if judgement.outcome == policy.Outcome.DROPPED else "",
            message=judgement.reason,
            latency_ms=latency_ms,
            input_tokens=answer.input_tokens,
            output_tokens=answer.output_tokens,
            details={**answer.details, "calls": answer.calls, "checks": list(checks)},
        )

    def _fail_open(self, item: GateItem, failure: GateFailure, started: float) -> GateDecision:
        latency_ms = int((time.monotonic() - started) * 1000)
        logger.warning(
            "gate fail-open: %s passes unverified (reason=%s backend=%s model=%s latency_ms=%d) %s",
            item.key,
            failure.reason,
            self.config.backend,
            self.config.model_id,
            latency_ms,
            failure.message,
        )
        return self._decision(
            item,
            outcome="unverified",
            score=None,
            probabilities={},
            reason=failure.reason,
            message=failure.message[:500],
            latency_ms=latency_ms,
        )

    async def check_all(self, items: Iterable[GateItem]) -> list[GateDecision]:
        """Every item at once; the budget keeps calls in flight at the limit. Order follows `items`."""
        return list(await asyncio.gather(*(self.check(item) for item in items)))

    async def check_stream(self, items: AsyncIterable[GateItem]) -> AsyncIterator[GateDecision]:
        """Check questions as a writer yields them; decisions come out as they finish."""
        done: asyncio.Queue[GateDecision] = asyncio.Queue()
        tasks: list[asyncio.Task[None]] = []
        yielded = 0

        async def run(item: GateItem) -> None:
            await done.put(await self.check(item))

        try:
            async for item in items:
                tasks.append(asyncio.create_task(run(item)))
                while not done.empty():
                    yielded += 1
                    yield done.get_nowait()
            while yielded < len(tasks):
                yielded += 1
                yield await done.get()
        finally:
            for task in tasks:
                task.cancel()

    def _log_round(self) -> None:
        tally = self.tally
        logger.info(
            "gate round: backend=%s model=%s threshold=%.2f%s checked=%d passed=%d dropped=%d unverified=%d "
            "unchecked=%d calls=%d max_in_flight=%d wall_ms=%d",
            self.config.backend,
            self.config.model_id or "-",
            self.threshold,
            "" if self.calibrated or not self.enabled else " (uncalibrated)",
            tally.checked,
            tally.passed,
            tally.dropped,
            tally.unverified,
            tally.unchecked,
            self.budget.calls,
            self.budget.max_in_flight,
            tally.wall_ms,
        )


async def gate_check(
    *, items: list[GateItem], source_text: str | None = None, gate: Gate | None = None
) -> list[GateDecision]:
    """Check a whole round. Decisions come back in the order of `items`; nothing here raises for a backend's fault.

    Pass a `gate` to share its semaphore with other calls (it is then left open for the caller to close).
    """
    if gate is not None:
        return await gate.check_all(items)
    config = conf.gate_config()
    if config.backend in ("systemone", "llm"):
        value, calibrated = await sync_to_async(threshold_for)(backend=config.backend, model_id=config.model_id)
    else:
        value, calibrated = config.default_threshold, False
    async with Gate(config=config, threshold=value, calibrated=calibrated, source_text=source_text) as round_gate:
        return await round_gate.check_all(items)


def verdict_record(*, question_id: int, decision: GateDecision) -> Verdict:
    return Verdict.objects.create(
        question_id=question_id,
        backend=decision.backend,
        model_id=decision.model_id,
        probabilities=decision.probabilities,
        score=decision.score,
        threshold=decision.threshold,
        calibrated=decision.calibrated,
        outcome=decision.outcome,
        reason=decision.reason,
        message=decision.message[:500],
        latency_ms=decision.latency_ms,
        input_tokens=decision.input_tokens,
        output_tokens=decision.output_tokens,
        details=decision.details,
    )


def verdicts_record(*, decisions: dict[int, GateDecision]) -> list[Verdict]:
    """Many at once, keyed by question id (e.g. after a round is saved)."""
    return [verdict_record(question_id=question_id, decision=decision) for question_id, decision in decisions.items()]


# -- review and calibration --------------------------------------------------------------------------------


def flag_record(*, question_id: int, kind: str, room_code: str = "", detail: dict[str, Any] | None = None) -> Flag:
    """The game tells the gate's review side that a question may be wrong (a report, the crowd)."""
    if kind not in FlagKind.values:
        raise ValueError(f"unknown flag kind {kind!r}")
    return Flag.objects.create(question_id=question_id, kind=kind, room_code=room_code[:8], detail=detail or {})


def review_label(*, question: Question, label: str, reviewer: Any = None, note: str = "") -> Review:
    if label not in ReviewLabel.values:
        raise ValueError(f"unknown label {label!r}")
    return Review.objects.create(question=question, label=label, note=" ".join(note.split())[:500], reviewer=reviewer)


def reviews_label(*, questions: Iterable[Question], label: str, reviewer: Any = None, note: str = "") -> list[Review]:
    with transaction.atomic():
        return [review_label(question=question, label=label, reviewer=reviewer, note=note) for question in questions]


@dataclass(frozen=True)
class FixedQuestion:
    original: Question
    fixed: Question
    review: Review
    rounds_updated: int


@transaction.atomic
def question_fix(
    *, question: Question, raw: dict[str, Any], reviewer: Any = None, note: str = "", use_in_rounds: bool = False
) -> FixedQuestion:
    """Approve a corrected copy of `question`; the original stays as it was, labelled defective.

    `raw` goes through the one validation every question passes (raises quiz.exceptions.InvalidQuestion).
    With `use_in_rounds`, rounds that hold the original get the copy in its place for their next games.
    """
    data = clean_question(raw)
    fixed = question_create(data=data, provenance=question.provenance, pack=question.pack, model_id=question.model_id)
    review = Review.objects.create(
        question=question,
        label=ReviewLabel.DEFECTIVE,
        note=(" ".join(note.split()) or f"fixed as question {fixed.pk}")[:500],
        reviewer=reviewer,
        fixed_as=fixed,
    )
    Review.objects.create(
        question=fixed, label=ReviewLabel.CORRECT, note=f"fixed copy of question {question.pk}", reviewer=reviewer
    )
    rounds_updated = 0
    if use_in_rounds:
        rounds_updated = RoundQuestion.objects.filter(question=question).update(question=fixed)
    return FixedQuestion(original=question, fixed=fixed, review=review, rounds_updated=rounds_updated)


def threshold_set(*, backend: str, model_id: str, value: float, user: Any = None, note: str = "") -> Threshold:
    value = float(value)
    if not 0.0 <= value <= 1.0:
        raise ValueError("a threshold is between 0 and 1")
    if not backend or not model_id:
        raise ValueError("a threshold belongs to one backend and one model id")
    threshold, _ = Threshold.objects.update_or_create(
        backend=backend, model_id=model_id, defaults={"value": value, "note": note[:300], "updated_by": user}
    )
    return threshold


@dataclass(frozen=True)
class ImportResult:
    created: int
    skipped: int


def labelled_set_import(*, items: list[dict[str, Any]], note: str = "imported labelled set") -> ImportResult:
    """Load a graded set: a list of {question, options, correct_index, explanation, backend, model_id,
    probabilities: {check: p}, label, [score]}. Each becomes a question, a verdict and a review.

    A question already present with the same text, options, marked option and model id is skipped, so a set
    can be imported twice. Raises ValueError naming the first bad item; nothing is stored then.
    """
    if not isinstance(items, list):
        raise ValueError("a labelled set is a JSON list of objects")
    created = skipped = 0
    with transaction.atomic():
        for number, raw in enumerate(items, start=1):
            try:
                parsed = _parse_labelled(raw)
            except (InvalidQuestion, ValueError, TypeError, KeyError) as error:
                raise ValueError(f"item {number}: {error}") from None
            data, backend, model_id, probabilities, score, label = parsed
            duplicate = Question.objects.filter(
                text=data.text, options=list(data.options), correct_index=data.correct_index, model_id=model_id
            ).exists()
            if duplicate:
                skipped += 1
                continue
            question = question_create(data=data, provenance=Provenance.MODEL, model_id=model_id)
            Verdict.objects.create(
                question=question,
                backend=backend,
                model_id=model_id,
                probabilities=probabilities,
                score=score,
                threshold=conf.default_threshold(),
                outcome=VerdictOutcome.PASSED if score >= conf.default_threshold() else VerdictOutcome.DROPPED,
                reason=IMPORTED,
                details={"imported": True},
            )
            Review.objects.create(question=question, label=label, note=note[:500])
            created += 1
    return ImportResult(created=created, skipped=skipped)


def _parse_labelled(raw: Any) -> tuple[Any, str, str, dict[str, float], float, str]:
    if not isinstance(raw, dict):
        raise ValueError("each item must be an object")
    data = clean_question(
        {
            "text": raw.get("question"),
            "options": raw.get("options"),
            "correct_index": raw.get("correct_index"),
            "explanation": raw.get("explanation", ""),
        }
    )
    backend = str(raw.get("backend") or "").strip()
    model_id = str(raw.get("model_id") or "").strip()
    if not backend or not model_id:
        raise ValueError("backend and model_id are required")
    probabilities = raw.get("probabilities")
    if not isinstance(probabilities, dict) or not probabilities:
        raise ValueError("probabilities must be an object of check -> probability")
    if not all(isinstance(check, str) and policy.is_probability(p) for check, p in probabilities.items()):
        raise ValueError("every probability must be a number from 0 to 1")
    probabilities = {check: float(p) for check, p in probabilities.items()}
    score = raw.get("score")
    if score is None:
        score = score_from_probabilities(probabilities)
    if not policy.is_probability(score):
        raise ValueError("score must be a number from 0 to 1")
    label = raw.get("label")
    if label not in ReviewLabel.values:
        raise ValueError(f"label must be one of {', '.join(ReviewLabel.values)}")
    return data, backend, model_id, probabilities, round(float(score), 6), label


def labelled_set_export() -> list[dict[str, Any]]:
    """Every labelled question with a recorded score, in the import format (to grade offline and share)."""
    items = labelled_scores()
    questions = Question.objects.in_bulk([item.question_id for item in items])
    return [
        {
            "question": questions[item.question_id].text,
            "options": list(questions[item.question_id].options),
            "correct_index": questions[item.question_id].correct_index,
            "explanation": questions[item.question_id].explanation,
            "backend": item.backend,
            "model_id": item.model_id,
            "probabilities": dict(item.probabilities),
            "score": item.score,
            "label": item.label,
        }
        for item in sorted(items, key=lambda item: (item.backend, item.model_id, item.question_id))
    ]


__all__ = [
    "Gate",
    "GateDecision",
    "GateItem",
    "flag_record",
    "gate_check",
    "labelled_set_export",
    "labelled_set_import",
    "question_fix",
    "review_label",
    "reviews_label",
    "threshold_for",
    "threshold_set",
    "verdict_record",
    "verdicts_record",
]
