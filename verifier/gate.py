"""The gate's runtime: one round's checks against the configured backend, failing open.

The writer builds a `Gate` (sync: settings and the stored thresholds), awaits `check(item)` per question, and gets
plain `GateDecision`s back; recording them is `verifier.services.verdict_record`. The async part never touches
the database.
"""

import asyncio
import time
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Mapping
from types import TracebackType
from typing import Any, Self

from asgiref.sync import sync_to_async

from core import metrics
from verifier import blind, conf, first_check, policy, round_report, usage
from verifier.backends import Backend, CallBudget, GateFailure
from verifier.blind import add_tokens, blind_applicable
from verifier.breaker import Breaker, BreakerGuard, gate_breaker
from verifier.decisions import (
    BLIND_MISSING_PREFIX,
    CHECKER_DISAGREES,
    MODEL_CHANGED,
    ORDER_DEPENDENT,
    ROUND_BUDGET,
    BlindCheck,
    GateDecision,
    GateItem,
    OutcomeName,
    RoundTally,
)
from verifier.pass_marks import round_pass_marks, served_pass_mark
from verifier.registry import backend_for, can, gate_enabled
from verifier.second_opinion import SecondOpinion

# The gate's plain data, importable from here as well (the writer imports the gate's names from one place).
__all__ = [
    "BLIND_MISSING_PREFIX",
    "CHECKER_DISAGREES",
    "MODEL_CHANGED",
    "ORDER_DEPENDENT",
    "ROUND_BUDGET",
    "ROUND_GRACE",
    "BlindCheck",
    "Gate",
    "GateDecision",
    "GateItem",
    "OutcomeName",
    "RoundTally",
    "blind_applicable",
    "gate_check",
]

# The round's deadline falls this much after its last call budget, so a call that started as the writer
# finished ends by its own timeout (reason `timeout`) rather than by the round's.
ROUND_GRACE = 0.1


class Gate:
    """One round's gate: one backend client, one semaphore shared by every call of the round.

    A streaming writer builds it (sync), then awaits `check(item)` per question as each one is written, calls
    `seal()` when it has finished writing, and closes it (`async with gate:` or `await gate.aclose()`), which
    logs the round's line. From the seal on, every check still pending has one call budget (VERIFIER_TIMEOUT)
    left; one still unanswered then passes `unverified`, reason `round_budget`. `unseal()` starts the next
    attempt's writing. The circuit breaker (verifier/breaker.py) guards every call.
    """

    def __init__(
        self,
        *,
        config: conf.GateConfig,
        threshold: float,
        calibrated: bool,
        backend: Backend | None = None,
        source_text: str | None = None,
        thresholds: Mapping[str, float] | None = None,
        breaker: Breaker | None = None,
        second_threshold: tuple[float, bool] | None = None,
        second_backend: Backend | None = None,
    ) -> None:
        self.config = config
        # The pinned model's pass mark: never a lower one. `thresholds` (stored, per model id) gives a served model's
        # own, applied when it is the stricter (threshold_for_served).
        self.threshold = threshold
        self.calibrated = calibrated
        self.thresholds = thresholds
        self.source_text = source_text
        self.backend = backend or backend_for(config)
        self.breaker = breaker
        self._guard = (
            BreakerGuard(breaker, batch=config.concurrency, sealed=self._sealed) if breaker is not None else None
        )
        self.budget = CallBudget(
            concurrency=config.concurrency,
            timeout=config.timeout,
            guard=self._guard,
            past_deadline=self._past_deadline,
            backend=config.backend,
        )
        # The second opinion for the borderline: its own backend, call budget (its deadline) and breaker.
        self.second = config.second_opinion if self.enabled else None
        self.second_threshold = second_threshold or (config.default_threshold, False)
        self.second_opinion: SecondOpinion | None = None
        if self.second is not None:
            self.second_opinion = SecondOpinion(
                self.second,
                threshold=self.second_threshold,
                backend=second_backend,
                guarded=breaker is not None,
                sealed=self._sealed,
                past_deadline=self._past_deadline,
            )
        self.tally = RoundTally()
        self._closed = False
        self._deadline: float | None = None
        self._sealed_after_writing = True
        self._pending: set[asyncio.Timeout] = set()

    @classmethod
    def from_settings(cls, *, threshold: float | None = None, source_text: str | None = None) -> "Gate":
        """Sync: reads settings and, unless `threshold` is given, the stored thresholds from the database."""
        config = conf.gate_config()
        marks = round_pass_marks(config, threshold=threshold)
        return cls(
            config=config,
            threshold=marks.threshold,
            calibrated=marks.calibrated,
            source_text=source_text,
            thresholds=marks.thresholds,
            breaker=gate_breaker(config),
            second_threshold=marks.second,
        )

    def seal(self, *, writing: bool = True) -> None:
        """The writer has finished writing: every pending check, and any begun before `unseal()`, has one
        call budget left. `writing=False`: nothing was being written (a check of existing questions), and a
        question out of budget says so in those words."""
        self._sealed_after_writing = writing
        self._deadline = asyncio.get_running_loop().time() + self.config.timeout + ROUND_GRACE
        for scope in self._pending:
            scope.reschedule(self._deadline)
        if self.second_opinion is not None:
            self.second_opinion.reschedule(self._second_cut())

    def unseal(self) -> None:
        """The writer writes again (its next attempt): checks begun from now on wait for the next seal."""
        self._deadline = None

    def _second_cut(self) -> float:
        """When a second opinion still out is given up, so the first verdict is back before the round's end."""
        assert self._deadline is not None
        return self._deadline - ROUND_GRACE / 2

    def _sealed(self) -> bool:
        return self._deadline is not None

    def _past_deadline(self) -> bool:
        return self._deadline is not None and asyncio.get_running_loop().time() >= self._deadline

    def threshold_for_served(self, served: str) -> tuple[float, bool]:
        """(pass mark, calibrated) for the model the server served (verifier/pass_marks.py)."""
        return served_pass_mark(
            served,
            pinned=self.config.model_id,
            threshold=self.threshold,
            calibrated=self.calibrated,
            thresholds=self.thresholds,
        )

    @property
    def second_backend(self) -> Backend | None:
        return self.second_opinion.backend if self.second_opinion is not None else None

    @property
    def second_budget(self) -> CallBudget | None:
        """The second opinion's call budget (its calls are counted there), None without one."""
        return self.second_opinion.budget if self.second_opinion is not None else None

    @property
    def enabled(self) -> bool:
        return gate_enabled(self.config.backend)

    @property
    def grounded(self) -> bool:
        return self.source_text is not None

    @property
    def blind_enabled(self) -> bool:
        """Whether questions get the blind question. Closed-book only: a grounded round is judged against its
        source, and a question about a private document has no answer a checker could know blind."""
        return self.enabled and self.config.blind and can(self.config.backend, "blind")

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
        if self.second_opinion is not None:
            await self.second_opinion.backend.aclose()
        if self._guard is not None:
            await self._guard.drain()
        if self.second_opinion is not None and self.second_opinion.guard is not None:
            await self.second_opinion.guard.drain()
        if self.tally.checked:
            round_report.log_round(
                config=self.config,
                threshold=self.threshold,
                calibrated=self.calibrated,
                enabled=self.enabled,
                tally=self.tally,
                budget=self.budget,
            )

    def _decision(self, item: GateItem, **fields: Any) -> GateDecision:
        pinned = self.config.model_id if self.enabled else ""
        fields.setdefault("threshold", self.threshold)
        fields.setdefault("calibrated", self.calibrated)
        fields["model_id"] = fields.get("model_id") or pinned
        return GateDecision(key=item.key, backend=self.config.backend, requested_model_id=pinned, **fields)

    async def check(self, item: GateItem) -> GateDecision:
        now = time.monotonic()
        if self.tally.started is None:
            self.tally.started = now
        try:
            async with asyncio.timeout_at(self._deadline) as scope:
                self._pending.add(scope)
                try:
                    decision = await self._check(item)
                finally:
                    self._pending.discard(scope)
        except TimeoutError:
            if not scope.expired():
                raise
            decision = self._out_of_budget(item, now)
        self.tally.add(decision)
        self.tally.finished = time.monotonic()
        metrics.gate_decided(backend=self.config.backend, outcome=decision.outcome, reason=decision.reason)
        usage.usage_counted(decision, self.config.prices)
        return decision

    async def blind_check(self, item: GateItem) -> BlindCheck:
        """Ask the blind question alone (verifier/blind.py), on this round's call budget."""
        return await blind.blind_check(
            item, enabled=self.blind_enabled, config=self.config, backend=self.backend, budget=self.budget
        )

    async def _ask(self, item: GateItem, checks: tuple[str, ...]) -> Any:
        return await first_check.ask(
            item, checks, backend=self.backend, budget=self.budget, source_text=self.source_text
        )

    async def _check(self, item: GateItem) -> GateDecision:
        if not self.enabled:
            return self._decision(
                item, outcome="unchecked", score=None, probabilities={}, reason="gate_off", latency_ms=0
            )
        checks = first_check.checks_for(item, grounded=self.grounded)
        started = time.monotonic()
        blind: BlindCheck | None = None
        if self.blind_enabled and not self.grounded and blind_applicable(item):
            # Two independent calls: the blind one never sees the marked answer or the explanation.
            answer, blind = await asyncio.gather(self._ask(item, checks), self.blind_check(item))
        else:
            answer = await self._ask(item, checks)
        if isinstance(answer, GateFailure):
            return self._fail_open(item, answer, started, blind=blind)
        latency_ms = int((time.monotonic() - started) * 1000)
        probabilities = dict(answer.probabilities)
        details: dict[str, Any] = {**answer.details, "calls": answer.calls, "checks": list(checks)}
        served = round_report.served_model(answer.details, blind, config=self.config)
        threshold, calibrated = self.threshold_for_served(served)
        input_tokens, output_tokens = answer.input_tokens, answer.output_tokens
        has_blind = blind is not None and blind.reading is not None
        if blind is not None:
            details["calls"] += blind.calls
            details["checks"].append(policy.BLIND)
            details.update(blind.as_details(item.options))
            input_tokens = add_tokens(input_tokens, blind.input_tokens)
            output_tokens = add_tokens(output_tokens, blind.output_tokens)
            if blind.reading is not None:
                probabilities[policy.BLIND] = round(blind.reading.marked_probability, 6)
        judgement = first_check.judgement(
            probabilities, checks, config=self.config, grounded=self.grounded, threshold=threshold, has_blind=has_blind
        )
        first_judgement = judgement
        if (
            self.second_opinion is not None
            and not self.grounded
            and policy.borderline(score=judgement.score, threshold=threshold, band=self.config.second_opinion_band)
        ):
            cut = None if self._deadline is None else self._second_cut()
            details["second_opinion"], judgement = await self.second_opinion.ask(item, checks, judgement, cut=cut)
        second_model = self.second.model_id if self.second is not None else ""
        details[usage.USAGE] = {
            **usage.check_usage(item, model=self.config.model_id, answer=answer, checks=checks),
            **usage.blind_usage(item, model=self.config.model_id, blind=blind),
            **usage.second_usage(item, model=second_model, record=details.get("second_opinion")),
        }
        reason, message = round_report.verdict_reason(
            item, judgement, blind, config=self.config, served=served, first=first_judgement, details=details
        )
        return self._decision(
            item,
            outcome=str(judgement.outcome),
            # The first checker's score and probabilities: what its threshold and the sweep go by.
            score=round(first_judgement.score, 6),
            probabilities=probabilities,
            reason=reason,
            message=message,
            latency_ms=latency_ms,
            model_id=served,
            threshold=threshold,
            calibrated=calibrated,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            details=details,
        )

    def _out_of_budget(self, item: GateItem, started: float) -> GateDecision:
        since = "after writing ended" if self._sealed_after_writing else "from the start of the check"
        return self._fail_open(
            item,
            GateFailure(ROUND_BUDGET, f"no answer within the round's budget ({self.config.timeout:g} s {since})"),
            started,
        )

    def _fail_open(
        self, item: GateItem, failure: GateFailure, started: float, *, blind: BlindCheck | None = None
    ) -> GateDecision:
        latency_ms = int((time.monotonic() - started) * 1000)
        round_report.log_fail_open(item, failure, config=self.config, latency_ms=latency_ms)
        return self._decision(
            item,
            outcome="unverified",
            score=None,
            probabilities={},
            reason=failure.reason,
            message=failure.message[:500],
            latency_ms=latency_ms,
            # A blind answer alone does not judge a question, but the reviewer still sees what it said.
            details=blind.as_details(item.options) if blind is not None and blind.reading is not None else {},
        )

    async def check_all(self, items: Iterable[GateItem]) -> list[GateDecision]:
        """Every item at once; the budget keeps calls in flight at the limit. Order follows `items`.

        Nothing more is being written, so the round is sealed at once: it takes at most one call budget."""
        self.seal(writing=False)
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
            self.seal()
            while yielded < len(tasks):
                yielded += 1
                yield await done.get()
        finally:
            for task in tasks:
                task.cancel()


async def gate_check(
    *, items: list[GateItem], source_text: str | None = None, gate: Gate | None = None
) -> list[GateDecision]:
    """Check a whole round. Decisions come back in the order of `items`; nothing here raises for a backend's fault.

    Pass a `gate` to share its semaphore with other calls (it is then left open for the caller to close).
    """
    if gate is not None:
        return await gate.check_all(items)
    round_gate = await sync_to_async(Gate.from_settings)(source_text=source_text)
    async with round_gate:
        return await round_gate.check_all(items)
