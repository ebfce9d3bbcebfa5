"""Start real server processes (uvicorn, Celery) against the test database and channel layer."""

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings

REPO = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def database_url() -> str:
    db = settings.DATABASES["default"]
    if db["ENGINE"].endswith("sqlite3"):
        return f"sqlite:///{db['NAME']}"
    user = db.get("USER") or "postgres"
    password = f":{db['PASSWORD']}" if db.get("PASSWORD") else ""
    return f"postgres://{user}{password}@{db.get('HOST') or '127.0.0.1'}:{db.get('PORT') or 5432}/{db['NAME']}"


def server_env(**extra: str) -> dict[str, str]:
    """The environment of a child process that shares this test's database, channel layer and keys."""
    env = dict(os.environ)
    env.update(
        DJANGO_SETTINGS_MODULE="config.settings",
        DJANGO_DEBUG="0",
        DJANGO_SECRET_KEY=settings.SECRET_KEY,
        DJANGO_SECURE_COOKIES="0",
        DJANGO_SECURE_SSL_REDIRECT="0",
        DJANGO_READ_DOT_ENV_FILE="0",
        DATABASE_URL=database_url(),
        REDIS_URL=settings.REDIS_URL,
        CHANNEL_LAYER_PREFIX=settings.CHANNEL_LAYERS["default"].get("CONFIG", {}).get("prefix", "quizgate"),
        GAME_CLOCK_INTERVAL="0.1",
        LOG_LEVEL="WARNING",
        # Spreading sockets over processes (lobby/realtime/rebalance.py) closes sockets with 4012, which the app's page
        # answers by reconnecting and a test's or bench's own client does not: off unless a test is about it
        # (tests/lobby/test_spread.py, bench/worker_restart.py turn it on).
        REBALANCE_INTERVAL_SECONDS="0",
    )
    env.update(extra)
    return env


@dataclass
class Proc:
    name: str
    popen: subprocess.Popen
    port: int | None = None

    @property
    def ws_base(self) -> str:
        return f"ws://127.0.0.1:{self.port}"

    def kill(self) -> None:
        if self.popen.poll() is None:
            self.popen.send_signal(signal.SIGKILL)
            self.popen.wait(10)
        self._kill_group()

    def stop(self) -> None:
        if self.popen.poll() is None:
            self.popen.terminate()
            try:
                self.popen.wait(10)
            except subprocess.TimeoutExpired:
                self.kill()
        self._kill_group()

    def _kill_group(self) -> None:
        """Whatever the process started and left behind (a uvicorn worker whose supervisor was killed) goes too:
        a server left running on the test database would close the next test's questions."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.popen.pid, signal.SIGKILL)


def start_asgi(name: str, *, workers: int = 1, log_path: Path | None = None, env: dict | None = None) -> Proc:
    """The app as `make serve` starts it (config/serve.py), on a free loopback port."""
    port = free_port()
    log = open(log_path or os.devnull, "wb")  # noqa: SIM115 - lives as long as the process
    popen = subprocess.Popen(
        [sys.executable, "-m", "config.serve", "--host", "127.0.0.1", "--port", str(port),
         "--workers", str(workers), "--log-level", "warning", "--ws-per-message-deflate", "false"],
        cwd=REPO, env=server_env(**(env or {})), stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip
    deadline = time.monotonic() + 30
    while True:
        if popen.poll() is not None:
            raise RuntimeError(f"{name} exited with {popen.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            if time.monotonic() > deadline:
                os.killpg(popen.pid, signal.SIGKILL)
                raise RuntimeError(f"{name} did not listen on {port}") from None
            time.sleep(0.1)
    return Proc(name=name, popen=popen, port=port)


def start_celery_worker(name: str = "worker", *, log_path: Path | None = None, env: dict | None = None) -> Proc:
    log = open(log_path or os.devnull, "wb")  # noqa: SIM115
    popen = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "config", "worker", "--pool", "solo", "--concurrency", "1",
         "--loglevel", "INFO", "--without-gossip", "--without-mingle", "--without-heartbeat"],
        cwd=REPO, env=server_env(**(env or {})), stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip
    return Proc(name=name, popen=popen)


def start_redis(port: int | None = None) -> Proc:
    """A throwaway Redis of the test's own, so a test can kill and restart it without touching the shared one."""
    port = port or free_port()
    popen = subprocess.Popen(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip
    deadline = time.monotonic() + 10
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return Proc(name="redis", popen=popen, port=port)
        except OSError:
            if time.monotonic() > deadline:
                popen.kill()
                raise RuntimeError("redis-server did not start") from None
            time.sleep(0.05)
