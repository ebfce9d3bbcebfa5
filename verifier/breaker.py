"""The circuit breaker: after a run of calls that found the checker unavailable, stop calling it for a while.

One breaker per backend + model id, kept in Django's cache: per process with the in-memory cache, shared by
every process when the cache is Redis (REDIS_URL). Every step is one atomic cache operation (`add`, `incr`,
`set`, `delete`), so processes racing on the same breaker agree without a lock.

- closed: calls go out; each failure that means "the checker is unavailable" (a timeout, a refused or lost
  connection, before the headers or mid-body, HTTP 5xx or 429) adds one to the run; any answer ends the run.
  `failures` in a row open it.
- open: no call goes out; the question passes `unverified` with the reason `checker_unavailable`.
- half-open: once `cooldown` seconds have passed, one call (the probe) may go out, whoever asks first; its
  answer closes the breaker, its failure opens it again for another cool-down. The probe's claim expires on
  its own, so a process that died mid-probe does not keep the breaker shut.

A bad reply (not JSON, a bad probability, a 4xx) is an answer: the checker is there, the reply is the problem.
"""

import asyncio
import hashlib
import logging
import time
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from asgiref.sync import sync_to_async
from django.core.cache import BaseCache, caches
from django.core.cache.backends.dummy import DummyCache
from django.core.cache.backends.locmem import LocMemCache

from verifier import conf
from verifier.backends.base import GateFailure
from verifier.causes import SLOW_PAUSED, UNAVAILABLE
from verifier.conf import GateConfig
from verifier.registry import gate_enabled

logger = logging.getLogger("verifier")

# A transport that never delivered an answer. `truncated_body` is a connection lost mid-body (closed or reset
# before the announced length): a lost connection like one lost before the headers. `body_too_large` is an answer
# gone wrong (the server is there, its reply is the problem).
UNAVAILABLE_REASONS = frozenset(
    {
        "timeout",
        "connection_refused",
        "connect_error",
        "connection_closed",
        "truncated_body",
        "dns_error",
        "tls_error",
        "rate_limited",
    }
)
KEY_PREFIX = "verifier-breaker"

State = Literal["closed", "open", "half-open"]


def means_unavailable(failure: GateFailure) -> bool:
    if failure.reason in UNAVAILABLE_REASONS:
        return True
    return failure.status is not None and (failure.status >= 500 or failure.status == 429)


@dataclass(frozen=True)
class BreakerState:
    backend: str
    model_id: str
    state: State
    failures: int
    threshold: int
    cooldown: float
    opened_at: float | None
    last_reason: str
    last_failure_at: float | None
    probing: bool

    @property
    def opened_at_time(self) -> datetime | None:
        return _as_datetime(self.opened_at)

    @property
    def last_failure_time(self) -> datetime | None:
        return _as_datetime(self.last_failure_at)

    @property
    def reopens_at_time(self) -> datetime | None:
        return _as_datetime(None if self.opened_at is None else self.opened_at + self.cooldown)


def _as_datetime(stamp: float | None) -> datetime | None:
    return None if stamp is None else datetime.fromtimestamp(stamp, tz=UTC)


@dataclass(frozen=True)
class Permit:
    """Leave to make one call; `probe` when it is the half-open breaker's one trial call."""

    probe: bool = False


class Breaker:
    def __init__(
        self,
        *,
        cache: BaseCache,
        backend: str,
        model_id: str,
        failures: int,
        cooldown: float,
        probe_timeout: float,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.cache = cache
        self.backend = backend
        self.model_id = model_id
        self.threshold = max(1, failures)
        self.cooldown = max(0.0, cooldown)
        # How long a probe's claim holds: its call's own budget, and a little more.
        self.probe_timeout = max(1.0, probe_timeout * 2)
        self.clock = clock
        digest = hashlib.sha256(f"{backend}\0{model_id}".encode()).hexdigest()[:24]
        self._key = f"{KEY_PREFIX}:{backend}:{digest}"

    def _k(self, name: str) -> str:
        return f"{self._key}:{name}"

    def allow(self) -> Permit | None:
        """A permit for one call, or None while the breaker is open (or another caller holds the probe)."""
        opened_at = self.cache.get(self._k("opened_at"))
        if opened_at is None:
            return Permit()
        if self.clock() < float(opened_at) + self.cooldown:
            return None
        if self.cache.add(self._k("probe"), self.clock(), timeout=self.probe_timeout):
            return Permit(probe=True)
        return None

    def record(self, permit: Permit, failure: GateFailure | None) -> None:
        """How a permitted call ended: None for an answer (of any quality), else its failure."""
        if failure is None or not means_unavailable(failure):
            self._close()
            return
        now = self.clock()
        self.cache.set_many({self._k("last_reason"): failure.reason, self._k("last_failure_at"): now}, timeout=None)
        self.cache.add(self._k("failures"), 0, timeout=None)
        try:
            run = self.cache.incr(self._k("failures"))
        except ValueError:  # the key expired or was evicted between add and incr
            self.cache.set(self._k("failures"), 1, timeout=None)
            run = 1
        if permit.probe:
            # The probe failed: open again for a whole cool-down, and let the next probe wait for it.
            self.cache.set(self._k("opened_at"), now, timeout=None)
            self.cache.delete(self._k("probe"))
            logger.info("checker breaker %s %s: the probe failed (%s); open again", *self._names(), failure.reason)
        elif run >= self.threshold and self.cache.add(self._k("opened_at"), now, timeout=None):
            # `add`: of several processes crossing the line together, the first one opens it and says so.
            logger.warning(
                "checker breaker %s %s opened after %d failures in a row (last: %s); questions pass unchecked for %g s",
                *self._names(),
                run,
                failure.reason,
                self.cooldown,
            )

    def trip(self, calls: int, reason: str) -> None:
        """Open now: a whole batch of one round's calls, in flight together, found the checker unavailable."""
        if self.cache.add(self._k("opened_at"), self.clock(), timeout=None):
            logger.warning(
                "checker breaker %s %s opened: a whole batch of %d calls in flight together failed (last: %s); "
                "questions pass unchecked for %g s",
                *self._names(),
                calls,
                reason,
                self.cooldown,
            )

    def release(self, permit: Permit) -> None:
        """The call was abandoned (the round was cancelled) before it ended: it proves nothing either way."""
        if permit.probe:
            self.cache.delete(self._k("probe"))

    def last_reason(self) -> str:
        """The reason of the last call that found the checker unavailable ("timeout", "connection_refused"...)."""
        return str(self.cache.get(self._k("last_reason")) or "")

    def reset(self) -> None:
        """Forget everything: closed, no run of failures, no last failure."""
        names = ("opened_at", "failures", "probe", "last_reason", "last_failure_at")
        self.cache.delete_many([self._k(name) for name in names])

    def _names(self) -> tuple[str, str]:
        return self.backend, self.model_id

    def _close(self) -> None:
        # Most answers find the breaker closed already: reads instead of three writes.
        was_open = self.cache.get(self._k("opened_at")) is not None
        if was_open or self.cache.get(self._k("failures")):
            self.cache.delete_many([self._k("opened_at"), self._k("failures"), self._k("probe")])
        if was_open:
            logger.warning("checker breaker %s %s closed: the checker answered", *self._names())

    def state(self) -> BreakerState:
        found: dict[str, Any] = self.cache.get_many(
            [self._k(name) for name in ("opened_at", "failures", "last_reason", "last_failure_at", "probe")]
        )
        values = {key.rsplit(":", 1)[1]: value for key, value in found.items()}
        opened_at = values.get("opened_at")
        if opened_at is None:
            state: State = "closed"
        elif self.clock() < float(opened_at) + self.cooldown:
            state = "open"
        else:
            state = "half-open"
        return BreakerState(
            backend=self.backend,
            model_id=self.model_id,
            state=state,
            failures=int(values.get("failures") or 0),
            threshold=self.threshold,
            cooldown=self.cooldown,
            opened_at=None if opened_at is None else float(opened_at),
            last_reason=str(values.get("last_reason") or ""),
            last_failure_at=None if values.get("last_failure_at") is None else float(values["last_failure_at"]),
            probing="probe" in values,
        )


def unavailable_failure(backend: str, model_id: str, *, last_reason: str = "") -> GateFailure:
    """Why a call was not sent: the checker is paused; too slow when the calls that paused it ran out of time."""
    if last_reason == "timeout":
        return GateFailure(SLOW_PAUSED, f"the checker ({backend} {model_id}) is too slow: paused, not called")
    return GateFailure(UNAVAILABLE, f"the checker ({backend} {model_id}) is unavailable: not called")


class BreakerGuard:
    """The breaker as a round's call guard (verifier.backends.base.CallGuard). A shared cache is I/O (Redis), so
    its steps run off the event loop, and how a call ended is recorded in the background (the call's slot is not
    held for it; `drain()` waits for what is left); the in-process cache is a dict, asked directly.

    The guard also keeps the round's own view, so a dead checker holds a round one call budget, not one per batch
    of calls: after a call of the round found the checker unavailable, a call that gets its slot waits until the
    calls still in flight have ended (one answer and it goes; the rest failing too and it is not sent). A whole
    batch failing in a row, `batch` calls (the round's concurrency, or the breaker's own count if that is fewer),
    gives the round up on this checker while the writer is still writing (`sealed()` false), and opens the breaker
    (the next round need not wait out the same timeout to learn it): every later call passes `checker_unavailable`
    without being sent. After the seal the round's budget already holds it to one call budget, and the breaker
    counts its run as before.
    """

    def __init__(self, breaker: Breaker, *, batch: int = 0, sealed: Callable[[], bool] | None = None) -> None:
        self.breaker = breaker
        self._direct = _in_process(breaker.cache)
        self._allow = _off_the_loop(breaker.allow, direct=self._direct)
        self._record = _off_the_loop(breaker.record, direct=self._direct)
        self._release = _off_the_loop(breaker.release, direct=self._direct)
        self._trip = _off_the_loop(breaker.trip, direct=self._direct)
        self._last_reason = _off_the_loop(breaker.last_reason, direct=self._direct)
        self._pending: set[asyncio.Task[Any]] = set()
        self._batch = min(breaker.threshold, batch) if batch > 0 else breaker.threshold
        self._sealed = sealed or (lambda: True)
        # This round: calls in flight, unavailable failures in a row, and whether it gave the checker up.
        self._in_flight = 0
        self._run = 0
        self._given_up = False
        self._reason = ""  # the last unavailable failure's reason in this round
        self._changed = asyncio.Event()

    async def admit(self) -> Permit:
        while self._run and self._in_flight and not self._given_up:
            await self._changed.wait()
        if self._given_up:
            raise GateFailure(
                SLOW_PAUSED if self._reason == "timeout" else UNAVAILABLE,
                f"the checker ({self.breaker.backend} {self.breaker.model_id}) failed {self._run} calls in a row "
                f"in this round ({self._reason}): not called",
            )
        permit = await self._allow()
        if permit is None:
            last = self._reason or await self._last_reason()
            raise unavailable_failure(self.breaker.backend, self.breaker.model_id, last_reason=last)
        self._in_flight += 1
        return permit

    async def ended(self, permit: Permit, failure: GateFailure | None) -> None:
        tripped = False
        if failure is not None and means_unavailable(failure):
            self._run += 1
            self._reason = failure.reason
            if self._run >= self._batch and not self._sealed() and not self._given_up:
                self._given_up = tripped = True
        else:
            self._run = 0
        self._call_over()
        await self._later(self._record(permit, failure))
        if tripped:
            assert failure is not None
            await self._later(self._trip(self._run, failure.reason))

    async def abandoned(self, permit: Permit) -> None:
        self._call_over()
        await self._later(self._release(permit))

    def _call_over(self) -> None:
        self._in_flight -= 1
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()

    async def _later(self, step: Coroutine[Any, Any, Any]) -> None:
        if self._direct:
            await step
            return
        task = asyncio.ensure_future(step)
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)

    async def drain(self) -> None:
        if self._pending:
            await asyncio.gather(*self._pending, return_exceptions=True)


def _in_process(cache: BaseCache) -> bool:
    return isinstance(cache, LocMemCache | DummyCache)


def _off_the_loop(step: Callable[..., Any], *, direct: bool) -> Callable[..., Awaitable[Any]]:
    if direct:

        async def call_directly(*args: Any) -> Any:
            return step(*args)

        return call_directly
    return sync_to_async(step, thread_sensitive=False)


def breaker_for(*, backend: str, model_id: str, config: GateConfig | None = None) -> Breaker:
    """The breaker for this backend + model id, over the default cache (Redis when REDIS_URL is set)."""
    config = config or conf.gate_config()
    return Breaker(
        cache=caches["default"],
        backend=backend,
        model_id=model_id,
        failures=config.breaker_failures,
        cooldown=config.breaker_cooldown,
        probe_timeout=config.timeout,
    )


def configured_breaker_state() -> BreakerState | None:
    """The breaker of the configured checker (VERIFIER_BACKEND + VERIFIER_MODEL), or None with the gate off."""
    config = conf.gate_config()
    if not gate_enabled(config.backend) or not config.model_id:
        return None
    return breaker_for(backend=config.backend, model_id=config.model_id, config=config).state()


def shared_breakers() -> bool:
    """Whether the breaker's state is shared by every process (a Redis cache) or kept per process."""
    return "redis" in type(caches["default"]).__module__


def gate_breaker(config: GateConfig) -> Breaker | None:
    """The breaker guarding a gate's calls to `config`'s backend; None for a backend that makes no calls."""
    if not gate_enabled(config.backend):
        return None
    return breaker_for(backend=config.backend, model_id=config.model_id, config=config)
