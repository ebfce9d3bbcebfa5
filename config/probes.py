"""What a load balancer and Prometheus ask: `/livez`, `/healthz`, `/readyz` and `/metrics`, answered before any
other middleware.

A balancer probes the process's own address, over plain http, with a Host header of its own choosing, and no
cookies: behind the rest of the middleware that is a redirect to https (SECURE_SSL_REDIRECT), a 400 for a host
not in DJANGO_ALLOWED_HOSTS, a session read and a language picked. So this middleware comes first and answers
these paths itself; every other path goes on down the chain.

The split follows Kubernetes' liveness and readiness probes:

- `/livez`: the load balancer's check. 200 when this process answers from its event loop (a stuck loop answers
  nothing, and the balancer's `timeout check` counts that as a failure). It does not ask PostgreSQL or Redis: they
  are shared by every host, so an outage of theirs would take every host out at once and shut every socket, while
  the game already pauses and resumes through one. Only until the process has once been ready (its database,
  channel layer and broker answered, as `/readyz` asks) does it answer 503 "starting": a host that starts with a
  dead broker gets no players, and a host that was serving stays in through a shared outage.
- `/healthz`: 200 while the process serves requests, touching nothing (a process supervisor's liveness).
- `/readyz`: 200 when the database, the channel layer and the Celery broker answer within READYZ_TIMEOUT, 503
  when one did not: for a person, and for a host that starts with a dead broker. The public sees the status alone;
  the parts, the checker's circuit breaker (model id, state) and the addresses only an operator: a request with
  `Authorization: Bearer <METRICS_TOKEN>`, or one from an address in READYZ_DETAILS_FROM (the balancer's) that
  nobody forwarded (no X-Forwarded-For). The breaker never fails readiness: questions pass unverified while the
  checker is away, and the game goes on.
- `/metrics`: Prometheus's text (core/metrics.py) for a request bearing `Authorization: Bearer <METRICS_TOKEN>`;
  403 without it, and 404 while METRICS_TOKEN is empty (the default: the endpoint is off).
"""

import asyncio
import hmac
import json
import logging
from collections.abc import Iterator
from typing import Any

from asgiref.sync import async_to_sync, iscoroutinefunction, markcoroutinefunction, sync_to_async
from django.conf import settings
from django.db import connection
from django.http import HttpRequest, HttpResponse, JsonResponse
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from core import metrics
from core.readiness import readiness
from lobby.reads.selectors import rooms_open_count
from verifier.breaker import configured_breaker_state, shared_breakers

logger = logging.getLogger(__name__)

BREAKER_STATES = ("closed", "open", "half-open")
NO_STORE = {"Cache-Control": "no-store"}


def _breaker() -> dict[str, Any] | None:
    state = configured_breaker_state()
    if state is None:
        return None
    return {
        "backend": state.backend,
        "model": state.model_id,
        "state": state.state,
        "failures": state.failures,
        "threshold": state.threshold,
        "last_reason": state.last_reason,
        "shared": shared_breakers(),
    }


async def _breaker_report(timeout: float) -> dict[str, Any] | None:
    try:
        async with asyncio.timeout(timeout):
            return await sync_to_async(_breaker, thread_sensitive=False)()
    except Exception as error:  # noqa: BLE001 - reported, and never a reason to fail readiness
        return {"state": "unknown", "detail": f"{type(error).__name__}: {str(error)[:200]}"}


async def healthz(request: HttpRequest) -> HttpResponse:
    return JsonResponse({"status": "ok"}, headers=NO_STORE)


class Started:
    """Whether this process has once been ready: asked again on each `/livez` until it has, never after."""

    def __init__(self) -> None:
        self.ready = False
        self.lock: asyncio.Lock | None = None

    async def check(self) -> bool:
        if self.ready:
            return True
        if self.lock is None:
            self.lock = asyncio.Lock()
        async with self.lock:  # one readiness check at a time, however many balancers ask
            if not self.ready:
                parts = await readiness(timeout=min(settings.READYZ_TIMEOUT, LIVEZ_STARTUP_TIMEOUT))
                self.ready = all(part.ok for part in parts)
                if not self.ready:
                    logger.warning(
                        "livez: starting (%s)", ", ".join(f"{p.name}: {p.detail}" for p in parts if not p.ok)
                    )
        return self.ready


# Under the balancer's `timeout check` (deploy/haproxy.cfg: 2 s), so a host still starting answers "starting".
LIVEZ_STARTUP_TIMEOUT = 1.0
started = Started()


async def livez(request: HttpRequest) -> HttpResponse:
    if not await started.check():
        return JsonResponse({"status": "starting"}, status=503, headers=NO_STORE)
    return JsonResponse({"status": "ok"}, headers=NO_STORE)


def _operator(request: HttpRequest) -> bool:
    """The metrics token, or the balancer's own request: from an address it is given, and forwarded by nobody."""
    if settings.METRICS_TOKEN and _authorized(request):
        return True
    return request.META.get("REMOTE_ADDR") in settings.READYZ_DETAILS_FROM and not request.headers.get(
        "X-Forwarded-For"
    )


async def readyz(request: HttpRequest) -> HttpResponse:
    timeout = settings.READYZ_TIMEOUT
    parts, checker = await asyncio.gather(readiness(timeout=timeout), _breaker_report(timeout))
    failed = [part.name for part in parts if not part.ok]
    status = 503 if failed else 200
    if failed:
        logger.warning("readyz: not ready (%s)", ", ".join(f"{p.name}: {p.detail}" for p in parts if not p.ok))
    if not _operator(request):
        return JsonResponse({"status": "unavailable" if failed else "ok"}, status=status, headers=NO_STORE)
    body = {
        "status": "unavailable" if failed else "ok",
        "failed": failed,
        "parts": {part.name: part.as_json() for part in parts},
        # Not a part: a checker that is away makes questions pass unverified; the game goes on.
        "checker_breaker": checker,
    }
    return JsonResponse(body, status=status, headers=NO_STORE)


class ScrapeCollector:
    """Figures read at scrape time from the database and the cache, the same whichever process is asked."""

    def collect(self) -> Iterator[GaugeMetricFamily]:
        try:
            rooms = GaugeMetricFamily(
                "quizgate_rooms_open", "Rooms not finished, created in the last two days (lobby.reads.selectors)."
            )
            rooms.add_metric([], rooms_open_count())
            yield rooms
        except Exception:
            logger.warning("metrics: rooms open unavailable", exc_info=True)
        try:
            breaker = _breaker()
        except Exception:
            logger.warning("metrics: checker breaker unavailable", exc_info=True)
            return
        if breaker is None:
            return
        state = GaugeMetricFamily(
            "quizgate_gate_breaker_state",
            "The configured checker's circuit breaker: 1 for the state it is in.",
            labels=["backend", "model", "state"],
        )
        for name in BREAKER_STATES:
            state.add_metric([breaker["backend"], breaker["model"], name], 1 if breaker["state"] == name else 0)
        yield state
        failures = GaugeMetricFamily(
            "quizgate_gate_breaker_failures",
            "Calls in a row that found the configured checker unavailable.",
            labels=["backend", "model"],
        )
        failures.add_metric([breaker["backend"], breaker["model"]], breaker["failures"])
        yield failures


def _authorized(request: HttpRequest) -> bool:
    header = request.headers.get("Authorization", "")
    scheme, _, token = header.partition(" ")
    expected = settings.METRICS_TOKEN
    return scheme.lower() == "bearer" and hmac.compare_digest(token.strip().encode(), expected.encode())


def _exposition() -> bytes:
    try:
        return metrics.exposition([ScrapeCollector()])
    finally:
        connection.close()  # the rooms' count ran on a pool thread: it keeps no connection between scrapes


async def metrics_view(request: HttpRequest) -> HttpResponse:
    if not settings.METRICS_TOKEN:
        return HttpResponse(status=404)
    if not _authorized(request):
        return HttpResponse(
            json.dumps({"error": "send Authorization: Bearer <METRICS_TOKEN>"}),
            status=403,
            content_type="application/json",
        )
    text = await sync_to_async(_exposition, thread_sensitive=False)()
    return HttpResponse(text, content_type=CONTENT_TYPE_LATEST, headers=NO_STORE)


PROBES = {"/livez": livez, "/healthz": healthz, "/readyz": readyz, "/metrics": metrics_view}


class ProbeMiddleware:
    """First in MIDDLEWARE: the paths above, whatever the Host, the scheme or the cookies."""

    sync_capable = True
    async_capable = True

    def __init__(self, get_response: Any) -> None:
        self.get_response = get_response
        self.is_async = iscoroutinefunction(get_response)
        if self.is_async:
            markcoroutinefunction(self)

    def __call__(self, request: HttpRequest) -> Any:
        probe = PROBES.get(request.path_info) if request.method in ("GET", "HEAD") else None
        if self.is_async:
            return self._acall(request, probe)
        if probe is not None:
            return async_to_sync(probe)(request)
        return self.get_response(request)

    async def _acall(self, request: HttpRequest, probe: Any) -> HttpResponse:
        if probe is not None:
            return await probe(request)
        return await self.get_response(request)
