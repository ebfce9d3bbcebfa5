"""Hosts behind HAProxy on this machine, as deploy/ describes: each host a process group of its own on a loopback
address of its own (127.0.0.11, .12 ...), HAProxy (deploy/haproxy.cfg) in front, and a phone that reconnects as
static/js/live.js does. Shared by tests/lobby/test_host_loss.py and bench/host_loss.py."""

import asyncio
import contextlib
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from tests.support.servers import REPO, server_env

HAPROXY = shutil.which("haproxy") or ("/usr/sbin/haproxy" if os.path.exists("/usr/sbin/haproxy") else None)


def free_port_on(address: str) -> int:
    with socket.socket() as sock:
        sock.bind((address, 0))
        return sock.getsockname()[1]


def wait_listening(address: str, port: int, popen: subprocess.Popen, name: str, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while True:
        if popen.poll() is not None:
            raise RuntimeError(f"{name} exited with {popen.returncode}")
        try:
            socket.create_connection((address, port), timeout=0.2).close()
            return
        except OSError:
            if time.monotonic() > deadline:
                raise RuntimeError(f"{name} did not listen on {address}:{port}") from None
            time.sleep(0.1)


@dataclass
class Host:
    """One host: config.serve (uvicorn) on ADDRESS:port in a process group of its own (as deploy/host.sh runs it,
    without the Celery worker)."""

    address: str
    port: int
    popen: subprocess.Popen

    @property
    def target(self) -> str:
        return f"{self.address}:{self.port}"

    def pids(self) -> list[int]:
        """Every live process of the host's group (the supervisor and its uvicorn workers)."""
        found = []
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
                except OSError:
                    continue
                if int(fields[2]) == self.popen.pid:  # field 5: the process group
                    found.append(int(entry))
        return found

    def cpu_seconds(self) -> float:
        """User + system CPU time of the host's processes so far (from /proc/<pid>/stat)."""
        tick = os.sysconf("SC_CLK_TCK")
        total = 0
        for pid in self.pids():
            try:
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            total += int(fields[11]) + int(fields[12])  # utime, stime (fields 14, 15)
        return total / tick

    def kill_group(self) -> None:
        """SIGKILL to the whole process group, as a machine that loses power."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.popen.pid, signal.SIGKILL)
        self.popen.wait(10)

    def stop(self) -> None:
        end_group(self.popen)


def group_alive(group: int) -> list[int]:
    """The processes of a process group still running (not zombies)."""
    alive = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[2]) == group and fields[0] != "Z":
                alive.append(int(entry))
    return alive


def group_commands(group: int) -> list[str]:
    """The command lines of a process group's running processes."""
    return [_command_line(pid) for pid in group_alive(group)]


def end_group(popen: subprocess.Popen, seconds: float = 10) -> list[str]:
    """Stop a host started in a session of its own as its operator would (SIGTERM to its group), then SIGKILL
    whatever of the group is still running after `seconds`. The shell that started a host can exit before its
    children: a whole run found a Celery beat still running ten minutes after its test, and the connections of
    a host's lingering processes can take PostgreSQL's last free slots from the tests that follow. Returns the
    command lines of the processes that outlived their SIGTERM and had to be killed."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(popen.pid, signal.SIGTERM)
    deadline = time.monotonic() + seconds
    while group_alive(popen.pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    stuck = group_commands(popen.pid)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(popen.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        popen.wait(10)
    return stuck


def _command_line(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return f"pid {pid}"


def own_hostname(name: str) -> str:
    """`name` where a test host may run under a host name of its own (root, with util-linux's unshare), as on
    separate machines; "" elsewhere, and the hosts share this machine's name (a survivor then sees a killed host's
    processes gone at once instead of waiting for its beat)."""
    return name if os.geteuid() == 0 and shutil.which("unshare") else ""


def start_host(
    address: str, *, env: dict, log_path: Path | None = None, port: int = 0, workers: int = 1, hostname: str = ""
) -> Host:
    """With `hostname`, the host runs in a UTS namespace of its own under that name (root only: `unshare --uts`),
    as on a machine of its own: a survivor elsewhere cannot see its processes die and waits for its beat to stop
    (core/processes.py). Its addresses stay on this machine's loopback."""
    port = port or free_port_on(address)
    log = open(log_path or os.devnull, "ab")  # noqa: SIM115 - lives as long as the process
    own_name = ["unshare", "--uts", "sh", "-c", 'hostname "$0" && exec "$@"', hostname] if hostname else []
    popen = subprocess.Popen(
        [*own_name, sys.executable, "-m", "config.serve", "--host", address, "--port", str(port),
         "--workers", str(workers), "--log-level", "warning", "--ws-per-message-deflate", "false"],
        cwd=REPO, env=server_env(**env), stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip
    wait_listening(address, port, popen, f"host {address}")
    return Host(address=address, port=port, popen=popen)


def start_haproxy(targets: list[str], *, site: str = "localhost", log_path: Path | None = None):
    """deploy/haproxy.cfg as it is, in the foreground, on a free port, in front of up to four hosts (a target not
    listening yet stays down until its check passes). Returns (the Popen, ws://address:port); the statistics page
    is on `popen.stats_url`."""
    port, stats = free_port_on("127.0.0.1"), free_port_on("127.0.0.1")
    env = dict(os.environ, QUIZGATE_LISTEN=f"127.0.0.1:{port}", QUIZGATE_SITE=site, QUIZGATE_STATS=f"127.0.0.1:{stats}")
    for n, target in enumerate(targets, 1):
        env[f"QUIZGATE_HOST{n}"] = target
    for n in range(len(targets) + 1, 5):  # a line with nobody behind it: always down
        env[f"QUIZGATE_HOST{n}"] = f"127.0.0.{10 + n}:{free_port_on('127.0.0.1')}"
    log = open(log_path or os.devnull, "ab")  # noqa: SIM115
    popen = subprocess.Popen(
        [HAPROXY, "-db", "-f", str(REPO / "deploy" / "haproxy.cfg")], env=env, stdout=log, stderr=subprocess.STDOUT
    )
    wait_listening("127.0.0.1", port, popen, "haproxy", seconds=10)
    popen.stats_url = f"http://127.0.0.1:{stats}/"
    return popen, f"ws://127.0.0.1:{port}"


def haproxy_servers(stats_url: str) -> dict[str, dict[str, str]]:
    """Each backend server's row of HAProxy's statistics (its CSV export): status (UP, DOWN …), chkfail, …"""
    with urllib.request.urlopen(f"{stats_url};csv", timeout=10) as response:
        lines = response.read().decode().splitlines()
    names = lines[0].lstrip("# ").split(",")
    rows = [dict(zip(names, line.split(","), strict=False)) for line in lines[1:] if line]
    return {row["svname"]: row for row in rows if row["pxname"] == "hosts" and row["svname"] != "BACKEND"}


class Phone:
    """A player's page through the load balancer from its own source address: joins, and when its socket closes
    reconnects with its token as static/js/live.js does (0.5 s doubling backoff, jittered, never sooner than a
    refusal's retry_after). Refusals are counted in `refusals` (the app's error codes, or `http 503`)."""

    def __init__(self, lb: str, code: str, nickname: str, address: str, refusals: Counter | None = None):
        self.url, self.origin = f"{lb}/ws/room/{code}/", lb.replace("ws://", "http://")
        self.nickname, self.address = nickname, address
        self.token: str | None = None
        self.ws = None
        self.refusals = refusals if refusals is not None else Counter()

    async def open(self) -> dict:
        """Connect (and join, or resume with the token) until the room's picture arrives; returns it."""
        attempt = 0
        while True:
            hint = 0.0
            try:
                self.ws = await connect(
                    self.url, origin=self.origin, open_timeout=10, max_queue=None, local_addr=(self.address, 0)
                )
                hello = {"type": "resume", "token": self.token} if self.token else {"type": "join"}
                await self.ws.send(json.dumps({**hello, "nickname": self.nickname}))
                async for raw in self.ws:
                    message = json.loads(raw)
                    if message["type"] == "joined":
                        self.token = message["token"]
                    elif message["type"] == "error":
                        self.refusals[message.get("code", "?")] += 1
                        hint = float(message.get("retry_after", 0))
                    elif message["type"] == "state":
                        return message
            except InvalidStatus as refused:  # the load balancer's 503 while no host answers
                self.refusals[f"http {refused.response.status_code}"] += 1
            except (ConnectionClosed, OSError, TimeoutError):
                pass
            backoff = min(0.5 * 2**attempt, 8) * (0.5 + random.random() / 2)
            attempt += 1
            await asyncio.sleep(max(backoff, hint * (1 + random.random() / 2)))

    async def until(self, predicate, timeout: float = 30) -> dict:
        """The next frame that satisfies `predicate`; a socket closed meanwhile (4012: moved to another host
        between questions) comes back first, as the page's does."""
        async with asyncio.timeout(timeout):
            while True:
                try:
                    message = json.loads(await self.ws.recv())
                except ConnectionClosed:
                    message = await self.open()
                if predicate(message):
                    return message
