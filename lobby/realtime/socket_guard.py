"""What a WebSocket consumer may send, and when, kept by the socket itself; and a clean refusal when the channel
layer's shard a socket needs is away.

ASGI allows a `websocket.send` only between `websocket.accept` and the first `websocket.close`, and a consumer
has many senders that do not know of each other: its own frames, the room's fan-out, the heal after a layer
outage, the rebalancer closing it. A frame after the close (a removed player's last event, a heal reaching a socket
the rebalancer just closed) was the server's "Unexpected ASGI message 'websocket.send', after sending
'websocket.close'", and one before the accept its "Expected 'websocket.accept' … got 'websocket.send'". Here the
socket drops such a frame: nobody could read it.

A socket's own channel, and its room's group, live on one of the layer's Redis shards. If that shard is away, the
consumer's first subscription fails before the handshake is answered, which the server turned into an HTTP 500
with a traceback. Now the socket is accepted, told in a frame (with `retry_after`), and closed with 1013 ("try
again later"): the page backs off and comes back, with a new channel that may well live on a shard that answers,
and the host stays in service for every socket that does not need the dead shard.
"""

import json
import logging
import traceback
from contextlib import suppress

import redis.exceptions
from django.utils import translation
from django.utils.translation import gettext as _
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from websockets.exceptions import InvalidState

from core.i18n import language_from_scope

logger = logging.getLogger(__name__)

UNREACHABLE_CLOSE_CODE = 1013  # "try again later": the page backs off (static/js/live.js)
UNREACHABLE_RETRY_SECONDS = 2
# A shard that refuses or drops the connection, or does not answer in time. uvicorn's ClientDisconnected is an
# OSError too: a phone gone mid-send ends its consumer here, quietly.
LAYER_ERRORS = (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError, OSError)
# Races of redis-py's on a shard dying or coming back, each an error that is the layer's trouble only with its words
# (and, where the words could come from anywhere, only when raised inside redis-py or channels_redis); any other
# such error is a defect and is raised. One entry each: (type, words, raised in the layer's client only).
LAYER_RACES = (
    # A shard coming back: the reconnect can leave two coroutines reading one connection (seen through
    # channels_redis as a handshake's HTTP 500).
    (RuntimeError, "called while another coroutine is already waiting", False),
    # A shard dying while a subscribe is being written: uvloop refuses the write on the connection it closed (seen as
    # a 1011 and "Exception in ASGI application").
    (RuntimeError, "the handler is closed", True),
    # The same race a moment later: another coroutine on the connection met the dead shard and disconnected it, and
    # the write reaches for its streams: "'NoneType' object has no attribute 'writelines'".
    (AttributeError, "'NoneType' object has no attribute", True),
)
LAYER_RACE_TYPES = tuple({kind for kind, _words, _inside in LAYER_RACES})


def is_layer_trouble(error: BaseException) -> bool:
    """Whether an error out of a consumer means its channel layer shard could not be reached."""
    if isinstance(error, LAYER_ERRORS):
        return True
    text = str(error)
    return any(
        isinstance(error, kind) and words in text and (not inside or _raised_in_redis(error))
        for kind, words, inside in LAYER_RACES
    )


def _raised_in_redis(error: BaseException) -> bool:
    """Whether the error was raised inside the channel layer's Redis client (redis-py or channels_redis)."""
    return any(
        frame.f_globals.get("__name__", "").startswith(("redis.", "channels_redis."))
        for frame, _line in traceback.walk_tb(error.__traceback__)
    )


class SocketState:
    """One socket's place in the ASGI handshake, and a `send` that keeps to it."""

    def __init__(self, send) -> None:
        self._send = send
        self.connected = False  # websocket.connect received
        self.accepted = False
        self.closed = False  # closed by us, or by the client (websocket.disconnect received)
        self.dropped = 0
        # uvicorn's sans-I/O connection when `send` is its own (config/serve.py runs it): see `send_text_now`.
        connection = getattr(send, "__self__", None)
        direct = type(connection) is WebSocketsSansIOProtocol and send.__func__ is WebSocketsSansIOProtocol.send
        self._connection = connection if direct else None

    def send_text_now(self, text: str) -> bool:
        """Write a text frame at once, without an await, if the connection can take it now: accepted and open, and
        its buffer below the high-water mark. That is what uvicorn's own `send` does then, less the coroutines a
        frame passes through on its way there, which a fan-out paid once per socket (issue 47). False: nothing was
        written, and the caller awaits `send` (which waits for a full buffer, or drops or raises as it does)."""
        connection = self._connection
        if connection is None or not self.accepted or self.closed:
            return False
        if (
            not connection.writable.is_set()
            or connection.disconnected
            or not connection.handshake_complete
            or connection.close_sent
            or connection.initial_response is not None
        ):
            return False
        try:
            connection.conn.send_text(text.encode())
        except InvalidState:
            return False  # closing: `send` says so as uvicorn does (ClientDisconnected)
        connection.transport.write(b"".join(connection.conn.data_to_send()))
        return True

    async def send(self, message: dict) -> None:
        kind = message["type"]
        if kind == "websocket.accept":
            if self.accepted or self.closed:
                return
            self.accepted = True
        elif kind == "websocket.send":
            if not self.accepted or self.closed:
                self.dropped += 1
                return
        elif kind == "websocket.close":
            if self.closed:
                return
            self.closed = True
        await self._send(message)


class GuardedSocket:
    """Mixin for a Channels WebSocket consumer (before AsyncWebsocketConsumer in its bases)."""

    socket: SocketState

    async def __call__(self, scope, receive, send):
        state = self.socket = SocketState(send)

        async def receiving():
            message = await receive()
            if message["type"] == "websocket.connect":
                state.connected = True
            elif message["type"] == "websocket.disconnect":
                state.closed = True
            return message

        try:
            await super().__call__(scope, receiving, state.send)
        except (*LAYER_ERRORS, *LAYER_RACE_TYPES) as error:
            if not is_layer_trouble(error):
                raise
            if state.closed:
                return  # the phone left, or the socket was closed already: nobody to tell
            logger.warning(
                "closing a socket (1013): the channel layer is unreachable (%s: %s)", type(error).__name__, error
            )
            await self._refuse_unreachable(scope, receiving)

    async def _refuse_unreachable(self, scope, receiving) -> None:
        state = self.socket
        with suppress(*LAYER_ERRORS):
            if not state.connected and (await receiving())["type"] != "websocket.connect":
                return
            await state.send({"type": "websocket.accept"})
            with translation.override(language_from_scope(scope)):
                frame = {
                    "type": "error",
                    "code": "unavailable",
                    "message": _("The game's server is having trouble. Try again."),
                    "retry_after": UNREACHABLE_RETRY_SECONDS,
                }
            await state.send({"type": "websocket.send", "text": json.dumps(frame)})
            await state.send({"type": "websocket.close", "code": UNREACHABLE_CLOSE_CODE})
        if getattr(self, "counted", False) or getattr(self, "join_deadline", None) is not None:
            # The consumer got as far as its connect: let it forget the socket (its leave may need the dead shard).
            with suppress(Exception):
                await self.disconnect(UNREACHABLE_CLOSE_CODE)
