"""Open WebSockets per client IP are capped (WS_MAX_PER_IP) on every route, across server processes, so one address
cannot multiply the per-connection message budget; a venue's whole room still gets in from one address."""

import asyncio
import contextlib
import json
import time
import uuid

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from django.conf import settings
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from config.asgi import application
from config.socket_cap import RedisSockets
from tests.support.communicator import Sockets
from tests.support.peer import Peer
from tests.support.servers import start_asgi

pytestmark = pytest.mark.django_db(transaction=True)
needs_redis = pytest.mark.skipif(
    not settings.REDIS_URL, reason="a count shared by several processes needs Redis (set REDIS_URL and DATABASE_URL)"
)


def _socket(sockets: Sockets, path: str = "/ws/room/ABCDEF/", *, ip: str = "198.51.100.9") -> WebsocketCommunicator:
    headers = [(b"origin", b"http://localhost"), (b"host", b"localhost")]
    return sockets.communicator(application, path, headers=headers, ip=ip)


async def _pong(comm: WebsocketCommunicator) -> bool:
    await comm.send_to(text_data='{"type": "ping"}')
    return json.loads(await comm.receive_from())["type"] == "pong"


async def _refused(comm: WebsocketCommunicator) -> bool:
    """Accepted only to be told why, then closed with 1013 "try again later"."""
    connected, _ = await comm.connect()
    assert connected
    first = await comm.receive_output()
    if first["type"] != "websocket.send":
        return False
    frame = json.loads(first["text"])
    if frame.get("code") != "too_many_connections":
        await comm.disconnect()
        return False
    assert frame["type"] == "error" and "Too many connections from your network" in frame["message"]
    closed = await comm.receive_output()
    assert closed == {"type": "websocket.close", "code": 1013, "reason": "too many connections from this address"}
    return True


async def test_one_process_caps_sockets_per_ip_on_every_route_and_a_closed_one_frees_its_place(settings, sockets):
    settings.REDIS_URL = ""  # this process's own count
    settings.WS_MAX_PER_IP = 3
    held = []
    for _ in range(3):
        comm = _socket(sockets)
        assert (await comm.connect())[0] and await _pong(comm)
        held.append(comm)
    assert await _refused(_socket(sockets))
    # The generation page's socket counts against the same cap.
    assert await _refused(_socket(sockets, "/ws/generation/1/?t=x"))
    # Another address is not affected.
    other = _socket(sockets, ip="198.51.100.10")
    assert (await other.connect())[0] and await _pong(other)
    await other.disconnect()
    await held.pop().disconnect()
    again = _socket(sockets)
    assert (await again.connect())[0] and await _pong(again)
    assert await _refused(_socket(sockets))
    for comm in [*held, again]:
        await comm.disconnect()


@needs_redis
async def test_leases_in_redis_are_shared_renewed_and_run_out_when_their_process_dies(settings):
    settings.WS_MAX_PER_IP = 4
    settings.WS_SOCKET_LEASE_SECONDS = 1.0
    ip = f"192.0.2.{uuid.uuid4().hex[:8]}"  # a key of this test's own
    live, doomed = RedisSockets(settings.REDIS_URL), RedisSockets(settings.REDIS_URL)
    mine = [await live.acquire(ip), await live.acquire(ip)]
    theirs = [await doomed.acquire(ip), await doomed.acquire(ip)]
    assert all(mine) and all(theirs)
    assert await live.acquire(ip) is None and await doomed.acquire(ip) is None
    await live.release(mine.pop())
    mine.append(await live.acquire(ip))
    assert mine[-1] is not None
    # The doomed process stops renewing (killed: no release, no finally); the live one keeps renewing.
    doomed.renewer.cancel()
    started = time.monotonic()
    slowest = 0.0  # the longest turn of this loop (a refused acquire and a nap): the machine's pace now
    while True:
        turn = time.monotonic()
        if await live.acquire(ip) is not None:
            break
        await asyncio.sleep(0.1)
        slowest = max(slowest, time.monotonic() - turn)
        # Within one lease of the last renewal, and the loop's own turns at this machine's pace.
        waited = time.monotonic() - started
        assert waited < 1.0 + 2 * slowest, f"a dead process's sockets were still counted after {waited:.2f} s"
    mine.append(await live.acquire(ip))
    assert mine[-1] is not None  # both of the dead process's places came back
    await asyncio.sleep(2.5)  # over two leases: the live sockets still count, renewed
    assert await live.acquire(ip) is None
    for lease in mine:
        await live.release(lease)
    live.renewer.cancel()


@needs_redis
async def test_a_burst_of_connects_from_one_address_gets_exactly_the_cap(settings, caplog):
    settings.WS_MAX_PER_IP = 10
    ip = f"192.0.2.{uuid.uuid4().hex[:8]}"
    counters = [RedisSockets(settings.REDIS_URL), RedisSockets(settings.REDIS_URL)]  # two processes
    leases = await asyncio.gather(*(counters[n % 2].acquire(ip) for n in range(400)))
    granted = [lease for lease in leases if lease is not None]
    assert len(granted) == 10
    assert all(lease.shared for lease in granted)  # counted in Redis, none let in by a failing count
    assert "unavailable" not in caplog.text
    for lease in granted:
        await counters[int(lease in counters[1].held)].release(lease)
    for counter in counters:
        if counter.renewer is not None:  # a process's connects taken in one round trip may all have come late
            counter.renewer.cancel()


@pytest.fixture
def servers(tmp_path, request):
    env = {"RATELIMIT_KEY_PREFIX": f"rl-{uuid.uuid4().hex[:8]}", **getattr(request, "param", {})}
    procs = [start_asgi(f"asgi-{n}", log_path=tmp_path / f"asgi-{n}.log", env=env) for n in (1, 2)]
    yield procs
    for proc in procs:
        proc.stop()


async def _open(server):
    """A socket on this server from 127.0.0.1; None when the server refused it for the address's cap."""
    ws = await connect(f"{server.ws_base}/ws/room/ABCDEF/", origin=f"http://127.0.0.1:{server.port}", open_timeout=5)
    with contextlib.suppress(ConnectionClosed):  # a refusal may already be closing the socket
        await ws.send('{"type": "ping"}')
    try:
        reply = json.loads(await ws.recv())
    except ConnectionClosed:
        raise AssertionError("closed without a reason frame") from None
    if reply["type"] == "pong":
        return ws
    assert reply["code"] == "too_many_connections", reply
    with pytest.raises(ConnectionClosed) as closed:
        await ws.recv()
    assert closed.value.rcvd.code == 1013 and closed.value.rcvd.reason == "too many connections from this address"
    return None


async def _open_within(server, seconds: float):
    """A socket once a place comes free, expected within `seconds`; the bound also allows two of this loop's
    slowest turns (a refused connect and a nap), measured here: how fast this machine connects right now.
    Returns the socket, how long it took, and that slowest turn."""
    started = time.monotonic()
    slowest = 0.0
    while True:
        turn = time.monotonic()
        if (ws := await _open(server)) is not None:
            return ws, time.monotonic() - started, max(slowest, time.monotonic() - turn)
        await asyncio.sleep(0.1)
        slowest = max(slowest, time.monotonic() - turn)
        waited = time.monotonic() - started
        assert waited < seconds + 2 * slowest, f"no place came free within {waited:.2f} s"


@needs_redis
@pytest.mark.parametrize("servers", [{"WS_MAX_PER_IP": "6"}], indirect=True)
async def test_the_cap_holds_across_two_processes_and_a_closed_socket_lets_one_more_in(servers):
    first, second = servers
    held = [await _open(servers[n % 2]) for n in range(6)]
    assert all(held)
    assert await _open(first) is None and await _open(second) is None
    await held.pop(0).close()  # one on the first process
    held.append((await _open_within(second, 1.0))[0])  # frees a place on the other, once it is closed
    assert await _open(first) is None and await _open(second) is None
    for ws in held:
        await ws.close()


@needs_redis
@pytest.mark.parametrize("servers", [{"WS_MAX_PER_IP": "4", "WS_SOCKET_LEASE_SECONDS": "2"}], indirect=True)
async def test_a_process_killed_outright_frees_its_sockets_within_one_lease(servers):
    doomed, survivor = servers
    held = [await _open(doomed) for _ in range(4)]
    assert all(held) and await _open(survivor) is None
    doomed.kill()
    # One lease (2 s), and connecting at this machine's pace now (see _open_within).
    ws, _, _ = await _open_within(survivor, 2.0)
    # The others were opened a moment later, so their leases end a moment later.
    more = [(await _open_within(survivor, 1.0))[0] for _ in range(3)]
    await asyncio.sleep(5)  # over two leases: the survivor's own sockets are renewed and still count
    assert await _open(survivor) is None
    for socket in [ws, *more]:
        await socket.close()


class Phone(Peer):
    async def open(self) -> "Phone":
        # Unbounded: a phone that read only some of a whole room's snapshots still hears the close at once.
        self.ws = await connect(self.url, origin=self.origin, open_timeout=5, max_queue=None)
        return self


@needs_redis
@pytest.mark.parametrize(
    ("servers", "room_size"), [({}, 20), ({"ROOM_MAX_PLAYERS": "80"}, 80)], indirect=["servers"], ids=["20", "80"]
)
async def test_a_full_room_joins_from_one_address_under_the_default_limits(servers, room_size, make_room):
    """Every phone of a class behind the school's one address, and the host's, across both processes: the socket
    cap and the join limit follow ROOM_MAX_PLAYERS (a fixed 60 joins a minute would stop the 80-player room)."""
    created = await sync_to_async(make_room)()
    code = created.room.code
    host = await Phone(servers[0].ws_base, code).open_as_host(created.host_token)
    players = []
    for n in range(room_size):
        peer = await Phone(servers[n % 2].ws_base, code).open()
        await peer.send(type="join", nickname=f"P{n}")
        reply = await peer.until(lambda m: m["type"] in ("joined", "error"))
        assert reply["type"] == "joined", (n, reply)
        players.append(peer)
    # The host's frame counts every player (and names a bounded few: lobby/reads/host_view.py).
    await host.until(lambda m: m["type"] == "state" and m["player_count"] == room_size, timeout=30)
    # One more is told the room is full: the room's limit, not the address's.
    late = await Phone(servers[1].ws_base, code).open()
    await late.send(type="join", nickname="Late")
    assert (await late.until(lambda m: m["type"] == "error"))["code"] == "room_full"
    await asyncio.gather(*(peer.close() for peer in [host, late, *players]))


async def test_idle_sockets_from_one_address_hit_the_cap_and_free_their_places_at_the_join_timeout(settings, sockets):
    """Sockets that never say who they are count toward the address's cap, and are closed at WS_JOIN_TIMEOUT."""
    settings.REDIS_URL = ""
    settings.WS_MAX_PER_IP = 5
    settings.WS_JOIN_TIMEOUT = 0.6
    idle = []
    for _ in range(5):
        comm = _socket(sockets)
        assert (await comm.connect())[0]
        idle.append(comm)
    assert await _refused(_socket(sockets))
    for comm in idle:
        assert await comm.receive_output(3) == {
            "type": "websocket.close",
            "code": 4408,
            "reason": "say who you are (join, resume or host) sooner",
        }
        await comm.disconnect()  # the client's side of the close handshake
    again = _socket(sockets)
    assert (await again.connect())[0] and await _pong(again)
