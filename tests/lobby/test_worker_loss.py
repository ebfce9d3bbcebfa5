"""A worker killed with a school's room on it (its 20 players from one address), under the default limits: every
player is back on the survivor within seconds, with their token, as static/js/live.js reconnects (backing off,
honouring the server's retry hint), and nobody's answer is refused as too late for the time the loss took.

Before, the dead worker's sockets kept their places under the per-address cap (WS_MAX_PER_IP, 30 by default)
until their leases ran out (30 s): the survivor refused the reconnects, and the question closed meanwhile."""

import asyncio
import json
import random
import time
import uuid

import pytest
from asgiref.sync import sync_to_async
from django.conf import settings
from django.utils import timezone
from websockets.exceptions import ConnectionClosed

from lobby.models import Answer, Room
from tests.support.peer import Peer
from tests.support.servers import start_asgi

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not settings.REDIS_URL, reason="two processes share a game through Redis"),
]

PLAYERS = 20
BACK_WITHIN = 5.0  # seconds, on this test's own clock, from the kill


async def come_back(peer: Peer, base: str, refusals: list[float], *, after: float = 0.0) -> float:
    """Reconnect as live.js does until the room's picture arrives: backoff from 0.5 s, doubled, jittered, and
    never sooner than a refusal's retry_after; first `after` seconds (a phone whose screen was off). When the
    picture arrived (time.monotonic())."""
    await asyncio.sleep(after)
    peer.url = f"{base}/ws/room/{peer.url.rsplit('/ws/room/', 1)[1]}"
    peer.origin = base.replace("ws://", "http://")
    peer.backlog.clear()
    attempt = 0
    while True:
        hint = 0.0
        try:
            await peer.reopen()
            while True:
                message = json.loads(await peer.ws.recv())
                if message["type"] == "error":
                    refusals.append(time.monotonic())
                    hint = float(message.get("retry_after", 0))
                    continue
                if message["type"] == "state":
                    peer.backlog.append(message)
                    return time.monotonic()
        except (ConnectionClosed, OSError, TimeoutError):
            pass
        backoff = min(0.5 * 2**attempt, 8) * (0.5 + random.random() / 2)
        attempt += 1
        await asyncio.sleep(max(backoff, hint * (1 + random.random() / 2)))


async def test_a_worker_killed_mid_question_with_a_schools_room_costs_seconds_not_the_question(make_room, tmp_path):
    # Default caps: only the per-address counters get a prefix of this test's own (they outlive a run).
    env = {"RATELIMIT_KEY_PREFIX": f"rl-{uuid.uuid4().hex[:8]}"}
    survivor, doomed = (start_asgi(n, log_path=tmp_path / f"{n}.log", env=env) for n in ("survivor", "doomed"))
    try:
        created = await sync_to_async(make_room)(timer_seconds=12)
        code = created.room.code
        host = await Peer(survivor.ws_base, code).open()
        await host.send(type="host", token=created.host_token)
        await host.state(phase="lobby")
        peers = []
        for n in range(PLAYERS):  # every phone from 127.0.0.1, all on the worker that dies
            peer = await Peer(doomed.ws_base, code).open()
            await peer.send(type="join", nickname=f"P{n}")
            reply = await peer.until(lambda m: m["type"] in ("joined", "error"))
            assert reply["type"] == "joined", reply
            peers.append(peer)
        await host.until(lambda m: m["type"] == "state" and m["player_count"] == PLAYERS, timeout=30)
        await asyncio.sleep(1.5)  # the doomed worker's beat names the room it holds players of
        await host.send(type="start", phase="lobby", index=-1)
        for peer in peers:
            await peer.state(phase="question", question_index=0, timeout=20)
        early = peers[:5]
        for peer in early:
            await peer.send(type="answer", question=0, option=1)
            assert (await peer.until(lambda m: m["type"] in ("answered", "error")))["type"] == "answered"

        # Killed 2 s before the question's end; half the phones notice only 3 s later (a screen that was off):
        # without the time back, their answers would come after the end.
        deadline = await sync_to_async(lambda: Room.objects.get(pk=created.room.pk).deadline)()
        await asyncio.sleep(max((deadline - timezone.now()).total_seconds() - 2, 0))
        room = await sync_to_async(Room.objects.get)(pk=created.room.pk)
        assert room.phase == "question", "the machine was too slow to kill the worker before the question's end"
        doomed.kill()
        killed = time.monotonic()
        refusals: list[float] = []
        back = await asyncio.gather(
            *(come_back(peer, survivor.ws_base, refusals, after=3.0 * (n % 2)) for n, peer in enumerate(peers))
        )
        took = sorted(t - killed for t in back)
        assert took[-1] < BACK_WITHIN, (took, len(refusals))
        prompt = sorted(t - killed for n, t in enumerate(back) if n % 2 == 0)

        # Back in the same open question, with what they had answered; the rest answer now, none too late.
        for n, peer in enumerate(peers):
            snapshot = await peer.until(lambda m: m["type"] == "state")
            assert (snapshot["phase"], snapshot["question_index"]) == ("question", 0), f"P{n} came back too late"
            assert snapshot["you"]["answered"] is (peer in early)
        late = peers[5:]
        for n, peer in enumerate(late):
            await peer.send(type="answer", question=0, option=n % 3)
        replies = [await peer.until(lambda m: m["type"] in ("answered", "error")) for peer in late]
        assert [r["type"] for r in replies] == ["answered"] * len(late), replies
        reveal = await host.state(phase="reveal", question_index=0, timeout=30)
        assert len(reveal["reveal"]["results"]) == PLAYERS
        stored = await sync_to_async(Answer.objects.filter(room_id=created.room.pk).count)()
        assert stored == PLAYERS
        print(f"prompt phones back after the kill: p50 {prompt[len(prompt) // 2]:.2f} s, max {prompt[-1]:.2f} s;")
        print(f"all back within {took[-1]:.2f} s; {len(refusals)} refusals")
        for peer in [host, *peers]:
            await peer.close()
    except BaseException:
        for name in ("survivor", "doomed"):
            print(name, (tmp_path / f"{name}.log").read_text(errors="replace")[-3000:])
        raise
    finally:
        survivor.stop()
        doomed.stop()
