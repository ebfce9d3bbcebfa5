"""The deploy set runs exactly one Celery beat: `deploy/host.sh ADDRESS --beat` on one host, plain
`deploy/host.sh ADDRESS` on the others; the beat's retention purge then runs and an old game is deleted."""

import asyncio
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from asgiref.sync import sync_to_async
from django.conf import settings
from django.utils import timezone

from lobby.models import Room
from tests.factories import RoomFactory
from tests.support.hosts import end_group, free_port_on, group_commands, wait_listening
from tests.support.servers import REPO, server_env

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not settings.REDIS_URL, reason="the beat and the workers meet on Redis: set REDIS_URL"),
]


def _start(address: str, *extra: str, env: dict, log: Path) -> tuple[subprocess.Popen, int]:
    port = free_port_on(address)
    popen = subprocess.Popen(
        ["sh", str(REPO / "deploy" / "host.sh"), address, *extra],
        env=server_env(**env, PORT=str(port)),
        stdout=log.open("ab"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    return popen, port


async def test_one_host_runs_the_sites_beat_and_its_retention_purge_deletes_an_old_game(tmp_path):
    old = await sync_to_async(RoomFactory)()
    await sync_to_async(Room.objects.filter(pk=old.pk).update)(created_at=timezone.now() - timedelta(days=400))
    kept = await sync_to_async(RoomFactory)()
    env = {
        "PY": sys.executable,
        "WEB_CONCURRENCY": "1",
        "CELERY_CONCURRENCY": "1",
        "RETENTION_PURGE_EVERY_SECONDS": "1",
        "BEAT_SCHEDULE_FILE": str(tmp_path / "beat-schedule"),
    }
    hosts = []
    try:
        hosts.append(_start("127.0.0.21", "--beat", env=env, log=tmp_path / "host-21.log"))
        hosts.append(_start("127.0.0.22", env=env, log=tmp_path / "host-22.log"))
        for (popen, port), address in zip(hosts, ("127.0.0.21", "127.0.0.22"), strict=True):
            wait_listening(address, port, popen, f"host {address}")
        beats = [
            [c for c in group_commands(popen.pid) if " beat " in f"{c} "] for popen, _ in hosts
        ]  # fmt: skip
        assert [len(b) for b in beats] == [1, 0], beats
        async with asyncio.timeout(90):
            while await sync_to_async(Room.objects.filter(pk=old.pk).exists)():  # noqa: ASYNC110 - another process's
                await asyncio.sleep(0.5)
        assert await sync_to_async(Room.objects.filter(pk=kept.pk).exists)()
        # Stopped as an operator stops a host, every process of both goes on its SIGTERM: none has to be killed.
        stuck = [await sync_to_async(end_group)(popen, seconds=15) for popen, _ in hosts]
        assert stuck == [[], []], f"processes that ignored their host's SIGTERM and were killed: {stuck}"
    except BaseException:
        for name in ("host-21.log", "host-22.log"):
            print(name, (tmp_path / name).read_text(errors="replace")[-3000:])
        raise
    finally:
        for popen, _ in hosts:
            end_group(popen, seconds=15)  # nothing of a host outlives the test (its beat once ran on for minutes)
