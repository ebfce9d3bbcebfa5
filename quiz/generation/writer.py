"""The writer: asks a language model for a round, streams its reply, and hands each question to the gate
as soon as it is complete, so checking overlaps writing. `RoundWriter` is the round's policy: how many to ask
for (over-asking when the gate is on), when to ask again, and what the host is told.

The prompt is `quiz.generation.prompts`, reading the reply `quiz.generation.replies`, the model's server
`quiz.generation.model_client`.
No database here: `quiz.generation.jobs` reads the job and settings (sync), runs `RoundWriter` (async) and saves the
result (sync). Every item goes through `clean_question`; nothing the model wrote is trusted.
"""

import asyncio
import contextlib
import logging
import math
import time
from collections.abc import Awaitable, Callable
from typing import Any

from quiz.checking.kind_checks import asked_question, question_check
from quiz.exceptions import InvalidQuestion, WriterError
from quiz.generation import over_ask, round_outcome
from quiz.generation.model_client import ModelClient, StreamBroken
from quiz.generation.prompts import LANGUAGES, RoundSpec, build_messages
from quiz.generation.replies import ItemExtractor, clean_item, dedupe_key, parse_reply
from quiz.generation.write_outcome import (
    Candidate,
    Timeline,
    WriteOutcome,
    WriterProgress,
)
from quiz.generation.writer_messages import (
    CHECKER_UNAVAILABLE_MESSAGE,
    AttemptFacts,
    seconds_text,
)
from quiz.jobs.conf import WriterConfig
from verifier import conf as gate_conf
from verifier.gate import Gate

logger = logging.getLogger(__name__)

MAX_PROBLEMS = 50
OVER_ASK = over_ask.DEFAULT
# A further attempt starts only while the job's budget holds at least this share of an attempt's deadline: a
# sliver of time writes nothing and would only add "too slow" to the host's message.
MIN_ATTEMPT_SHARE = 0.25

__all__ = ["CHECKER_UNAVAILABLE_MESSAGE", "RoundWriter", "WriteOutcome", "WriterProgress"]

# Called with a copy of the progress after each step; returns False when the host cancelled.
ProgressReport = Callable[[WriterProgress], Awaitable[bool]]
# Called with the questions that just became ready to play, in the writer's order: each passed the gate (or
# failed open, unverified), every question written before it is decided, and never more than the round's count
# in all. A game may show them while the rest is still being written; a dropped one is never among them.
Publish = Callable[[list[Candidate]], Awaitable[None]]


def first_ask(count: int, *, gated: bool, over_ask: float = OVER_ASK) -> int:
    """How many to ask for `count` (a round, or its shortfall on a later attempt)."""
    return math.ceil(over_ask * count) if gated else count


class RoundWriter:
    def __init__(
        self,
        *,
        spec: RoundSpec,
        config: WriterConfig,
        gate: Gate,
        report: ProgressReport | None = None,
        source_limit: int = 50_000,
        client: Any = None,
        publish: Publish | None = None,
        already: list[str] | None = None,
        progress: WriterProgress | None = None,
    ) -> None:
        """`already`, `progress`: what a run before this one (its worker died) published and counted: repeats of
        those are dropped, the prompt asks for others, and this run counts on."""
        self.spec = spec
        self.config = config
        self.gate = gate
        self.gated = gate.enabled
        self.source_limit = source_limit
        self.progress = progress.copy() if progress is not None else WriterProgress()
        self.candidates: list[Candidate] = []
        self.timeline = Timeline()
        self.cancelled = False
        self.error = ""
        self._report = report
        self._report_lock = asyncio.Lock()
        self._already = list(already or [])
        self._seen: set[str] = {dedupe_key(text) for text in self._already}
        self._client_override = client
        self._publish = publish
        self._publish_lock = asyncio.Lock()
        # The questions ready to play, in order, and how many candidates were looked at for them.
        self.ready: list[Candidate] = []
        self._scanned = 0
        self._model: ModelClient | None = None
        # What the host's message is made of.
        self.attempts: list[AttemptFacts] = []
        self.invalid_reasons: list[str] = []
        self.budget_stopped = False

    async def report(self) -> None:
        if self._report is None or self.cancelled:
            return
        # One report at a time, so stored progress and broadcasts keep their order.
        async with self._report_lock:
            if not await self._report(self.progress.copy()):
                self.cancelled = True

    @property
    def schema_level(self) -> str:
        """The JSON schema the server took: "bounded", "no_lengths" (string lengths refused) or "none"."""
        return self._model.schema if self._model is not None else "bounded"

    def _problem(self, text: str) -> None:
        if len(self.progress.problems) < MAX_PROBLEMS:
            self.progress.problems.append(text)

    async def run(self) -> WriteOutcome:
        loop = asyncio.get_running_loop()
        self.timeline.started = time.monotonic()
        model = ModelClient(
            config=self.config, grounded=self.spec.grounded, kinds=self.spec.kinds, client=self._client_override
        )
        self._model = model
        # The budget runs from the first request on: the first attempt always gets its own deadline in full
        # when the budget is at least that long.
        job_deadline = loop.time() + self.config.job_budget
        try:
            ask = first_ask(self.spec.count, gated=self.gated, over_ask=self.config.over_ask)
            while not self.cancelled:
                left = job_deadline - loop.time()
                if self.attempts and left < MIN_ATTEMPT_SHARE * self.config.timeout:
                    self.budget_stopped = True
                    logger.info(
                        "writer: the job budget (%gs) is used up after %d attempts",
                        self.config.job_budget,
                        len(self.attempts),
                    )
                    break
                seconds = min(self.config.timeout, max(0.0, left))
                facts = AttemptFacts(
                    number=len(self.attempts) + 1, asked=ask, seconds=seconds, by_budget=seconds < self.config.timeout
                )
                await self._attempt(model, facts, deadline=loop.time() + seconds)
                survivors = round_outcome.survivors(self.candidates)
                if self.cancelled or self.error or len(survivors) >= self.spec.count:
                    break
                if len(self.attempts) >= self.config.max_attempts:
                    break
                if facts.by_budget and facts.timed_out:
                    # Cut by the job's budget rather than its own deadline: nothing is left for another attempt.
                    self.budget_stopped = True
                    break
                ask = first_ask(self.spec.count - len(survivors), gated=self.gated, over_ask=self.config.over_ask)
        finally:
            await model.aclose()
        self.timeline.finished = time.monotonic()
        outcome = round_outcome.outcome_of(self)
        outcome.writer_usage = model.usage
        return outcome

    async def _attempt(self, model: ModelClient, facts: AttemptFacts, *, deadline: float) -> None:
        """One request: stream the reply until `ask` items are taken, the reply ends, or `deadline` (the event
        loop's clock) cuts it; the items complete by then are kept either way."""
        ask = facts.asked
        self.attempts.append(facts)
        self.progress.attempt += 1
        self.progress.asked += ask
        written_before = self.progress.written
        await self.report()
        if self.cancelled:
            return
        messages = build_messages(
            spec=self.spec,
            ask=ask,
            already=self._already + [candidate.data.text for candidate in self.candidates],
            source_limit=self.source_limit,
        )
        extractor = ItemExtractor()
        checks: list[asyncio.Task[None]] = []
        taken = 0
        write_started = time.monotonic()
        self.gate.unseal()
        try:
            async with (
                asyncio.timeout_at(deadline),
                contextlib.aclosing(model.stream_text(messages, deadline=deadline)) as stream,
            ):
                async for text in stream:
                    for raw in extractor.feed(text):
                        taken += 1
                        if await self._take(raw, checks) and self._valid_in(checks) >= ask:
                            break
                        if self.cancelled:
                            break
                    if self.cancelled or self._valid_in(checks) >= ask:
                        break
        except WriterError as error:
            self.error = str(error)
        except TimeoutError:
            facts.timed_out = True
        except StreamBroken as broken:
            logger.warning("writer: the reply broke off after %d items: %s", taken, broken)
            self._problem(f"attempt {self.progress.attempt}: the reply broke off")
        finally:
            self.timeline.writing.append((write_started, time.monotonic()))
            # Writing is over: what the checker has not answered one call budget from now passes unverified.
            self.gate.seal()
            facts.written = self.progress.written - written_before
        if facts.timed_out:
            logger.info(
                "writer: attempt %d cut off after %gs with %d of %d written",
                facts.number,
                facts.seconds,
                facts.written,
                ask,
            )
            cut = seconds_text(facts.seconds)
            self._problem(f"attempt {facts.number}: cut off after {cut} s, {facts.written} of {ask} written")
        if not taken and not self.cancelled and extractor.text:
            # The streaming reader found no array of objects; read the whole reply defensively instead.
            for raw in parse_reply(extractor.text):
                taken += 1
                await self._take(raw, checks)
                if self.cancelled or self._valid_in(checks) >= ask:
                    break
        if not taken and extractor.text and not self.error:
            self._problem(f"attempt {self.progress.attempt}: no question could be read from the reply")
        if self.cancelled:
            for task in checks:
                task.cancel()
        await asyncio.gather(*checks, return_exceptions=True)

    @staticmethod
    def _valid_in(checks: list[asyncio.Task[None]]) -> int:
        return len(checks)

    async def _take(self, raw: Any, checks: list[asyncio.Task[None]]) -> bool:
        """Validate one item and start its check; False when it is not used."""
        self.progress.written += 1
        number = self.progress.written
        try:
            data = clean_item(raw, grounded=self.spec.grounded, kinds=self.spec.kinds)
        except InvalidQuestion as error:
            self.progress.invalid += 1
            self.invalid_reasons.append(str(error))
            self._problem(f"item {number}: {error}")
            logger.info("writer: item %d dropped as invalid: %s", number, error)
            await self.report()
            return False
        key = dedupe_key(data.text)
        if key in self._seen:
            self.progress.duplicates += 1
            self._problem(f"item {number}: a duplicate of an earlier question")
            logger.info("writer: item %d dropped as a repeat of an earlier question", number)
            await self.report()
            return False
        self._seen.add(key)
        served = self._model.served_model if self._model is not None else ""
        if served and served != self.config.model:
            gate_conf.model_mismatch_warn_once(
                logger=logger,
                who="writer",
                pinned=self.config.model,
                served=served,
                consequence="questions record both",
            )
        candidate = Candidate(
            key=f"a{self.progress.attempt}-{number}", data=data, attempt=self.progress.attempt, served_model=served
        )
        self.candidates.append(candidate)
        checks.append(asyncio.create_task(self._check(candidate)))
        await self.report()
        return True

    async def _check(self, candidate: Candidate) -> None:
        data = candidate.data
        started = time.monotonic()
        # Each kind's asks (quiz/kinds), checked at once; the worst decides. A kind with none is played unchecked.
        asked = asked_question(data, key=candidate.key, language=LANGUAGES.get(self.spec.language, ""))
        candidate.decision = await question_check(self.gate, asked)
        self.timeline.checks.append((started, time.monotonic()))
        self.progress.checked += 1
        if not candidate.decision.playable:
            self.progress.dropped += 1
        await self._publish_ready()
        await self.report()

    async def _publish_ready(self) -> None:
        """Hand on the questions that became ready: the decided prefix of the candidates, what it passed."""
        async with self._publish_lock:
            fresh = []
            for candidate in self.candidates[self._scanned :]:
                if candidate.decision is None:
                    break
                self._scanned += 1
                if candidate.decision.playable and len(self.ready) < self.spec.count:
                    self.ready.append(candidate)
                    fresh.append(candidate)
            if not fresh or self.cancelled:
                return
            if not self.timeline.first_ready:
                self.timeline.first_ready = time.monotonic()
            if self._model is not None:  # a game may play these now: a failing server is not retried for long
                self._model.give_up_after = self.config.give_up_seconds
            if self._publish is not None:
                await self._publish(fresh)
