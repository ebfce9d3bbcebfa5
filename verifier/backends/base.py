"""What every backend shares: the failure type, the per-round call budget, capped body reads."""

import asyncio
import json
import socket
import ssl
import time
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol

from core import metrics
from verifier import policy


class GateFailure(Exception):
    """The backend gave no usable answer; the question passes as unverified with this reason."""

    def __init__(self, reason: str, message: str, *, status: int | None = None) -> None:
        super().__init__(f"{reason}: {message}")
        self.reason = reason
        self.message = message
        # The HTTP status when the server answered with one (the circuit breaker counts 5xx and 429).
        self.status = status


@dataclass
class BackendAnswer:
    probabilities: dict[str, float]
    input_tokens: int | None = None
    output_tokens: int | None = None
    calls: int = 1
    details: dict[str, Any] = field(default_factory=dict)


@dataclass
class BlindAnswer:
    """The checker's answer to the blind question: raw probability per option letter (not yet normalised)."""

    probabilities: dict[str, float]
    input_tokens: int | None = None
    output_tokens: int | None = None
    details: dict[str, Any] = field(default_factory=dict)
    # The calls this answer took (a backend that retries a refused request format makes more than one).
    calls: int = 1


class CallGuard(Protocol):
    """Decides whether a call may go out and hears how it ended (the circuit breaker, verifier/breaker.py)."""

    async def admit(self) -> Any:
        """A permit for one call; raises GateFailure when the call may not go out."""

    async def ended(self, permit: Any, failure: GateFailure | None) -> None: ...

    async def abandoned(self, permit: Any) -> None: ...


class CallBudget:
    """One per round: at most `concurrency` calls in flight, each cut at `timeout` seconds whatever it is doing.

    With a `guard`, a call it refuses raises its failure before anything is sent, and every call that went out
    tells it how it ended. A call cut while `past_deadline()` says the round's budget is spent counts as a
    timeout; one cancelled for another reason (the host cancelled) counts as nothing.
    """

    def __init__(
        self,
        *,
        concurrency: int,
        timeout: float,
        guard: CallGuard | None = None,
        past_deadline: Callable[[], bool] | None = None,
        backend: str = "",
    ) -> None:
        # The backend's name, for the calls counted in the metrics (core/metrics.py).
        self.backend = backend
        self.timeout = timeout
        self.concurrency = concurrency
        self.guard = guard
        self.past_deadline = past_deadline or (lambda: False)
        self._slots = asyncio.Semaphore(concurrency)
        self.calls = 0
        self.refused = 0
        self.in_flight = 0
        self.max_in_flight = 0

    @asynccontextmanager
    async def call(self) -> AsyncIterator[None]:
        async with self._slots:
            permit = None
            if self.guard is not None:
                try:
                    permit = await self.guard.admit()
                except GateFailure:
                    self.refused += 1
                    metrics.gate_call_ended(backend=self.backend, result="breaker_open")
                    raise
            self.calls += 1
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            # How the call ended, for the guard: None when it got an answer; left unset when it was abandoned.
            ended: list[GateFailure | None] = []
            try:
                # One deadline for connect, send, headers and the whole body: httpx's own timeouts are per
                # phase, so a server that trickles a byte at a time would otherwise never be cut.
                async with asyncio.timeout(self.timeout):
                    yield
                ended.append(None)
            except TimeoutError as exc:
                ended.append(GateFailure("timeout", f"no complete answer within {self.timeout:g} s"))
                raise ended[0] from exc
            except GateFailure as exc:
                ended.append(exc)
                raise
            except asyncio.CancelledError:
                if self.past_deadline():
                    ended.append(GateFailure("timeout", "no answer within the round's budget"))
                raise
            finally:
                self.in_flight -= 1
                metrics.gate_call_ended(
                    backend=self.backend, result="abandoned" if not ended else (ended[0].reason if ended[0] else "ok")
                )
                if self.guard is not None:
                    await (self.guard.ended(permit, ended[0]) if ended else self.guard.abandoned(permit))


class Backend(Protocol):
    name: str
    model_id: str

    async def ask(
        self, *, document: Mapping[str, Any], checks: tuple[str, ...], budget: CallBudget
    ) -> BackendAnswer: ...

    async def ask_blind(
        self, *, document: Mapping[str, Any], letters: tuple[str, ...], budget: CallBudget
    ) -> BlindAnswer: ...

    async def aclose(self) -> None: ...


def _exception_chain(exc: BaseException) -> list[BaseException]:
    chain: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in chain:
        chain.append(current)
        current = current.__cause__ or current.__context__
    return chain


def _class_names(exc: BaseException) -> set[str]:
    return {klass.__name__ for klass in type(exc).__mro__}


def transport_failure(exc: BaseException, *, reading_body: bool) -> GateFailure:
    """Name a transport error from httpx, httpx2 (the openai SDK's) or the socket layer below them."""
    chain = _exception_chain(exc)
    detail = str(exc) or type(exc).__name__
    if any(isinstance(e, ssl.SSLError) for e in chain):
        return GateFailure("tls_error", detail)
    if any(isinstance(e, socket.gaierror) for e in chain):
        return GateFailure("dns_error", detail)
    if any(isinstance(e, ConnectionRefusedError) for e in chain):
        return GateFailure("connection_refused", detail)
    names = set().union(*(_class_names(e) for e in chain))
    if names & {"TimeoutException", "APITimeoutError"} or any(isinstance(e, TimeoutError) for e in chain):
        return GateFailure("timeout", detail)
    if "RemoteProtocolError" in names or any(isinstance(e, ConnectionError) for e in chain):
        if reading_body:
            return GateFailure("truncated_body", detail)
        return GateFailure("connection_closed", detail)
    if "ConnectError" in names:
        return GateFailure("connect_error", detail)
    return GateFailure("transport_error", detail)


def status_failure(status: int) -> GateFailure:
    if 300 <= status < 400:
        return GateFailure("redirect", f"HTTP {status}; redirects are not followed")
    if status == 429:
        return GateFailure("rate_limited", "HTTP 429", status=status)
    return GateFailure("http_status", f"HTTP {status}", status=status)


async def read_capped(chunks: AsyncIterator[bytes], *, cap: int, declared_length: str | None) -> bytes:
    if declared_length is not None and declared_length.isdigit() and int(declared_length) > cap:
        raise GateFailure("body_too_large", f"declared {declared_length} bytes, cap {cap}")
    body = bytearray()
    async for chunk in chunks:
        body += chunk
        if len(body) > cap:
            raise GateFailure("body_too_large", f"more than {cap} bytes")
    return bytes(body)


def parse_json_object(raw: bytes) -> dict[str, Any]:
    try:
        payload = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise GateFailure("bad_json", f"body is not JSON ({len(raw)} bytes)") from exc
    except RecursionError as exc:
        # A few hundred KiB of "[" outnest the parser's stack: a bad reply like any other, not the gate's fault.
        raise GateFailure("bad_json", f"body is nested too deeply to read ({len(raw)} bytes)") from exc
    if not isinstance(payload, dict):
        raise GateFailure("bad_json", "body is not a JSON object")
    return payload


def checked_probability(value: Any, *, check: str) -> float:
    if value is None:
        raise GateFailure("missing_probability", f"no probability for {check}")
    if not policy.is_probability(value):
        raise GateFailure("bad_probability", f"{check}: {value!r} is not a number in [0, 1]")
    return float(value)


def token_count(value: Any) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    return None


def served_model(payload: Mapping[str, Any]) -> str:
    """The model id a reply says served it (System One's and chat completions' `model`), or ""."""
    value = payload.get("model")
    return value.strip()[:200] if isinstance(value, str) else ""


def elapsed_ms(started: float) -> int:
    return int((time.monotonic() - started) * 1000)
