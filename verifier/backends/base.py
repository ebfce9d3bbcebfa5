"""What every backend shares: the failure type, the per-round call budget, capped body reads."""

import asyncio
import json
import socket
import ssl
import time
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol

from verifier import policy


class GateFailure(Exception):
    """The backend gave no usable answer; the question passes as unverified with this reason."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(f"{reason}: {message}")
        self.reason = reason
        self.message = message


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


class CallBudget:
    """One per round: at most `concurrency` calls in flight, each cut at `timeout` seconds whatever it is doing."""

    def __init__(self, *, concurrency: int, timeout: float) -> None:
        self.timeout = timeout
        self.concurrency = concurrency
        self._slots = asyncio.Semaphore(concurrency)
        self.calls = 0
        self.in_flight = 0
        self.max_in_flight = 0

    @asynccontextmanager
    async def call(self) -> AsyncIterator[None]:
        async with self._slots:
            self.calls += 1
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            try:
                # One deadline for connect, send, headers and the whole body: httpx's own timeouts are per
                # phase, so a server that trickles a byte at a time would otherwise never be cut.
                async with asyncio.timeout(self.timeout):
                    yield
            except TimeoutError as exc:
                raise GateFailure("timeout", f"no complete answer within {self.timeout:g} s") from exc
            finally:
                self.in_flight -= 1


class Backend(Protocol):
    name: str
    model_id: str
    # Whether `ask_blind` can answer (the blind question is then asked unless VERIFIER_BLIND is off).
    supports_blind: bool

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
        return GateFailure("rate_limited", "HTTP 429")
    return GateFailure("http_status", f"HTTP {status}")


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


def elapsed_ms(started: float) -> int:
    return int((time.monotonic() - started) * 1000)
