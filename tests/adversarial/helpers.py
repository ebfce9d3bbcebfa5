"""A WebSocket client for adversarial tests: sends anything (raw text, binary, any JSON), from any client IP."""

import asyncio
import json

from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator

from lobby.routing import websocket_urlpatterns

app = URLRouter(websocket_urlpatterns)

# Every error code a client may see; anything else (or a traceback in a message) is a bug.
KNOWN_ERROR_CODES = {
    "bad_message",
    "unknown_type",
    "too_large",
    "rate_limited",
    "void_refused",
    "game_error",
    "room_not_found",
    "room_full",
    "room_locked",
    "game_over",
    "nickname_invalid",
    "nickname_taken",
    "bad_token",
    "removed",
    "not_now",
    "answer_refused",
    "too_late",
    "already_answered",
    "already_reported",
}


class Client:
    def __init__(self, code: str, *, ip: str = "203.0.113.7", headers: list | None = None):
        self.comm = WebsocketCommunicator(app, f"/ws/room/{code}/", headers=headers)
        # The communicator builds no client address; the router reads the scope only once the app runs.
        self.comm.scope["client"] = [ip, 50000]
        self.backlog: list[dict] = []
        self.closed: int | None = None

    async def __aenter__(self):
        connected, _ = await self.comm.connect()
        assert connected
        return self

    async def __aexit__(self, *exc):
        await self.comm.disconnect()

    async def send(self, **message):
        await self.comm.send_to(text_data=json.dumps(message))

    async def send_raw(self, *, text: str | None = None, data: bytes | None = None):
        event = {"type": "websocket.receive"}
        if text is not None:
            event["text"] = text
        else:
            event["bytes"] = data
        await self.comm.send_input(event)

    async def recv(self, timeout: float = 3) -> dict:
        output = await self.comm.receive_output(timeout)
        if output["type"] == "websocket.close":
            self.closed = output.get("code", 1000)
            return {"type": "closed", "code": self.closed}
        return json.loads(output["text"])

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
        return await self.until(lambda m: m["type"] in ("error", "closed"))

    async def exchange(self, *, text: str | None = None, data: bytes | None = None) -> list[dict]:
        """Send one frame, then a ping; return every frame that came back before the pong."""
        await self.send_raw(text=text, data=data)
        await self.send(type="ping")
        replies = []
        while True:
            message = await self.recv()
            if message["type"] == "pong":
                return replies
            replies.append(message)
            if message["type"] == "closed":
                return replies

    async def join(self, nickname: str) -> dict:
        await self.send(type="join", nickname=nickname)
        return await self.until(lambda m: m["type"] in ("joined", "error"))


async def joined_client(code: str, nickname: str, **kwargs) -> tuple[Client, dict]:
    client = await Client(code, **kwargs).__aenter__()
    joined = await client.join(nickname)
    assert joined["type"] == "joined", joined
    return client, joined
