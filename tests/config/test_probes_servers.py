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
from tests.support.servers import Proc, start_asgi, start_redis

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


def _two_workers(tmp_path) -> tuple[Proc, Proc]:
    """A server of two uvicorn workers with the metrics of both, on a Redis of the test's own."""
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
    return server, redis


async def _sockets_by_pid(http: httpx.AsyncClient) -> dict[int, float]:
    response = await http.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
    assert response.status_code == 200
    prefix = 'quizgate_sockets_open{pid="'
    found = samples(response.text).items()
    return {int(name[len(prefix) : -2]): value for name, value in found if name.startswith(prefix)}


async def _until_summed_without(http: httpx.AsyncClient, victim: int, survivors: float, *, within: float) -> None:
    """Within `within` seconds, the scrape has no series of the killed worker and sums the survivors' sockets."""
    deadline = time.monotonic() + within
    while True:
        try:
            counts = await _sockets_by_pid(http)
        except httpx.TransportError:  # the scrape reached the dying worker
            counts = {}
        if counts and victim not in counts and sum(counts.values()) == survivors:
            return
        assert time.monotonic() < deadline, counts
        await asyncio.sleep(0.2)


async def test_metrics_sum_every_worker_of_a_server(make_room, tmp_path):
    """Two uvicorn workers: whichever answers the scrape, the sockets of both are in it, one series per process."""
    server, redis = _two_workers(tmp_path)
    opened = []
    try:
        created = await sync_to_async(make_room)()
        url = f"ws://127.0.0.1:{server.port}/ws/room/{created.room.code}/"
        origin = f"http://127.0.0.1:{server.port}"
        for _ in range(8):
            opened.append(await websockets.connect(url, origin=origin))
        async with httpx.AsyncClient(base_url=origin, timeout=15) as http:
            assert (await http.get("/metrics")).status_code == 403
            for _ in range(6):  # whichever worker answers
                assert sum((await _sockets_by_pid(http)).values()) == 8
                await asyncio.sleep(0.05)

            # A worker killed outright runs no shutdown: its sockets leave the sum all the same.
            counts = await _sockets_by_pid(http)
            victim = max(counts, key=counts.get)
            survivors = 8 - counts[victim]
            os.kill(victim, signal.SIGKILL)
            await _until_summed_without(http, victim, survivors, within=20)
    finally:
        for socket in opened:
            await socket.close()
        server.stop()
        redis.stop()


def _state(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rpartition(")")[2].split()[0]
    except FileNotFoundError:
        return "gone"


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="reads process states from /proc (Linux)")
async def test_a_worker_killed_while_its_supervisor_asks_after_it_leaves_the_sum_and_none_outlives_the_supervisor(
    make_room, tmp_path
):
    """uvicorn's supervisor reaps a dead worker only between its health checks, and waits up to
    SERVER_WORKER_HEALTHCHECK_SECONDS (60 s) for the worker it is asking. A worker killed then stays a zombie that long
    (its sockets counted on), and a SIGTERM to the stuck supervisor waits as long; whoever then kills the supervisor
    outright used to leave the other worker serving with no parent, its clock closing questions on the database."""
    server, redis = _two_workers(tmp_path)
    opened = []
    try:
        created = await sync_to_async(make_room)()
        url = f"ws://127.0.0.1:{server.port}/ws/room/{created.room.code}/"
        origin = f"http://127.0.0.1:{server.port}"
        async with httpx.AsyncClient(base_url=origin, timeout=15) as http:
            # Sockets on both workers (the kernel hands connections out unevenly).
            counts: dict[int, float] = {}
            while len(opened) < 40 and not (len(counts) == 2 and min(counts.values()) > 0):
                opened.append(await websockets.connect(url, origin=origin))
                await asyncio.sleep(0.05)
                counts = await _sockets_by_pid(http)
            assert len(counts) == 2 and min(counts.values()) > 0, counts
            victim, survivor = sorted(counts, key=counts.get)
            survivors = counts[survivor]

            # The victim stops answering, the supervisor's next check (every 0.5 s) waits on it; then it dies.
            os.kill(victim, signal.SIGSTOP)
            await asyncio.sleep(1.5)
            os.kill(victim, signal.SIGKILL)
            await _until_summed_without(http, victim, survivors, within=5)  # a tenth of the supervisor's wait
            assert _state(victim) == "Z", "the supervisor reaped its worker at once: this test no longer tests the wait"

            # The supervisor is killed outright: the surviving worker stops on its own, closing its sockets as a
            # restart does (1012, the page reconnects), and nothing serves on the port any more.
            os.kill(server.popen.pid, signal.SIGKILL)
            server.popen.wait(10)
            closed = []
            async with asyncio.timeout(20):
                for socket in opened:
                    await socket.wait_closed()
                    closed.append(socket.close_code)
            assert closed.count(1012) == survivors, closed
            deadline = time.monotonic() + 20
            while _state(survivor) not in ("gone", "Z"):
                assert time.monotonic() < deadline, f"worker {survivor} still runs with no supervisor"
                await asyncio.sleep(0.1)
            with pytest.raises(httpx.TransportError):
                await http.get("/livez")
    finally:
        for socket in opened:
            await socket.close()
        server.stop()
        redis.stop()
    assert "supervisor" in (tmp_path / "asgi.log").read_text()
