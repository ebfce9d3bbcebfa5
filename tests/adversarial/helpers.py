"""A WebSocket client for adversarial tests: sends anything (raw text, binary, any JSON), from any client IP."""

from tests.support.communicator import Client as BaseClient
from tests.support.communicator import Sockets

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


class Client(BaseClient):
    def __init__(self, code: str, *, ip: str = "203.0.113.7", headers: list | None = None):
        super().__init__(code, ip=ip, headers=headers)

    async def send_raw(self, *, text: str | None = None, data: bytes | None = None):
        event = {"type": "websocket.receive"}
        if text is not None:
            event["text"] = text
        else:
            event["bytes"] = data
        await self.comm.send_input(event)

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


async def joined_client(sockets: Sockets, code: str, nickname: str, **kwargs) -> tuple[Client, dict]:
    """A connected player, closed by the `sockets` fixture when the test ends."""
    client = await sockets.open(Client(code, **kwargs))
    joined = await client.join(nickname)
    assert joined["type"] == "joined", joined
    return client, joined
