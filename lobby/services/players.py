"""Players: joining (one or many at once), resuming, removal, and the extra time a host gives."""

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Count, F, Q
from django.utils.translation import gettext as _

from lobby import events
from lobby.exceptions import (
    BadToken,
    GameError,
    GameOver,
    NicknameTaken,
    NotNow,
    PlayerBlocked,
    PlayerRemoved,
    RoomFull,
    RoomLocked,
    RoomNotFound,
)
from lobby.models import Player, Room
from lobby.rules import machine
from lobby.rules.friendly_names import friendly_name
from lobby.rules.machine import Phase
from lobby.rules.nicknames import NICKNAME_MAX, clean_nickname
from lobby.services.answers import close_where_everyone_answered
from lobby.services.common import bump, closing_percent, question_timer_ms
from lobby.services.rooms import normalize_code
from lobby.services.teams import TeamChooser
from lobby.tokens import player_token, read_player_token


@dataclass(frozen=True)
class Joined:
    player: Player
    token: str
    seq: int = 0  # the room's seq with this player in it: any picture at least this new shows them


def player_join(
    *, code: str, nickname: object, asks_more_time: bool = False, team: object = None, language: str = "en"
) -> Joined:
    """A new player. `asks_more_time`: they ticked "I need more time"; the host confirms or declines it. `team`:
    the team picked in a room with named teams. `language`: their page's, for a generated friendly name."""
    result = players_join(
        [JoinIn(code=code, nickname=nickname, asks_more_time=asks_more_time, team=team, language=language)]
    )[0]
    if isinstance(result, GameError):
        raise result
    return result


@dataclass(frozen=True)
class JoinIn:
    code: str
    nickname: object
    asks_more_time: bool = False
    team: object = None  # a named room's team picked on joining (an auto room chooses for the player)
    language: str = "en"  # the phone's page language: a room with friendly names gives a name in it


def players_join(joins: Sequence[JoinIn]) -> list[Joined | GameError]:
    """Many new players in one transaction (the server groups the joins that arrive together, as it does
    answers): one result per join, in order, the player or the error that joiner should see. Per room the row
    is locked once, the players counted once, the nicknames looked up in one query, the new players inserted
    in one statement and the seq bumped once, so a room of 2,000 filling up is a few dozen transactions, not
    2,000 of them queued on one row lock. The lock keeps the count and the nicknames exact across processes.
    In a room with friendly names the nickname sent is not read: the player gets a generated one, in their
    language (lobby/rules/friendly_names.py)."""
    results: list[Joined | GameError | None] = [None] * len(joins)
    # (index, nickname and key, or the error cleaning it raised, more time, team, language)
    wanted: dict[str, list[tuple[int, tuple[str, str] | GameError, bool, object, str]]] = {}
    for i, join in enumerate(joins):
        try:
            cleaned: tuple[str, str] | GameError = clean_nickname(join.nickname)
        except GameError as error:
            cleaned = error
        wanted.setdefault(normalize_code(join.code), []).append(
            (i, cleaned, join.asks_more_time is True, join.team, join.language)
        )
    if wanted:
        with transaction.atomic():
            # In pk order, so two batches over the same rooms always lock them in one order.
            rooms = list(Room.objects.select_for_update().filter(code__in=list(wanted)).order_by("pk"))
            counts = dict(
                Player.objects.filter(room__in=rooms, removed=False)
                .values_list("room_id")
                .annotate(n=Count("pk"))
                .values_list("room_id", "n")
            )
            keys = {item[1][1] for items in wanted.values() for item in items if isinstance(item[1], tuple)}
            named = Q(nickname_key__in=keys)
            if friendly := [room.pk for room in rooms if room.friendly_names]:
                named |= Q(room_id__in=friendly)  # a generated name may be any name: every one in the room
            taken = set(
                Player.objects.filter(named, room__in=rooms, removed=False).values_list("room_id", "nickname_key")
            )
            new: list[tuple[int, Room, Player]] = []
            for room in rooms:
                count = counts.get(room.pk, 0)
                added: list[tuple[int, Player]] = []
                chooser = TeamChooser(room)
                in_room = {key for room_id, key in taken if room_id == room.pk} if room.friendly_names else set()
                for i, cleaned, more_time, picked, language in wanted.pop(room.code):
                    if room.friendly_names:
                        nickname = friendly_name(language, in_room)
                        cleaned = (nickname, nickname.casefold()[:NICKNAME_MAX])
                    if isinstance(cleaned, GameError):
                        results[i] = cleaned
                        continue
                    nickname, key = cleaned
                    if room.phase == Phase.FINISHED:
                        results[i] = GameOver()
                    elif room.locked:
                        results[i] = RoomLocked()
                    elif count + len(added) >= settings.ROOM_MAX_PLAYERS:
                        results[i] = RoomFull(
                            f"This game is full: {settings.ROOM_MAX_PLAYERS} players is the most a room holds."
                        )
                    elif (room.pk, key) in taken:
                        results[i] = NicknameTaken()
                    else:
                        try:
                            team_id = chooser.choose(picked)
                        except NotNow as error:
                            results[i] = error
                            continue
                        taken.add((room.pk, key))
                        in_room.add(key)
                        player = Player(
                            room=room, nickname=nickname, nickname_key=key, asks_more_time=more_time, team_id=team_id
                        )
                        added.append((i, player))
                if added:
                    Room.objects.filter(pk=room.pk).update(seq=F("seq") + 1)
                    events.room_changed(room_id=room.pk, coalesce=True)
                    new.extend((i, room, player) for i, player in added)
            Player.objects.bulk_create([player for _, _, player in new])
            for i, room, player in new:
                # The room's row was locked from the read to the bump: its seq is now exactly one more.
                token = player_token(room_code=room.code, player_id=player.pk)
                results[i] = Joined(player=player, token=token, seq=room.seq + 1)
        for items in wanted.values():  # codes no room has
            for i, cleaned, *_ in items:
                results[i] = cleaned if isinstance(cleaned, GameError) else RoomNotFound()
    return results


def player_resume(*, token: object, code: str) -> Player:
    parsed = read_player_token(token)
    if parsed is None or parsed[0] != normalize_code(code):
        raise BadToken()
    player = Player.objects.select_related("room").filter(pk=parsed[1], room__code=parsed[0]).first()
    if player is None:
        raise BadToken()
    if player.removed:
        raise PlayerRemoved()
    return player


def player_blocked_check(*, previous: object, code: str) -> None:
    """Refuse a join from a phone whose earlier place in this room the host removed and blocked: it sends the
    token it held there (`previous`), whatever nickname it now asks for."""
    parsed = read_player_token(previous) if previous else None
    if (
        parsed is not None
        and parsed[0] == normalize_code(code)
        and Player.objects.filter(pk=parsed[1], room__code=parsed[0], blocked=True).exists()
    ):
        raise PlayerBlocked()


def player_remove(*, room_id: int, player_id: int, block: bool = False) -> None:
    """Take a player out of the room; with `block`, their phone cannot join it again under another name."""
    with transaction.atomic():
        room = Room.objects.select_for_update().get(pk=room_id)
        before = closing_percent(room_id)
        updated = Player.objects.filter(pk=player_id, room_id=room_id, removed=False).update(
            removed=True, blocked=bool(block)
        )
        if updated:
            # The one with the most extra time has gone: the question closes at the new last deadline.
            _refit_deadline(room, before)
            bump(room_id)
    if updated:
        _close_if_everyone_answered(room_id=room_id)


# -- accessibility: extra time and no speed bonus ----------------------------------------------------------------


def player_time_set(*, room_id: int, player_id: int, time_percent: object) -> None:
    """The host gives a player extra time (150, 200; 100 takes it back), in the lobby or during the game; a
    pending "I need more time" is answered by it. During a question the player's own deadline moves at once,
    and with it the room's (the last of its players')."""
    if time_percent not in machine.TIME_PERCENTS or isinstance(time_percent, bool):
        raise NotNow(_("Choose the time: x1, x1.5 or x2."))
    with transaction.atomic():
        room = Room.objects.select_for_update().get(pk=room_id)
        if room.phase == Phase.FINISHED:
            raise NotNow(_("The game has finished."))
        before = closing_percent(room_id)
        updated = Player.objects.filter(pk=player_id, room_id=room_id, removed=False).update(
            time_percent=time_percent, asks_more_time=False
        )
        if not updated:
            raise NotNow(_("That player is no longer in the game."))
        _refit_deadline(room, before)
        bump(room_id)


def player_time_request_decline(*, room_id: int, player_id: int) -> None:
    """The host declines a player's "I need more time": the request goes, their time stays as it is."""
    with transaction.atomic():
        if Player.objects.filter(pk=player_id, room_id=room_id, removed=False, asks_more_time=True).update(
            asks_more_time=False
        ):
            bump(room_id)


def _refit_deadline(room: Room, before: int) -> None:
    """Keep the room's deadline the last of its players' after their time changed (the room's row is locked)."""
    after = closing_percent(room.pk)
    if room.phase != Phase.QUESTION or after == before or room.deadline is None:
        return
    timer_ms = question_timer_ms(round_id=room.round_id, timer_seconds=room.timer_seconds, index=room.question_index)
    shift = machine.time_window_ms(timer_ms=timer_ms, time_percent=after) - machine.time_window_ms(
        timer_ms=timer_ms, time_percent=before
    )
    Room.objects.filter(pk=room.pk).update(deadline=room.deadline + timedelta(milliseconds=shift))


def _close_if_everyone_answered(*, room_id: int) -> bool:
    """After a player leaves the room: the others may all have answered already."""
    room = Room.objects.get(pk=room_id)
    if room.phase != Phase.QUESTION:
        return False
    return bool(close_where_everyone_answered({(room.pk, room.question_index)}, {room.pk: room.code}))
