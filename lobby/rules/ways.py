"""Ways to play: the rules a host sets on a room, each one entry of one table.

An entry says what it stores (its fields on `Room`, read with the room's picture row), what it adds to every
reader's picture (`picture`, from that row), what the host sets in the lobby (`setting`: the message, its field,
the value's check, what refuses it for a room and the words when the game has started), what it adds from the
stored rows beyond the room's own (`board`, a reader in lobby/reads/ named by its dotted path: the teams' board),
how long the question's clock waits with the options shown (`clock_waits`: team talk) and how it scores
(`speed_bonus`: whether a right answer still earns more the sooner it comes). The picture's way-to-play part is
assembled from the entries (`picture`, `board_picture`, `clock_waits`), the socket's lobby settings are made from
them (lobby/realtime/messages.py), the lobby setter is one service for all (`services.room_way_set`), and scoring
asks `speed_bonus(room)`.

A new way to play is an entry here and its field on `Room` (with its migration); its words translated, and the
host's control on the page if a person sets it there.
"""

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

from django.conf import settings
from django.utils.module_loading import import_string
from django.utils.translation import gettext_lazy as _

from lobby.exceptions import BadMessage, NotNow
from lobby.rules.teams import MAX_TEAM_TALK, TeamsMode


@dataclass(frozen=True)
class Setting:
    """What the host sets in the lobby, over the socket: `{"type": message, key: value}`."""

    message: str
    key: str
    clean: Callable[[Any], Any]  # the value to store, or a GameError with words for the host
    started: Any  # the refusal once the game has started: a game must not change how it plays halfway
    field: str | None = None  # the Room field it sets: the way's first stored field unless it says
    refuses: Callable[[Any], Any] | None = None  # words refusing it for this room (its locked row), or None


@dataclass(frozen=True)
class Way:
    name: str
    stores: dict[str, type]  # its fields on Room (round__… on its round), and their types as the picture reads them
    picture: Callable[[dict], dict]  # what it adds to every reader's picture, from the room's row
    setting: Setting | None = None
    speed_bonus: Callable[[Any], bool] | None = None  # False: a right answer scores the same at any moment
    # What it adds to the picture from the stored rows beyond the room's own (a module of lobby/reads/, named by
    # its dotted path as the rules cannot import the reads): f(room, players, voided) -> (its part of the
    # picture, player id -> that player's line in it, e.g. their team and place).
    board: str | None = None
    # Seconds the question's clock waits with the options shown, after the moment to read (team talk).
    clock_waits: Callable[[dict], int] | None = None


def _boolean(missing) -> Callable[[Any], bool]:
    def clean(value):
        if not isinstance(value, bool):  # bool("false") is True: only a real boolean will do
            raise BadMessage(missing)
        return value

    return clean


def _reading_seconds(value) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise BadMessage(_("Say seconds: a whole number from 0 to 10."))
    return reading_seconds_clean(value)


def reading_seconds_clean(value) -> int:
    """A moment to read, 0 to ROOM_MAX_READING seconds (also the create form's and the service's check)."""
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= settings.ROOM_MAX_READING:
        raise NotNow(_("The time to read must be 0 to %(max)s seconds.") % {"max": settings.ROOM_MAX_READING})
    return value


def _team_talk_seconds(value) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise BadMessage(_("Say seconds: a whole number from 0 to 30."))
    return team_talk_clean(value)


def team_talk_clean(value) -> int:
    """Team talk, 0 to MAX_TEAM_TALK seconds (also the create form's and the service's check)."""
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= MAX_TEAM_TALK:
        raise NotNow(_("Team talk must be 0 to %(max)s seconds.") % {"max": MAX_TEAM_TALK})
    return value


def _written_live(room: dict) -> dict:
    """A round still being written: `question_count` is how many are ready; `waiting`, the leaderboard waits for
    the next one; `end_note`, why the game ended early ("short", "timeout"); `planned_count`, how many the round
    will have while it is written (what "Question 1 of 6" counts)."""
    if not room["written_live"]:
        return {}
    writing = room["round__writing"]
    planned = max(room["round__expected_count"] or 0, room["question_count"]) if writing else room["question_count"]
    return {
        "writing": writing,
        "waiting": room["waiting_since"] is not None,
        "end_note": room["end_note"],
        "planned_count": planned,
    }


def _teams(room: dict) -> dict:
    """The mode and team talk's seconds; the board itself (names, sizes, scores) comes from the stored answers
    (its `board`, lobby/reads/team_board.py, with each player's place in their team)."""
    if room["teams_mode"] == TeamsMode.OFF:
        return {}
    return {"teams_mode": room["teams_mode"], "team_talk_seconds": room["team_talk_seconds"]}


WAYS: tuple[Way, ...] = (
    Way(
        "no_speed_bonus",
        {"no_speed_bonus": bool},
        lambda room: {"no_speed_bonus": room["no_speed_bonus"]},
        Setting(
            "speed_bonus",
            "no_speed_bonus",
            _boolean(_("Say no_speed_bonus: true or false.")),
            _("The speed bonus can only be changed before the game starts."),
        ),
        speed_bonus=lambda room: not room.no_speed_bonus,
    ),
    Way(
        "accuracy_only",
        {"accuracy_only": bool},
        lambda room: {"accuracy_only": room["accuracy_only"]},
        Setting(
            "accuracy_only",
            "accuracy_only",
            _boolean(_("Say accuracy_only: true or false.")),
            _("Accuracy only can only be changed before the game starts."),
        ),
        speed_bonus=lambda room: not room.accuracy_only,
    ),
    Way(
        "reading_seconds",
        {"reading_seconds": int},
        lambda room: {"reading_seconds": room["reading_seconds"]},
        Setting(
            "reading", "seconds", _reading_seconds, _("The time to read can only be changed before the game starts.")
        ),
    ),
    # Set at creation (teams, their names: lobby/services/teams.py); team talk also in the lobby, with teams only.
    Way(
        "teams",
        {"teams_mode": str, "team_talk_seconds": int},
        _teams,
        Setting(
            "team_talk",
            "seconds",
            _team_talk_seconds,
            _("Team talk can only be changed before the game starts."),
            field="team_talk_seconds",
            refuses=lambda room: _("Team talk is for games with teams.") if room.teams_mode == TeamsMode.OFF else None,
        ),
        board="lobby.reads.team_board.picture_part",
        clock_waits=lambda room: room["team_talk_seconds"] if room["teams_mode"] != TeamsMode.OFF else 0,
    ),
    # A room made from a round still being written (set at creation from the round).
    Way(
        "written_live",
        {
            "written_live": bool,
            "round__writing": bool,
            "round__expected_count": int,
            "waiting_since": object,
            "end_note": str,
        },
        _written_live,
    ),
)

BY_NAME = {way.name: way for way in WAYS}
BY_MESSAGE = {way.setting.message: way for way in WAYS if way.setting is not None}


def picture(room: dict) -> dict:
    """The ways to play's part of every reader's picture, from the room's row."""
    part: dict = {}
    for way in WAYS:
        part.update(way.picture(room))
    return part


@cache
def _reader(path: str) -> Callable:
    return import_string(path)


def board_picture(room: dict, players: list[tuple], voided: list[int]) -> tuple[dict, dict[int, Any]]:
    """What the ways add to the picture from the stored rows (their `board`), and each player's line in it."""
    part: dict = {}
    lines: dict[int, Any] = {}
    for way in WAYS:
        if way.board is None:
            continue
        added, theirs = _reader(way.board)(room, players, voided)
        part.update(added)
        lines.update(theirs)
    return part, lines


def clock_waits(room: dict) -> int:
    """Seconds a question's clock waits with its options shown, after the moment to read."""
    return sum(way.clock_waits(room) for way in WAYS if way.clock_waits is not None)


def setting_field(way: Way) -> str:
    """The Room field a way's lobby setting sets."""
    return way.setting.field or next(iter(way.stores))


def stored_fields() -> dict[str, type]:
    """Every way's fields, for the picture's row."""
    return {name: kind for way in WAYS for name, kind in way.stores.items()}


def speed_bonus(room) -> bool:
    """Whether a right answer in this room earns more the sooner it comes: unless a way to play takes it away."""
    return all(way.speed_bonus(room) for way in WAYS if way.speed_bonus is not None)
