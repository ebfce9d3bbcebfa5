"""The room's WebSocket: the connection's life (who it is, its room's frames, its limits, a database outage's
pause). A client's message is parsed, looked up in the table of messages (lobby/realtime/messages.py), checked
and done there; rules live in services."""

import asyncio
import json
import logging
import time

from channels.consumer import get_handler_name
from channels.exceptions import StopConsumer
from channels.generic.websocket import AsyncWebsocketConsumer
from django.conf import settings
from django.db import InterfaceError, OperationalError
from django.utils import timezone, translation
from django.utils.translation import gettext as _

from core import metrics
from core.i18n import language_from_scope
from lobby import events, services
from lobby.exceptions import GameError, PlayerRemoved
from lobby.reads import standings
from lobby.reads.selectors import host_frame, player_view, player_you, player_you_texts, room_picture, room_seq
from lobby.realtime import fanout, frames, game_db, heal, ratelimit, rebalance
from lobby.realtime.game_db import db
from lobby.realtime.idle import JoinDeadline
from lobby.realtime.messages import Entry, FrameRefused, read_frame
from lobby.realtime.own_channel import ChannelOnDemand
from lobby.realtime.socket_guard import GuardedSocket
from lobby.tokens import read_host_token

logger = logging.getLogger(__name__)

DB_RETRY_INTERVAL = 0.3
FLOOD_CLOSE_CODE = 4008  # an application code in the 4000s: the client flooded us (like 1008, policy violation)


class RoomConsumer(GuardedSocket, ChannelOnDemand, AsyncWebsocketConsumer):
    """One connection, host or player. Until it says who it is (join / resume / host) it gets nothing."""

    language: str | None = None  # its page's, read from the handshake on the first frame
    counted = False  # in the open sockets' metric (core/metrics.py)

    async def connect(self):
        self.code = services.normalize_code(self.scope["url_route"]["kwargs"]["code"])
        self.room_id: int | None = None
        self.role: str | None = None
        self.player_id: int | None = None
        self.cohost_generation: int | None = None  # a host let in by the co-host link of this generation
        self.answered: dict[int, int] = {}
        self.seq = -1
        self.client_ip = ratelimit.client_ip_from_scope(self.scope)
        self.budget = ratelimit.ConnectionBudget.from_settings()
        self.flooded = False
        await self.accept()
        metrics.socket_opened()
        self.counted = True
        self.join_deadline = JoinDeadline(self)

    async def disconnect(self, code):
        if self.counted:  # a connect that failed before it was accepted counted nothing
            self.counted = False
            metrics.socket_closed()
        self.join_deadline.cancel()
        heal.forget(self)
        rebalance.forget(self)
        if self.room_id is not None:
            await fanout.leave(self)
        if self.role == "host" and self.channel_name is not None:
            await self.channel_layer.group_discard(events.host_group(self.code), self.channel_name)

    async def websocket_disconnect(self, message):
        """Channels' own also closes stale database connections on its one shared sync thread: a room of 10,000
        ending queued 10,000 hops behind that one thread. The socket's database work runs on `db()`'s threads,
        which close their own stale connections (see `dispatch`)."""
        await self.disconnect(message["code"])
        raise StopConsumer()

    async def dispatch(self, message):
        """Channels' own dispatch first closes stale database connections on its one shared sync thread, for
        every frame and every group event. With 20 players a room, every fan-out queued behind that single
        thread (p95 fan-out 1–2 s at 50 rooms). Our handlers reach the database only through `db()`, whose
        threads close stale connections themselves, so the hop is skipped."""
        handler = getattr(self, get_handler_name(message), None)
        if handler is None:
            raise ValueError(f"No handler for message type {message['type']}")
        # Every frame this socket sends speaks its page's language (a phone's, whatever the host's screen speaks).
        if self.language is None:
            self.language = language_from_scope(self.scope)
        with translation.override(self.language):
            await handler(message)

    # -- frames in ----------------------------------------------------------------------------------------

    async def receive(self, text_data=None, bytes_data=None):
        if self.flooded:
            return
        verdict = self.budget.check(text_data)
        if verdict is ratelimit.Verdict.CLOSE:
            self.flooded = True
            logger.warning("closing a flooding connection to room %s from %s", self.code, self.client_ip)
            await self.send_error("rate_limited", _("Too many messages: this connection is closed."))
            return await self.close(code=FLOOD_CLOSE_CODE)
        if verdict is ratelimit.Verdict.DROP:
            return await self.send_error("rate_limited", _("Too many messages: slow down. That one was ignored."))
        try:
            message, entry = read_frame(text_data, bytes_data)
        except FrameRefused as refused:
            return await self.send_error(refused.code, str(refused))
        self.join_deadline.attempt(message["type"])
        self.received_at = timezone.now()  # an answer delayed by a database outage keeps its arrival time
        try:
            await self._handle(entry, message)
        finally:  # a socket still nobody (its join refused) gets a new window
            self.join_deadline.settled()

    async def _handle(self, entry, message) -> None:  # its game errors answered; retried while the database is away
        await through_database_outage(self, lambda: self._perform(entry, message), message["type"])

    async def _perform(self, entry: Entry, message: dict) -> None:
        """Checked, then done (lobby/realtime/messages.py): the role and the fields first, then its service on the
        database thread, or this socket's own method for a message that changes the connection."""
        arguments = entry.check(self.role, message)
        if entry.consumer is not None:
            return await getattr(self, f"on_{entry.consumer}")(message, **arguments)
        mine = {"room_id": self.room_id, "player_id": self.player_id}
        result = await db(entry.service)(**arguments, **{name: mine[name] for name in entry.socket})
        if entry.reply is not None:
            await self.send_json(entry.reply(message, result))

    # -- the messages that change the connection ------------------------------------------------------------

    async def on_join(self, message, **join):
        # A room with friendly names names its players in their own language.
        joined = await game_db.join(ip=self.client_ip, code=self.code, language=self.language, **join)
        # The phone holds its token before anything else can fail: a channel-layer shard away while the room's
        # subscription opens closes this socket (1013), and the page comes back with a resume. Told after, it came
        # back with a join its own nickname now refused, for ever.
        await self._send_joined(joined.token, joined.player)
        # A new player has no answer yet: nothing of their own to read back (a resume does).
        await self._enter(room_id=joined.player.room_id, role="player", player_id=joined.player.pk, fresh=True)
        # A burst of joins shares the process's reads: one picture new enough serves every joiner before it
        # (a fresh read per joiner was O(N) each, O(N^2) for a room filling up).
        picture = await standings.picture_at_least(self.room_id, self.code, joined.seq, load=db(room_picture))
        if self.player_id not in picture.standings.players:
            # A picture from before this join (the shared loads kept losing the race with later batches): never
            # tell a new player they were removed from a picture that predates them. Read their own.
            return await self._send_snapshot()
        await self.deliver(picture.snapshot, picture)

    async def on_resume(self, message, *, token):
        player = await db(services.player_resume)(token=token, code=self.code)
        await self._enter(room_id=player.room_id, role="player", player_id=player.pk)
        await self._send_joined(token, player)
        await self._send_snapshot()

    async def on_host(self, message, *, token):
        room = await db(services.host_resume)(token=token, code=self.code)
        self.cohost_generation = read_host_token(token).cohost_generation
        await self._enter(room_id=room.pk, role="host", player_id=None)
        await self.send_json({"type": "hosting", "code": room.code})
        await self._send_snapshot()

    async def on_answer(self, message, *, question_index, given):
        arrived = time.monotonic()
        ack = await game_db.answers.submit(
            services.AnswerIn(
                player_id=self.player_id, question_index=question_index, received_at=self.received_at, given=given
            )
        )
        self.answered[ack.question_index] = ack.option
        await self.send_json({"type": "answered", "question": ack.question_index, "option": ack.option})
        metrics.answer_acked(time.monotonic() - arrived)

    async def on_sync(self, message, *, seq):
        """A client that may have missed an event (a full channel, a restarted Redis) asks now and then;
        it gets a fresh snapshot only if the room has moved on since the one it holds."""
        current = await db(room_seq)(room_id=self.room_id)
        if not isinstance(seq, int) or seq < current:
            await self._send_snapshot()

    async def on_ping(self, message):
        await self.send_json({"type": "pong"})

    async def _send_joined(self, token, player):
        await self.send_json(
            {"type": "joined", "token": token, "player": {"id": player.pk, "nickname": player.nickname}}
        )

    async def _enter(self, *, room_id: int, role: str, player_id: int | None, fresh: bool = False) -> None:
        if self.room_id is None:
            # The room's events come from the process's one subscription (lobby/realtime/fanout.py).
            await fanout.join(self)
        if role == "host" and self.role != "host":
            # A host's screen is the one socket that takes a channel of its own (lobby/realtime/own_channel.py).
            await self.channel_layer.group_add(events.host_group(self.code), await self.own_channel())
            self.budget.as_host()
        self.room_id, self.role, self.player_id = room_id, role, player_id
        self.join_deadline.cancel()
        heal.track(self)
        rebalance.track(self)
        if player_id is not None and not fresh:
            view = await db(player_view)(player_id=player_id)
            if view["answered_index"] is not None:
                self.answered[view["answered_index"]] = view["option"]

    # -- frames out ---------------------------------------------------------------------------------------

    async def _send_snapshot(self):
        """The full picture for this reader (a join, a reconnect, a sync): read now, not taken from the cache."""
        picture = await db(room_picture)(room_id=self.room_id)
        standings.remember(self.room_id, picture)
        await self.deliver(picture.snapshot, picture)

    async def room_state(self, event):
        """A room event on this consumer's own channel: the host group's (a coalesced lobby change for the host
        screens alone). The room group's events reach it from its process's one subscription (lobby/realtime/fanout.py).
        A room event carries the common part only; this reader's part comes from the process's standings."""
        common = event["state"]
        if not self.wants(common):
            return
        try:
            picture = await standings.picture_for(event, load=db(room_picture))
        except Exception:
            # The database is away: this frame is skipped; the client's periodic sync brings the picture back.
            logger.warning("standings of room %s unavailable; an event was skipped", self.code, exc_info=True)
            return
        if picture.snapshot["seq"] < common["seq"]:
            # Still older than the event after every load: skipped (its standings could predate this reader's own
            # join and say "removed"); the client's periodic sync or the next event brings the picture.
            return
        if await self.room_event(common, picture) and isinstance(common.get("sent_at"), float):
            metrics.fanout_observed(time.time() - common["sent_at"])

    def wants(self, common: dict) -> bool:
        """Whether a room event is news to this reader: not before its own first picture (it follows at once),
        not a picture it already has (a coalesced join broadcast reaching the joiner after its own snapshot) or
        one overtaken by a newer one."""
        return self.seq >= 0 and common["seq"] > self.seq and self.room_id is not None

    def deliver_now(self, common: dict, picture) -> bool | None:
        """A fan-out's way for most of its sockets: this player's frame of a broadcast written at once, with no
        coroutine (a fan-out of 2,000 made two a socket). False: not wanted; True: written; None: the caller awaits
        `room_event`, which does all the rest (a host, a player no longer in the standings, a full buffer)."""
        if not self.wants(common):
            return False
        if self.role == "host" or not isinstance(common.get("sent_at"), float):
            return None
        text = frames.broadcast_text(common, picture.standings, self.player_id, self.answered, player_you_texts)
        if text is None or not self.socket.send_text_now(text):
            return None
        self.seq = common["seq"]
        return True

    async def room_event(self, common: dict, picture) -> bool:
        """A room event with a picture at least as new: this reader's frame, if it still wants it. True if sent."""
        if not self.wants(common):
            return False
        await self.deliver(common, picture)
        return True

    async def deliver(self, common: dict, picture) -> None:
        """Send this reader's frame of `picture` (the host's, or this player's own), unless it holds a newer one.
        Also the heal's way in after a channel-layer outage (lobby/realtime/heal.py)."""
        if common["seq"] < self.seq:
            return
        self.seq = common["seq"]
        if self.role == "host":
            return await self.send_json(host_frame(common, picture.standings))
        if isinstance(common.get("sent_at"), float):
            # A broadcast (or a heal's): every player's `you` is encoded once per process, this reader's looked up.
            text = frames.broadcast_text(common, picture.standings, self.player_id, self.answered, player_you_texts)
        else:  # this reader's own snapshot (a join, a reconnect, a sync), encoded whole
            you = player_you(common, picture.standings, player_id=self.player_id, answered=self.answered)
            text = None if you is None else frames.player_text(common, you)
        if text is None:
            # In this socket's language also when the heal calls in from outside a frame's handler.
            with translation.override(self.language or language_from_scope(self.scope)):
                await self.send_error("removed", _("The host removed you from this game."))
            return await self.close()
        if not self.socket.send_text_now(text):
            await self.send(text_data=text)

    async def room_answers(self, event):
        if self.role == "host":
            await self.send_json(
                {"type": "answers", **{key: event[key] for key in ("question_index", "answered_count")}}
            )

    async def room_cohost_replaced(self, event):
        if self.role == "host" and self.cohost_generation is not None and self.cohost_generation < event["generation"]:
            await self.send_error("bad_token", _("The host replaced the co-host link: ask them for the new one."))
            await self.close()

    async def send(self, text_data=None, bytes_data=None, close=False):
        """A text frame goes straight to the socket's guarded ASGI send (lobby/realtime/socket_guard.py): one
        coroutine fewer per frame than Channels' own send, which a fan-out pays once per socket (issue 47)."""
        if text_data is not None and not close:
            return await self.base_send({"type": "websocket.send", "text": text_data})
        return await super().send(text_data, bytes_data, close)

    async def send_json(self, content):
        await self.send(text_data=json.dumps(content))

    async def send_error(self, code, message):
        await self.send_json({"type": "error", "code": code, "message": message})


async def through_database_outage(socket: "RoomConsumer", perform, kind: str) -> None:
    """One message's work for a socket, its game errors answered to it; while the database is unreachable the
    game pauses (the socket is told once) and the work is retried every DB_RETRY_INTERVAL until it is back
    ("resumed") or DB_OUTAGE_RETRY_SECONDS have passed ("unavailable": the message was not applied)."""
    paused = False
    give_up = time.monotonic() + settings.DB_OUTAGE_RETRY_SECONDS
    while True:
        try:
            await perform()
        except GameError as error:
            await socket.send_error(error.code, str(error))
            if isinstance(error, PlayerRemoved):
                await socket.close()
        except (OperationalError, InterfaceError):
            if time.monotonic() > give_up:
                logger.warning("database still unreachable; a %s message to %s was not applied", kind, socket.code)
                return await socket.send_error("unavailable", _("The game's server is having trouble. Try again."))
            if not paused:
                paused = True
                await socket.send_error("paused", _("The game is paused: the server lost its database. Hold on…"))
            await asyncio.sleep(DB_RETRY_INTERVAL)
            continue
        if paused:
            await socket.send_json({"type": "resumed"})
        return
