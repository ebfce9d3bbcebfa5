"""Rooms and their codes, the host's and co-hosts' tokens, and the room's own settings (lock, speed bonus)."""

import secrets
from dataclasses import dataclass

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils.translation import gettext as _

from lobby import events
from lobby.exceptions import (
    BadToken,
    NotNow,
    RoomNotFound,
)
from lobby.models import Room
from lobby.rules import ways
from lobby.rules.machine import Phase
from lobby.services.common import bump
from lobby.services.teams import teams_create, teams_settings_clean
from lobby.tokens import cohost_key, host_token, read_cohost_key, read_host_token
from quiz.models import Round

CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I
CODE_LENGTH = 6


def normalize_code(raw: object) -> str:
    if not isinstance(raw, str):
        return ""
    return "".join(raw.split()).upper()[:CODE_LENGTH]


def _new_code() -> str:
    return "".join(secrets.choice(CODE_ALPHABET) for _position in range(CODE_LENGTH))


@dataclass(frozen=True)
class CreatedRoom:
    room: Room
    host_token: str


def room_create(
    *,
    round_id: int,
    timer_seconds: int,
    option_seed: str | None = None,
    owner_key: str = "",
    no_speed_bonus: bool = False,
    reading_seconds: int = 0,
    teams_mode: str = "off",
    team_names: object = "",
    team_count: object = 0,
    team_talk_seconds: object = 0,
    friendly_names: bool = False,
) -> CreatedRoom:
    """A room in the lobby. Its options are shown in an order drawn from `option_seed`, a fresh secret unless
    given ("" keeps the round's order, as rooms from before shuffling do). `owner_key` files it among that
    host's past games. With `no_speed_bonus` a right answer scores the same at any moment. `reading_seconds`
    (0-10) shows each question alone that long before its options appear and its clock starts. With teams
    (`teams_mode` auto: `team_count` colour teams; named: `team_names`, one a line) the room's teams are made with
    it, and `team_talk_seconds` (0-30) holds the clock after the options appear (lobby/services/teams.py). With
    `friendly_names` each player gets a generated "adjective animal" name in their language instead of typing one
    (lobby/rules/friendly_names.py)."""
    if option_seed is None:
        option_seed = secrets.token_hex(16)
    timer_seconds = int(timer_seconds)
    if not settings.ROOM_MIN_TIMER <= timer_seconds <= settings.ROOM_MAX_TIMER:
        raise NotNow(f"The timer must be {settings.ROOM_MIN_TIMER} to {settings.ROOM_MAX_TIMER} seconds.")
    reading_seconds = ways.reading_seconds_clean(reading_seconds)
    teams_mode, names, team_talk_seconds = teams_settings_clean(
        teams_mode=teams_mode, team_names=team_names, team_count=team_count, team_talk_seconds=team_talk_seconds
    )
    round_ = Round.objects.get(pk=round_id)
    count = round_.entries.count()
    if count == 0:
        raise NotNow(_("That round has no questions."))
    for _attempt in range(10):
        try:
            with transaction.atomic():
                room = Room.objects.create(
                    code=_new_code(),
                    round=round_,
                    timer_seconds=timer_seconds,
                    question_count=count,
                    option_seed=option_seed,
                    owner_key=owner_key,
                    no_speed_bonus=bool(no_speed_bonus),
                    reading_seconds=reading_seconds,
                    teams_mode=teams_mode,
                    team_talk_seconds=team_talk_seconds,
                    friendly_names=friendly_names is True,
                    # Its questions are still being written and checked: the room plays them as they are ready.
                    written_live=round_.writing,
                )
                teams_create(room=room, names=names)
            break
        except IntegrityError:
            continue
    else:  # pragma: no cover - 10 collisions in a space of 32^6
        raise NotNow(_("Could not find a free room code; try again."))
    return CreatedRoom(room=room, host_token=host_token(room_code=room.code))


def room_by_code(code: str) -> Room:
    try:
        return Room.objects.get(code=normalize_code(code))
    except Room.DoesNotExist:
        raise RoomNotFound() from None


def host_resume(*, token: object, code: str) -> Room:
    grant = read_host_token(token)
    if grant is None or grant.room_code != normalize_code(code):
        raise BadToken(_("Only the host of this game can do that."))
    room = room_by_code(code)
    if grant.cohost_generation is not None and grant.cohost_generation != room.cohost_generation:
        raise BadToken(_("The host replaced the co-host link: ask them for the new one."))
    return room


def host_token_for_owner(*, room: Room, owner_key: str) -> str:
    """The creator's host token for the browser of the host who owns the room (signed in elsewhere)."""
    if not owner_key or room.owner_key != owner_key:
        raise BadToken("Only the host of this game can do that.")
    return host_token(room_code=room.code)


def rooms_move(*, from_key: str, to_key: str, host_tokens: dict[str, str] | None = None) -> int:
    """A browser's games are filed under another owner key (a host who signs up or in): the rooms made under
    `from_key`, and rooms from before owner keys that this browser created (its creator host tokens)."""
    if not to_key or from_key == to_key:
        return 0
    codes = []
    for token in (host_tokens or {}).values():
        grant = read_host_token(token)
        if grant is not None and grant.cohost_generation is None:
            codes.append(grant.room_code)
    moved = Room.objects.filter(code__in=codes, owner_key="").update(owner_key=to_key)
    if from_key:
        moved += Room.objects.filter(owner_key=from_key).update(owner_key=to_key)
    return moved


def cohost_link_key(*, room: Room) -> str:
    """The secret of the room's current co-host link: whoever opens the link becomes a host of the room."""
    return cohost_key(room_code=room.code, generation=room.cohost_generation)


def cohost_join(*, key: object, code: str) -> str:
    """A browser opened the co-host link: the host token it keeps, valid until the link is replaced."""
    parsed = read_cohost_key(key)
    if parsed is None or parsed[0] != normalize_code(code):
        raise BadToken(_("That co-host link is not valid for this game."))
    room = room_by_code(code)
    if parsed[1] != room.cohost_generation:
        raise BadToken(_("That co-host link was replaced by a newer one."))
    return host_token(room_code=room.code, cohost_generation=room.cohost_generation)


def cohost_link_replace(*, room_id: int, token: str) -> str:
    """A new co-host link: the old one, and every browser it let in, stop hosting (the room's creator never).
    `token` is the host token of the browser asking; returns the one it keeps (a co-host's own is renewed)."""
    with transaction.atomic():
        Room.objects.filter(pk=room_id).update(cohost_generation=F("cohost_generation") + 1)
        room = Room.objects.get(pk=room_id)
        # Host screens already open through the old link are shut out now, not at their next reconnect.
        events.cohost_link_replaced(room_code=room.code, generation=room.cohost_generation)
    grant = read_host_token(token)
    if grant is not None and grant.cohost_generation is not None:
        return host_token(room_code=room.code, cohost_generation=room.cohost_generation)
    return token


def room_way_set(*, room_id: int, way: str, value) -> None:
    """A way to play set in the lobby (lobby/rules/ways.py): checked by its entry, and only before the game starts (a
    game must not change how it scores or plays halfway)."""
    entry = ways.BY_NAME[way]
    value = entry.setting.clean(value)
    field = ways.setting_field(entry)
    with transaction.atomic():
        if entry.setting.refuses is not None:
            refused = entry.setting.refuses(Room.objects.select_for_update().get(pk=room_id))
            if refused is not None:
                raise NotNow(refused)
        if not Room.objects.filter(pk=room_id, phase=Phase.LOBBY).update(**{field: value}):
            raise NotNow(entry.setting.started)
        bump(room_id)


def room_set_no_speed_bonus(*, room_id: int, no_speed_bonus: bool) -> None:
    room_way_set(room_id=room_id, way="no_speed_bonus", value=bool(no_speed_bonus))


def room_set_reading_seconds(*, room_id: int, reading_seconds: int) -> None:
    """Every question of a game gets the same moment to read."""
    room_way_set(room_id=room_id, way="reading_seconds", value=ways.reading_seconds_clean(reading_seconds))


def room_set_team_talk_seconds(*, room_id: int, team_talk_seconds: object) -> None:
    """The host changes the team talk in the lobby (a room with teams only), like the moment to read."""
    room_way_set(room_id=room_id, way="teams", value=ways.team_talk_clean(team_talk_seconds))


def room_set_locked(*, room_id: int, locked: bool) -> None:
    with transaction.atomic():
        Room.objects.filter(pk=room_id).update(locked=bool(locked))
        bump(room_id)
