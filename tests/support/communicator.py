"""A client of the room's WebSocket through Channels' WebsocketCommunicator (no server process).

Every communicator a test connects is counted (`Communicator`): one the test leaves open fails it
(tests/conftest.py). Close each with `async with`, or open it through the `sockets` fixture (`Sockets`), which
closes what it opened when the test ends, passed or failed.

Also the app's ASGI lifespan run as a server runs it (the game clock lives there).
"""

import asyncio
import contextlib
import json

from asgiref.testing import ApplicationCommunicator
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator

from config.asgi import application
from lobby.realtime.routing import websocket_urlpatterns

app = URLRouter(websocket_urlpatterns)

# Connected in the running test; emptied before each test (tests/conftest.py).
_connected: list["Communicator"] = []


class Communicator(WebsocketCommunicator):
    """A WebsocketCommunicator the suite keeps count of. `owned`: closed by the `sockets` fixture at teardown."""

    owned = False
    started = False

    async def connect(self, timeout: float = 10):
        # Roomy: under two CPU burners 50 handshakes at once took more than asgiref's 1 s (test_big_room's join
        # burst, the third stressed run); a refused handshake still answers at once.
        self.started = True
        _connected.append(self)
        return await super().connect(timeout)


def forget_connected() -> None:
    _connected.clear()


def left_open() -> list[Communicator]:
    """Connected, not closed by `disconnect` (the app still runs), and no fixture will close it."""
    return [comm for comm in _connected if not comm.owned and not comm.future.done()]


class Client:
    """Keeps every frame it received (`received`) and those not yet matched by `until` (`backlog`).
    A close arrives as {"type": "closed", "code": …}."""

    def __init__(self, code: str, *, ip: str | None = None, headers: list | None = None):
        self.comm = Communicator(app, f"/ws/room/{code}/", headers=headers)
        if ip is not None:
            # The communicator builds no client address; the router reads the scope only once the app runs.
            self.comm.scope["client"] = [ip, 50000]
        self.received: list[dict] = []
        self.backlog: list[dict] = []
        self.closed: int | None = None
        # The first snapshot of a socket opened as the host (`Sockets.host`).
        self.snapshot: dict | None = None

    async def __aenter__(self):
        connected, _ = await self.comm.connect()
        if not connected:
            await self.comm.disconnect()  # a refused handshake leaves the app waiting for the disconnect
        assert connected
        return self

    async def __aexit__(self, *exc):
        await self.comm.disconnect()

    async def send(self, **message):
        await self.comm.send_to(text_data=json.dumps(message))

    async def recv(self, timeout: float = 3) -> dict:
        output = await self.comm.receive_output(timeout)
        if output["type"] == "websocket.close":
            self.closed = output.get("code", 1000)
            message = {"type": "closed", "code": self.closed}
        else:
            message = json.loads(output["text"])
        self.received.append(message)
        return message

    async def until(self, predicate, timeout: float = 5) -> dict:
        for message in self.backlog:
            if predicate(message):
                self.backlog.remove(message)
                return message
        async with asyncio.timeout(timeout):
            while True:
                message = await self.recv(timeout)
                if predicate(message):
                    return message
                self.backlog.append(message)

    async def state(self, **expected) -> dict:
        return await self.until(lambda m: m["type"] == "state" and all(m.get(k) == v for k, v in expected.items()))

    async def error(self) -> dict:
        return await self.until(lambda m: m["type"] == "error")


class Sockets:
    """What a test opens without `async with` (several players, a host held across steps): each is closed when
    the test ends, passed or failed. The `sockets` fixture (tests/conftest.py)."""

    def __init__(self) -> None:
        self.opened: list[Communicator] = []

    def own(self, comm: Communicator) -> Communicator:
        comm.owned = True
        self.opened.append(comm)
        return comm

    def communicator(self, application, path: str, *, headers: list | None = None, ip: str | None = None):
        """A bare communicator (to send raw ASGI events or read the handshake), not yet connected."""
        comm = self.own(Communicator(application, path, headers=headers))
        if ip is not None:
            comm.scope["client"] = [ip, 50000]
        return comm

    async def open(self, client: Client) -> Client:
        """`client` connected (any Client subclass)."""
        self.own(client.comm)
        return await client.__aenter__()

    async def join(self, code: str, nickname: str) -> tuple[Client, dict]:
        """A connected player: the client and its `joined` frame (with the token)."""
        client = await self.open(Client(code))
        await client.send(type="join", nickname=nickname)
        joined = await client.until(lambda m: m["type"] == "joined")
        return client, joined

    async def host(self, code: str, token: str, *, kind: type[Client] = Client, **expected) -> Client:
        """The host-connect sequence: a socket on the room (a `kind` client), the host (or co-host) token sent,
        and the first snapshot read (`client.snapshot`), one with `expected` (a lobby's when nothing is said)."""
        client = await self.open(kind(code))
        await client.send(type="host", token=token)
        client.snapshot = await client.state(**(expected or {"phase": "lobby"}))
        return client

    async def close(self) -> None:
        opened, self.opened = self.opened, []
        errors = []
        for comm in opened:
            if comm.started and not comm.future.done():
                try:
                    await comm.disconnect()
                except Exception as error:  # close the rest, then say what failed
                    errors.append(error)
        if errors:
            raise errors[0]


@contextlib.asynccontextmanager
async def server_lifespan():
    """config.asgi's lifespan on this test's event loop, as uvicorn runs it around a server's life: started on
    entry (the game clock ticks from then on), shut down on exit."""
    lifespan = ApplicationCommunicator(application, {"type": "lifespan", "asgi": {"version": "3.0"}})
    await lifespan.send_input({"type": "lifespan.startup"})
    assert (await lifespan.receive_output(5))["type"] == "lifespan.startup.complete"
    try:
        yield
    finally:
        await lifespan.send_input({"type": "lifespan.shutdown"})
        assert (await lifespan.receive_output(5))["type"] == "lifespan.shutdown.complete"
        await lifespan.wait(5)
