"""What a client may send the room's socket: one entry per message type, its role, its fields and what does it.

A message is checked, then done (as Zulip's actions split `check_*` from `do_*`): `Entry.check` says whether this
socket's role may send it and reads its fields into the service's arguments (a missing or mistyped field is a
`BadMessage` with the entry's own words, before anything runs); then either a service runs on the database thread
with the socket's room (and player) added, and the entry's reply, if any, goes back; or, for the messages that
change the connection itself (joining, resuming, hosting, an answer through the batch, a sync, a ping), the
consumer's method of that name runs with the checked fields (lobby/realtime/consumers.py).

A new message is a new entry here: its role, its fields, and a service in lobby/services/.
"""

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.utils.translation import gettext_lazy as _

from core.text import safe_payload
from lobby import services
from lobby.exceptions import BadMessage, GameError, NotNow, whole_field
from lobby.rules import ways
from lobby.rules.machine import Action
from lobby.services import review

# Who may send a message: the host, a player, a socket that has not said who it is yet, one that has, or anyone.
HOST, PLAYER, NEWCOMER, MEMBER, ANYONE = "host", "player", "newcomer", "member", "anyone"


# -- fields: each reads one key of the message into one argument, or refuses it -----------------------------


@dataclass(frozen=True)
class Whole:
    """A whole number (not a boolean); refused with `missing` otherwise."""

    key: str
    missing: Any

    def read(self, message: dict):
        return whole_field(message, self.key, self.missing)


@dataclass(frozen=True)
class Boolean:
    """A real boolean (bool("false") is True: only true or false will do); refused with `missing` otherwise."""

    key: str
    missing: Any

    def read(self, message: dict):
        value = message.get(self.key)
        if not isinstance(value, bool):
            raise BadMessage(self.missing)
        return value


@dataclass(frozen=True)
class Flag:
    """True only if the message says true; anything else is false."""

    key: str

    def read(self, message: dict):
        return message.get(self.key) is True


@dataclass(frozen=True)
class Maybe:
    """The value if it is of `kind`, else None: a hint the service may do without."""

    key: str
    kind: type

    def read(self, message: dict):
        value = message.get(self.key)
        return value if isinstance(value, self.kind) else None


@dataclass(frozen=True)
class Given:
    """The value as sent (or None): the service checks it and words its own refusal."""

    key: str

    def read(self, message: dict):
        return message.get(self.key)


@dataclass(frozen=True)
class Checked:
    """The value as its way to play checks it (lobby/rules/ways.py), refused in that way's words."""

    key: str
    clean: Callable[[Any], Any]

    def read(self, message: dict):
        return self.clean(message.get(self.key))


@dataclass(frozen=True)
class Answer:
    """An answer's given part, by its kind (an option, options, a number, a text, an order, a point)."""

    def read(self, message: dict):
        return services.answer_given(message)


# -- the entries ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Entry:
    """One message type: who may send it, its fields (argument name -> field), and either a service run on the
    database thread with the socket's own arguments added (`socket`: its room, a player's id), answered by
    `reply(message, result)` when there is one, or the name of the consumer's method that runs it."""

    role: str
    fields: dict[str, Any] = field(default_factory=dict)
    service: Callable | None = None
    reply: Callable[[dict, Any], dict] | None = None
    consumer: str | None = None
    fixed: dict[str, Any] = field(default_factory=dict)  # arguments the entry itself gives its service
    socket: tuple[str, ...] = ("room_id",)  # the socket's own arguments to its service: its room, a player's id

    def check(self, role: str | None, message: dict) -> dict:
        """The service's arguments read from the message, if a socket of `role` may send it; else GameError."""
        role_check(self.role, role)
        return {**self.fixed, **{name: reader.read(message) for name, reader in self.fields.items()}}


def role_check(needed: str, role: str | None) -> None:
    """GameError unless a socket of `role` (None until it has said who it is) may send a message for `needed`."""
    if needed == HOST and role != HOST:
        raise GameError(_("Only the host can do that."))
    if needed == PLAYER and role != PLAYER:
        raise GameError(_("Join the game first."))
    if needed == NEWCOMER and role is not None:
        raise NotNow(_("You are already in this game."))
    if needed == MEMBER and role is None:
        raise NotNow(_("Join the game first."))


def host_act(*, room_id: int, action: Action, expected_phase: str | None, expected_index: int | None):
    """Start, next or close; the phase and index the host's screen showed, if it says, guard a double click."""
    return services.game_act(
        room_id=room_id,
        action=action,
        expected_phase=expected_phase,
        expected_index=expected_index if expected_phase is not None else None,
    )


HOST_ACT_FIELDS = {"expected_phase": Maybe("phase", str), "expected_index": Maybe("index", int)}


MESSAGES: dict[str, Entry] = {
    # The connection's own: who this socket is, an answer through the process's batch, a sync, a ping.
    "join": Entry(
        NEWCOMER,
        {
            "nickname": Given("nickname"),
            "asks_more_time": Flag("more_time"),
            "team": Given("team"),
            "previous": Given("previous"),  # the token this phone last held in the room: blocked or not
        },
        consumer="join",
    ),
    "resume": Entry(ANYONE, {"token": Given("token")}, consumer="resume"),
    "host": Entry(ANYONE, {"token": Given("token")}, consumer="host"),
    "answer": Entry(PLAYER, {"question_index": Given("question"), "given": Answer()}, consumer="answer"),
    "sync": Entry(MEMBER, {"seq": Given("seq")}, consumer="sync"),
    "ping": Entry(ANYONE, consumer="ping"),
    # A player's.
    "report": Entry(
        PLAYER,
        {"question_index": Given("question"), "text": Given("text")},
        services.report_create,
        reply=lambda message, _result: {"type": "reported", "question": message.get("question")},
        socket=("player_id",),
    ),
    # A player of a room with named teams moves to another of its teams, in the lobby.
    "team": Entry(
        PLAYER,
        {"team_id": Whole("team", _("Say which team: its number."))},
        services.player_team_set,
        socket=("room_id", "player_id"),
    ),
    # The host's: the game's progress.
    "start": Entry(HOST, HOST_ACT_FIELDS, host_act, fixed={"action": Action.START}),
    "next": Entry(HOST, HOST_ACT_FIELDS, host_act, fixed={"action": Action.NEXT}),
    "close": Entry(HOST, HOST_ACT_FIELDS, host_act, fixed={"action": Action.CLOSE}),
    # The host's: players.
    "remove": Entry(
        HOST,
        {"player_id": Whole("player", _("Say which player to remove.")), "block": Flag("block")},
        services.player_remove,
    ),
    # {"player": id, "percent": 100 | 150 | 200}
    "extra_time": Entry(
        HOST,
        {"player_id": Whole("player", _("Say which player gets extra time.")), "time_percent": Given("percent")},
        services.player_time_set,
    ),
    # Declines a player's "I need more time".
    "decline_time": Entry(
        HOST,
        {"player_id": Whole("player", _("Say whose request to decline."))},
        services.player_time_request_decline,
    ),
    # The host's: questions. A word of an open question's cloud or a typed answer, in no later frame.
    "hide_word": Entry(HOST, {"word": Given("word")}, services.word_hide),
    # A played question out of this room's scores (points removed, leaderboard recomputed).
    "void": Entry(
        HOST,
        {"question_index": Whole("index", _("Say which question to void."))},
        review.question_void,
        fixed={"by_host": True},
    ),
    # The host's: the room, in the lobby.
    "lock": Entry(HOST, {"locked": Boolean("locked", _("Say locked: true or false."))}, services.room_set_locked),
}

# The ways to play the host sets in the lobby (the speed bonus, accuracy only, a moment to read, team talk): one
# message each, made from its entry (lobby/rules/ways.py).
MESSAGES |= {
    way.setting.message: Entry(
        HOST, {"value": Checked(way.setting.key, way.setting.clean)}, services.room_way_set, fixed={"way": way.name}
    )
    for way in ways.WAYS
    if way.setting is not None
}


class FrameRefused(GameError):
    """A frame that is no message of the table: its error code, and words for the client."""

    def __init__(self, code: str, message) -> None:
        self.code = code
        super().__init__(message)


def read_frame(text_data: str | None, bytes_data: bytes | None) -> tuple[dict, Entry]:
    """A client's frame as a message and its entry; FrameRefused when it is not JSON text of a known type."""
    if bytes_data is not None or text_data is None:
        raise FrameRefused("bad_message", _("Send JSON text frames."))
    # surrogatepass: a lone surrogate must be measured, not crash the size check.
    if len(text_data.encode("utf-8", "surrogatepass")) > settings.WS_MAX_MESSAGE_BYTES:
        raise FrameRefused("too_large", _("That message is too large."))
    try:
        message = json.loads(text_data)
    except (ValueError, RecursionError):  # RecursionError: "[[[[…" nested thousands deep
        raise FrameRefused("bad_message", _("That message is not valid JSON.")) from None
    if not isinstance(message, dict) or not isinstance(message.get("type"), str):
        raise FrameRefused("bad_message", _("A message needs a type."))
    # Every text in it made storable here, once, whatever reads it (core/text.py).
    message = safe_payload(message)
    entry = MESSAGES.get(message["type"])
    if entry is None:
        raise FrameRefused("unknown_type", _("Unknown message type."))
    return message, entry
