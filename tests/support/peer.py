"""A WebSocket client (the `websockets` library) talking to a real server process."""

import asyncio
import json

from websockets.asyncio.client import connect


class Peer:
    """A WebSocket client on one server process, keeping every frame it was sent."""

    def __init__(self, base: str, code: str):
        self.url = f"{base}/ws/room/{code}/"
        self.origin = base.replace("ws://", "http://")
        self.backlog: list[dict] = []
        self.token: str | None = None
        self.host_token: str | None = None
        self.snapshot: dict | None = None
        self.sizes: list[int] = []  # of every frame received, in bytes

    async def open(self) -> "Peer":
        self.ws = await connect(self.url, origin=self.origin, open_timeout=5)
        return self

    async def open_as_host(self, token: str, **expected) -> "Peer":
        """The host-connect sequence on a server process: connected, the host token sent, and the first
        snapshot read (`self.snapshot`), the lobby's unless other fields are expected."""
        await self.open()
        await self.send(type="host", token=token)
        self.snapshot = await self.state(**(expected or {"phase": "lobby"}))
        return self

    async def reopen(self) -> "Peer":
        """Reconnect as the same person: a player with its token, the host with the host token."""
        await self.open()
        if self.token:
            await self.send(type="resume", token=self.token)
        elif self.host_token:
            await self.send(type="host", token=self.host_token)
        return self

    async def send(self, **message) -> None:
        if message.get("type") == "host":
            self.host_token = message.get("token")
        await self.ws.send(json.dumps(message))

    async def until(self, predicate, timeout: float = 10) -> dict:
        for message in self.backlog:
            if predicate(message):
                self.backlog.remove(message)
                return message
        async with asyncio.timeout(timeout):
            while True:
                text = await self.ws.recv()
                self.sizes.append(len(text.encode()) if isinstance(text, str) else len(text))
                message = json.loads(text)
                if message["type"] == "joined":
                    self.token = message["token"]
                if predicate(message):
                    return message
                self.backlog.append(message)

    async def state(self, timeout: float = 10, **expected) -> dict:
        return await self.until(
            lambda m: m["type"] == "state" and all(m.get(k) == v for k, v in expected.items()), timeout
        )

    async def close(self) -> None:
        await self.ws.close()
