"""The gate's runtime: one round's checks against the configured backend, failing open.

The writer builds a `Gate` (sync: settings and the stored thresholds), awaits `check(item)` per question, and gets
plain `GateDecision`s back; recording them is `verifier.services.verdict_record`. The async part never touches
the database.

One question's path goes down two steps, each one module, in order: the checker asked
(verifier/question/asking.py: the first check and the blind question side by side), then the verdict on its
answers (verifier/question/verdict.py: the pass mark of the model that served, the judgement, a second opinion on
the borderline, the reason, the cost, the decision). The gate holds the round: its call budget, deadline,
breaker, tally and log line.
"""

import asyncio
import logging
import time
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Mapping
from types import TracebackType
from typing import Self

from asgiref.sync import sync_to_async

from core import metrics
from verifier import conf
from verifier.backends import Backend, CallBudget, GateFailure
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
from verifier.pass_marks import round_pass_marks
from verifier.question import asking, verdict
from verifier.question.asking import blind_applicable
from verifier.question.second_opinion import SecondOpinion
from verifier.registry import backend_for, can, gate_enabled

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

logger = logging.getLogger("verifier")

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
        # Asked once per round: every question of it takes the same path.
        self.enabled = gate_enabled(config.backend)
        self.blind_enabled = self.enabled and config.blind and can(config.backend, "blind")
        self.marks = verdict.RoundMarks(
            config=config,
            threshold=threshold,
            calibrated=calibrated,
            thresholds=thresholds,
            enabled=self.enabled,
            grounded=source_text is not None,
        )
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
        """(pass mark, calibrated) for the model the server served (verifier.policy.served_pass_mark)."""
        return self.marks.for_served(served)

    @property
    def second_backend(self) -> Backend | None:
        return self.second_opinion.backend if self.second_opinion is not None else None

    @property
    def second_budget(self) -> CallBudget | None:
        """The second opinion's call budget (its calls are counted there), None without one."""
        return self.second_opinion.budget if self.second_opinion is not None else None

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
        if self.second_opinion is not None:
            await self.second_opinion.backend.aclose()
        if self._guard is not None:
            await self._guard.drain()
        if self.second_opinion is not None and self.second_opinion.guard is not None:
            await self.second_opinion.guard.drain()
        if self.tally.checked:
            log_round(self.marks, tally=self.tally, budget=self.budget)

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
        return decision

    async def blind_check(self, item: GateItem) -> BlindCheck:
        """Ask the blind question alone (verifier/question/asking.py), on this round's call budget."""
        return await asking.blind_check(
            item, enabled=self.blind_enabled, config=self.config, backend=self.backend, budget=self.budget
        )

    async def _check(self, item: GateItem) -> GateDecision:
        """One question down its path: the checker asked, then the verdict on what it said."""
        if not self.enabled:
            return verdict.unchecked(item, self.marks)
        asked = await asking.ask_checker(
            item,
            config=self.config,
            backend=self.backend,
            budget=self.budget,
            source_text=self.source_text,
            blind_enabled=self.blind_enabled,
        )
        cut = None if self._deadline is None else self._second_cut()
        return await verdict.judged(item, asked, self.marks, second=self.second_opinion, cut=cut)

    def _out_of_budget(self, item: GateItem, started: float) -> GateDecision:
        since = "after writing ended" if self._sealed_after_writing else "from the start of the check"
        failure = GateFailure(ROUND_BUDGET, f"no answer within the round's budget ({self.config.timeout:g} s {since})")
        return verdict.fail_open(item, failure, started, self.marks)

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


def log_round(marks: verdict.RoundMarks, *, tally: RoundTally, budget: CallBudget) -> None:
    """The round's one line: its outcomes, reasons and calls."""
    logger.info(
        "gate round: backend=%s model=%s threshold=%.2f%s checked=%d passed=%d dropped=%d unverified=%d "
        "unchecked=%d blind_missing=%d blind_order_dependent=%d second_opinion=%d second_opinion_changed=%d "
        "checker_disagrees=%d round_budget=%d "
        "checker_unavailable=%d model_changed=%d calls=%d "
        "refused=%d max_in_flight=%d wall_ms=%d",
        marks.config.backend,
        marks.config.model_id or "-",
        marks.threshold,
        "" if marks.calibrated or not marks.enabled else " (uncalibrated)",
        tally.checked,
        tally.passed,
        tally.dropped,
        tally.unverified,
        tally.unchecked,
        tally.blind_missing,
        tally.blind_order_dependent,
        tally.second_opinion,
        tally.second_opinion_changed,
        tally.checker_disagrees,
        tally.round_budget,
        tally.checker_unavailable,
        tally.model_changed,
        budget.calls,
        budget.refused,
        budget.max_in_flight,
        tally.wall_ms,
    )
