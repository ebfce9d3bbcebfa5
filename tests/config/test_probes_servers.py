"""The probes and the metrics of a real server process (`python -m config.serve`) on a Redis of the test's own."""

import asyncio
import json
import os
import shutil
import signal
import time

import httpx
import pytest
import websockets
from asgiref.sync import sync_to_async

from tests.config.test_probes import TOKEN, samples
from tests.support.servers import start_asgi, start_redis

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(shutil.which("redis-server") is None, reason="needs redis-server to start one of its own"),
]
READYZ_TIMEOUT = 1.0


def _readyz(port: int) -> httpx.Response:
    # The balancer's view: plain http to the process's own address, a Host the site does not list.
    # The operator's view (the metrics token): the parts and their details.
    headers = {"Host": "10.0.0.7", "Authorization": f"Bearer {TOKEN}"}
    return httpx.get(f"http://127.0.0.1:{port}/readyz", headers=headers, timeout=15)


def _ready_within(port: int, seconds: float) -> httpx.Response:
    deadline = time.monotonic() + seconds
    while True:
        response = _readyz(port)
        if response.status_code == 200 or time.monotonic() > deadline:
            return response
        time.sleep(0.2)


def test_readyz_fails_naming_the_channel_layer_while_redis_is_stopped_and_recovers(tmp_path):
    redis = start_redis()
    server = start_asgi(
        "asgi",
        log_path=tmp_path / "asgi.log",
        env={
            "REDIS_URL": f"redis://127.0.0.1:{redis.port}/0",
            "READYZ_TIMEOUT": str(READYZ_TIMEOUT),
            "LOG_FORMAT": "json",
            "METRICS_TOKEN": TOKEN,
        },
    )
    try:
        healthy = httpx.get(f"http://127.0.0.1:{server.port}/healthz", headers={"Host": "10.0.0.7"}, timeout=15)
        assert healthy.status_code == 200
        live = httpx.get(f"http://127.0.0.1:{server.port}/livez", headers={"Host": "10.0.0.7"}, timeout=15)
        assert live.status_code == 200, live.text  # ready once: in the balancer's pool from now on
        # What a healthy probe of this server costs now (the worst of three): the baseline of the bound below.
        healthy = 0.0
        for _ in range(3):
            started = time.monotonic()
            ready = _readyz(server.port)
            healthy = max(healthy, time.monotonic() - started)
            assert ready.status_code == 200, ready.text
        assert ready.json()["parts"]["channel_layer"]["detail"] == "RedisPubSubChannelLayer"

        redis.kill()
        started = time.monotonic()
        down = _readyz(server.port)
        took = time.monotonic() - started
        assert down.status_code == 503, down.text
        body = down.json()
        assert body["status"] == "unavailable"
        assert {"channel_layer", "broker"} <= set(body["failed"])
        assert "database" not in body["failed"]
        assert body["parts"]["channel_layer"]["ok"] is False and body["parts"]["channel_layer"]["detail"]
        # The process itself is fine: nothing restarts it, and a balancer keeps it (every host shares the Redis).
        assert httpx.get(f"http://127.0.0.1:{server.port}/healthz", timeout=15).status_code == 200
        assert httpx.get(f"http://127.0.0.1:{server.port}/livez", timeout=15).status_code == 200
        # Each part is cut at READYZ_TIMEOUT (1 s), all asked at once: a probe never hangs on a dead Redis. It
        # costs one cut and what a healthy probe costs, with room for one more cut, never a wait per part.
        assert took <= 2 * READYZ_TIMEOUT + 2 * healthy, (took, healthy)

        redis = start_redis(redis.port)
        assert _ready_within(server.port, 15).status_code == 200
    finally:
        server.stop()
        redis.stop()
    # LOG_FORMAT=json: the server's warning about it is one JSON line.
    logged = [json.loads(line) for line in (tmp_path / "asgi.log").read_text().splitlines() if "readyz" in line]
    assert logged and logged[0]["level"] == "WARNING" and logged[0]["logger"] == "config.probes"
    assert "channel_layer" in logged[0]["message"]


async def test_metrics_sum_every_worker_of_a_server(make_room, tmp_path):
    """Two uvicorn workers: whichever answers the scrape, the sockets of both are in it, one series per process."""
    redis = start_redis()
    server = start_asgi(
        "asgi",
        workers=2,
        log_path=tmp_path / "asgi.log",
        env={
            "REDIS_URL": f"redis://127.0.0.1:{redis.port}/0",
            "METRICS_TOKEN": TOKEN,
            "PROMETHEUS_MULTIPROC_DIR": str(tmp_path / "metrics"),
        },
    )
    opened = []
    try:
        created = await sync_to_async(make_room)()
        url = f"ws://127.0.0.1:{server.port}/ws/room/{created.room.code}/"
        origin = f"http://127.0.0.1:{server.port}"
        for _ in range(8):
            opened.append(await websockets.connect(url, origin=origin))
        async with httpx.AsyncClient(base_url=origin, timeout=15) as http:

            async def sockets_by_pid() -> dict[int, float]:
                response = await http.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
                assert response.status_code == 200
                found = samples(response.text)
                prefix = 'quizgate_sockets_open{pid="'
                return {int(name[len(prefix) : -2]): value for name, value in found.items() if name.startswith(prefix)}

            assert (await http.get("/metrics")).status_code == 403
            for _ in range(6):  # whichever worker answers
                assert sum((await sockets_by_pid()).values()) == 8
                await asyncio.sleep(0.05)

            # A worker killed outright runs no shutdown: its sockets leave the sum all the same.
            counts = await sockets_by_pid()
            victim = max(counts, key=counts.get)
            survivors = 8 - counts[victim]
            os.kill(victim, signal.SIGKILL)
            deadline = time.monotonic() + 20
            while True:
                try:
                    counts = await sockets_by_pid()
                except httpx.TransportError:  # the scrape reached the dying worker
                    counts = {}
                if counts and victim not in counts and sum(counts.values()) == survivors:
                    break
                assert time.monotonic() < deadline, counts
                await asyncio.sleep(0.2)
    finally:
        for socket in opened:
            await socket.close()
        server.stop()
        redis.stop()
