"""Whether this process can serve: the parts a load balancer's `/readyz` asks about, each with a short deadline.

Each check answers "ok" or says what failed, and never raises: a part that hangs (a Redis that stopped
answering) is cut at its deadline and named, rather than holding the probe until the balancer gives up on it.
"""

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer
from django.conf import settings
from django.db import connection
from kombu import Connection

PROBE_GROUP = "quizgate.readyz"


@dataclass(frozen=True)
class Part:
    name: str
    ok: bool
    detail: str

    def as_json(self) -> dict[str, Any]:
        return {"ok": self.ok, "detail": self.detail}


def _database_ping() -> str:
    """A fresh connection each time, closed after: the probe says whether a new one can be had, and a pool thread
    keeps no connection open between probes."""
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
        return connection.vendor
    finally:
        connection.close()


async def database_ready() -> str:
    return await sync_to_async(_database_ping, thread_sensitive=False)()


async def channel_layer_ready() -> str:
    """One group send through the configured layer: with Redis it is a round trip to Redis; in memory, a dict."""
    layer = get_channel_layer()
    await layer.group_send(PROBE_GROUP, {"type": "readyz.probe"})
    return type(layer).__name__


def _broker_ping(timeout: float) -> str:
    url = settings.CELERY_BROKER_URL
    if url.startswith("memory://"):
        return "in-process (eager)" if settings.CELERY_TASK_ALWAYS_EAGER else "in-memory"
    with Connection(url, connect_timeout=timeout, transport_options={"socket_timeout": timeout}) as broker:
        broker.ensure_connection(max_retries=1, timeout=timeout)
    return broker.transport_cls if isinstance(broker.transport_cls, str) else "broker"


async def broker_ready(timeout: float) -> str:
    return await sync_to_async(_broker_ping, thread_sensitive=False)(timeout)


async def _part(name: str, check: Callable[[], Awaitable[str]], timeout: float) -> Part:
    try:
        async with asyncio.timeout(timeout):
            return Part(name, True, await check())
    except TimeoutError:
        return Part(name, False, f"no answer within {timeout:g} s")
    except Exception as error:  # noqa: BLE001 - every failure is a "not ready" with its reason, never a 500
        return Part(name, False, f"{type(error).__name__}: {str(error)[:200]}")


async def readiness(*, timeout: float) -> list[Part]:
    """The database, the channel layer and the Celery broker, asked at once; each cut at `timeout` seconds."""
    return list(
        await asyncio.gather(
            _part("database", database_ready, timeout),
            _part("channel_layer", channel_layer_ready, timeout),
            _part("broker", lambda: broker_ready(timeout), timeout),
        )
    )
