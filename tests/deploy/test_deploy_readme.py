"""deploy/README.md is a script: its commands, in order, from a fresh clone, bring up three hosts behind HAProxy;
then the site answers plain http with its page (no redirect to https), a WebSocket to ws://127.0.0.1:PORT is let
in, the sample packs are there, and HAProxy's statistics page answers.

What the test changes, and why: the example env is filled with this run's database, Redis and free ports (the
machine is shared; the README's ports are the defaults of a machine of one's own); the package installation runs
only when a package is missing (it would need root and the network); the virtualenv step would download every
package, so the clone's `.venv` is this run's own Python environment; the database step makes a database of the
test's own on the PostgreSQL the tests use."""

import asyncio
import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import httpx
import pytest
from django.conf import settings
from websockets.asyncio.client import connect

from tests.support.hosts import HAPROXY, free_port_on
from tests.support.servers import REPO, free_port

pytestmark = [
    pytest.mark.skipif(
        not settings.REDIS_URL or settings.DATABASES["default"]["ENGINE"].endswith("sqlite3"),
        reason="the deploy set runs on PostgreSQL and Redis: set DATABASE_URL and REDIS_URL",
    ),
    pytest.mark.skipif(
        HAPROXY is None or shutil.which("redis-server") is None or shutil.which("psql") is None,
        reason="needs haproxy, redis-server and psql",
    ),
]

ADDRESSES = ("127.0.0.11", "127.0.0.12", "127.0.0.13")


def readme_commands() -> list[str]:
    text = (REPO / "deploy" / "README.md").read_text()
    section = text.split("## On this machine", 1)[1]
    block = re.search(r"```sh\n(.*?)```", section, re.S).group(1)
    return [line for line in block.splitlines() if line.strip()]


def adapted(command: str, *, venv: str, database: str, shard_ports: tuple[int, int]) -> str:
    if command.startswith("apt-get install"):
        return "true  # " + command  # every package is here (the skip marks above)
    if "python3 -m venv" in command:
        return f"ln -s {venv} .venv  # " + command
    if "createdb" in command:
        return f"psql -h 127.0.0.1 -U postgres -qc 'CREATE DATABASE {database}'"
    if command.startswith("redis-server"):
        return command.replace("6380", str(shard_ports[0])).replace("6381", str(shard_ports[1]))
    return command


# Each NAME=value line of the copied example gets the run's value; names the example lacks are added.
FILL = """import json, pathlib
spec = json.loads(%r)
path, values, lines = pathlib.Path(spec["path"]), spec["values"], []
for line in path.read_text().splitlines():
    name = line.split("=", 1)[0]
    lines.append(f"{name}={values.pop(name)}" if name in values and not line.startswith("#") else line)
path.write_text("\\n".join(lines + [f"{n}={v}" for n, v in values.items()]) + "\\n")
"""


def test_the_deploy_readme_run_in_order_brings_up_a_working_site(tmp_path):
    clone = tmp_path / "quizgate"
    subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True)
    database = f"quizgate_deploy_{uuid.uuid4().hex[:8]}"
    shard_ports = (free_port(), free_port())
    port = free_port_on(ADDRESSES[0])
    listen, stats = free_port(), free_port()
    db = settings.DATABASES["default"]
    commands = [
        adapted(c, venv=str(Path(sys.executable).parent.parent), database=database, shard_ports=shard_ports)
        for c in readme_commands()
    ]
    cp = next(n for n, c in enumerate(commands) if c.startswith("cp deploy/quizgate.env.example"))
    env_values = {
        "DATABASE_URL": f"postgres://postgres@{db.get('HOST') or '127.0.0.1'}:{db.get('PORT') or 5432}/{database}",
        "REDIS_URL": settings.REDIS_URL,
        "CHANNEL_LAYER_REDIS_URLS": ",".join(f"redis://127.0.0.1:{p}/0" for p in shard_ports),
        "CHANNEL_LAYER_PREFIX": f"qg-deploy-{uuid.uuid4().hex[:8]}",
        "RATELIMIT_KEY_PREFIX": f"rl-{uuid.uuid4().hex[:8]}",
        "PORT": str(port),
        "QUIZGATE_LISTEN": f"127.0.0.1:{listen}",
        "QUIZGATE_STATS": f"127.0.0.1:{stats}",
        **{f"QUIZGATE_HOST{n}": f"{a}:{port}" for n, a in enumerate(ADDRESSES, 1)},
        "QUIZGATE_HOST4": f"127.0.0.14:{free_port()}",
        "WEB_CONCURRENCY": "1",
        "CELERY_CONCURRENCY": "1",
        "DJANGO_ALLOWED_HOSTS": "quiz.example.org,localhost,127.0.0.1",
    }
    # The test fills the example env right after the README copies it.
    (tmp_path / "fill.py").write_text(FILL % json.dumps({"path": str(clone / "quizgate.env"), "values": env_values}))
    fill = f"{sys.executable} {tmp_path / 'fill.py'}"
    script = "set -e\n" + "\n".join([*commands[: cp + 1], fill, *commands[cp + 1 :]]) + "\n"
    (tmp_path / "steps.sh").write_text(script)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DATABASE_URL", "REDIS_URL", "DJANGO_"))}
    try:
        done = subprocess.run(
            ["bash", str(tmp_path / "steps.sh")], cwd=clone, env=env, capture_output=True, text=True, timeout=240
        )
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        asyncio.run(_the_site_works(listen, stats))
        packs = subprocess.run(
            ["psql", "-h", "127.0.0.1", "-U", "postgres", "-d", database, "-Atc", "SELECT count(*) FROM quiz_pack"],
            capture_output=True, text=True, check=True,
        )  # fmt: skip
        assert int(packs.stdout) > 0, "no sample pack loaded"
    except BaseException:
        for a in ("11", "12", "13"):
            log = clone / f"host-{a}.log"
            if log.exists():
                print(f"host {a}", log.read_text(errors="replace")[-2000:])
        raise
    finally:
        for a in ("11", "12", "13"):
            pid = clone / f"host-{a}.pid"
            if pid.exists():
                with contextlib.suppress(ProcessLookupError, ValueError):
                    os.killpg(int(pid.read_text()), signal.SIGTERM)
        if (clone / "haproxy.pid").exists():
            with contextlib.suppress(ProcessLookupError, ValueError):
                os.kill(int((clone / "haproxy.pid").read_text().split()[0]), signal.SIGTERM)
        for shard in shard_ports:
            subprocess.run(["redis-cli", "-p", str(shard), "shutdown", "nosave"], capture_output=True)
        subprocess.run(
            ["psql", "-h", "127.0.0.1", "-U", "postgres", "-qc", f"DROP DATABASE IF EXISTS {database} WITH (FORCE)"],
            capture_output=True,
        )


async def _the_site_works(listen: int, stats: int) -> None:
    base = f"http://127.0.0.1:{listen}"
    async with httpx.AsyncClient(base_url=base, timeout=10) as http:
        async with asyncio.timeout(90):
            while True:  # the hosts start, HAProxy's checks take them in
                try:
                    page = await http.get("/")
                    if page.status_code != 503:
                        break
                except httpx.TransportError:
                    pass
                await asyncio.sleep(0.5)
        assert page.status_code == 200, (page.status_code, page.headers.get("location"))
        assert (await http.get(f"http://127.0.0.1:{stats}/")).status_code == 200
    async with connect(f"ws://127.0.0.1:{listen}/ws/room/ZZZZZZ/", origin=base) as ws:
        await ws.send(json.dumps({"type": "join", "nickname": "Ann"}))
        reply = json.loads(await ws.recv())
    assert reply["type"] == "error" and reply["code"] != "too_many_connections", reply
