"""The game's writes. Every phase change is a compare-and-set on the room's row."""

import logging
import re
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.db.models import Count, F, FilteredRelation, Max, Q
from django.utils import timezone
from django.utils.translation import gettext as _

from core import metrics
from lobby import events, machine, review
from lobby.exceptions import (
    AlreadyAnswered,
    AlreadyReported,
    AnswerRefused,
    BadToken,
    GameError,
    GameOver,
    NicknameTaken,
    NotNow,
    PlayerRemoved,
    RoomFull,
    RoomLocked,
    RoomNotFound,
    TooLate,
)
from lobby.machine import Action, Phase, Position
from lobby.models import Answer, Player, Report, Room
from lobby.nicknames import clean_nickname
from lobby.tokens import cohost_key, host_token, player_token, read_cohost_key, read_host_token, read_player_token
from quiz.models import Round
from quiz.selectors import round_question_at, round_question_facts

logger = logging.getLogger(__name__)

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
) -> CreatedRoom:
    """A room in the lobby. Its options are shown in an order drawn from `option_seed`, a fresh secret unless
    given ("" keeps the round's order, as rooms from before shuffling do). `owner_key` files it among that
    host's past games. With `no_speed_bonus` a right answer scores the same at any moment."""
    if option_seed is None:
        option_seed = secrets.token_hex(16)
    timer_seconds = int(timer_seconds)
    if not settings.ROOM_MIN_TIMER <= timer_seconds <= settings.ROOM_MAX_TIMER:
        raise NotNow(f"The timer must be {settings.ROOM_MIN_TIMER} to {settings.ROOM_MAX_TIMER} seconds.")
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
                )
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


@dataclass(frozen=True)
class Joined:
    player: Player
    token: str
    seq: int = 0  # the room's seq with this player in it: any picture at least this new shows them


def player_join(*, code: str, nickname: object, asks_more_time: bool = False) -> Joined:
    """A new player. `asks_more_time`: they ticked "I need more time"; the host confirms or declines it."""
    result = players_join([JoinIn(code=code, nickname=nickname, asks_more_time=asks_more_time)])[0]
    if isinstance(result, GameError):
        raise result
    return result


@dataclass(frozen=True)
class JoinIn:
    code: str
    nickname: object
    asks_more_time: bool = False


def players_join(joins: Sequence[JoinIn]) -> list[Joined | GameError]:
    """Many new players in one transaction (the server groups the joins that arrive together, as it does
    answers): one result per join, in order, the player or the error that joiner should see. Per room the row
    is locked once, the players counted once, the nicknames looked up in one query, the new players inserted
    in one statement and the seq bumped once, so a room of 2,000 filling up is a few dozen transactions, not
    2,000 of them queued on one row lock. The lock keeps the count and the nicknames exact across processes."""
    results: list[Joined | GameError | None] = [None] * len(joins)
    wanted: dict[str, list[tuple[int, str, str, bool]]] = {}
    for i, join in enumerate(joins):
        try:
            nickname, key = clean_nickname(join.nickname)
        except GameError as error:
            results[i] = error
            continue
        wanted.setdefault(normalize_code(join.code), []).append((i, nickname, key, join.asks_more_time is True))
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
            keys = {item[2] for items in wanted.values() for item in items}
            taken = set(
                Player.objects.filter(room__in=rooms, removed=False, nickname_key__in=keys).values_list(
                    "room_id", "nickname_key"
                )
            )
            new: list[tuple[int, Room, Player]] = []
            for room in rooms:
                count = counts.get(room.pk, 0)
                added: list[tuple[int, Player]] = []
                for i, nickname, key, more_time in wanted.pop(room.code):
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
                        taken.add((room.pk, key))
                        added.append(
                            (i, Player(room=room, nickname=nickname, nickname_key=key, asks_more_time=more_time))
                        )
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
            for i, *_ in items:
                results[i] = RoomNotFound()
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


def player_remove(*, room_id: int, player_id: int) -> None:
    with transaction.atomic():
        room = Room.objects.select_for_update().get(pk=room_id)
        before = _closing_percent(room_id)
        updated = Player.objects.filter(pk=player_id, room_id=room_id, removed=False).update(removed=True)
        if updated:
            # The one with the most extra time has gone: the question closes at the new last deadline.
            _refit_deadline(room, before)
            _bump(room_id)
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
        before = _closing_percent(room_id)
        updated = Player.objects.filter(pk=player_id, room_id=room_id, removed=False).update(
            time_percent=time_percent, asks_more_time=False
        )
        if not updated:
            raise NotNow(_("That player is no longer in the game."))
        _refit_deadline(room, before)
        _bump(room_id)


def player_time_request_decline(*, room_id: int, player_id: int) -> None:
    """The host declines a player's "I need more time": the request goes, their time stays as it is."""
    with transaction.atomic():
        if Player.objects.filter(pk=player_id, room_id=room_id, removed=False, asks_more_time=True).update(
            asks_more_time=False
        ):
            _bump(room_id)


def room_set_no_speed_bonus(*, room_id: int, no_speed_bonus: bool) -> None:
    """Set before the game starts: a game must not change how it scores halfway."""
    with transaction.atomic():
        if not Room.objects.filter(pk=room_id, phase=Phase.LOBBY).update(no_speed_bonus=bool(no_speed_bonus)):
            raise NotNow(_("The speed bonus can only be changed before the game starts."))
        _bump(room_id)


def _closing_percent(room_id: int) -> int:
    """The most time any player of the room has: the room's deadline is theirs."""
    most = Player.objects.filter(room_id=room_id, removed=False).aggregate(most=Max("time_percent"))["most"]
    return most or 100


def _refit_deadline(room: Room, before: int) -> None:
    """Keep the room's deadline the last of its players' after their time changed (the room's row is locked)."""
    after = _closing_percent(room.pk)
    if room.phase != Phase.QUESTION or after == before or room.deadline is None:
        return
    timer_ms = room.timer_seconds * 1000
    shift = machine.time_window_ms(timer_ms=timer_ms, time_percent=after) - machine.time_window_ms(
        timer_ms=timer_ms, time_percent=before
    )
    Room.objects.filter(pk=room.pk).update(deadline=room.deadline + timedelta(milliseconds=shift))


def room_set_locked(*, room_id: int, locked: bool) -> None:
    with transaction.atomic():
        Room.objects.filter(pk=room_id).update(locked=bool(locked))
        _bump(room_id)


def _bump(room_id: int) -> None:
    """A lobby-sized change (a join, a removal, the lock): its broadcast is coalesced with the others'."""
    Room.objects.filter(pk=room_id).update(seq=F("seq") + 1)
    events.room_changed(room_id=room_id, coalesce=True)


def _compare_and_set(room: Room, target: Position, **fields) -> bool:
    """Move the room from the position it was read at to `target`; False if someone else moved it first."""
    updated = Room.objects.filter(pk=room.pk, phase=room.phase, question_index=room.question_index).update(
        phase=target.phase, question_index=target.index, seq=F("seq") + 1, **fields
    )
    return updated == 1


def _start_question_fields(room: Room) -> dict:
    """The room's deadline is the last of its players' own: the clock closes the question then."""
    now = timezone.now()
    window = machine.time_window_ms(timer_ms=room.timer_seconds * 1000, time_percent=_closing_percent(room.pk))
    return {"question_started_at": now, "deadline": now + timedelta(milliseconds=window)}


def game_act(
    *, room_id: int, action: Action, expected_phase: str | None = None, expected_index: int | None = None
) -> bool:
    """Apply a host action (start, next, close). Returns False when the room had already moved on."""
    room = Room.objects.get(pk=room_id)
    if expected_phase is not None and (room.phase != expected_phase or room.question_index != expected_index):
        return False
    if action is Action.CLOSE:
        return question_close(room_id=room_id, question_index=room.question_index)
    try:
        target = machine.transition(room.position, action, total=room.question_count)
    except machine.IllegalMove:
        raise NotNow() from None
    if action is Action.START and not room.players.filter(removed=False).exists():
        raise NotNow(_("Wait for at least one player to join before starting."))
    fields = _start_question_fields(room) if target.phase == Phase.QUESTION else {}
    with transaction.atomic():
        moved = _compare_and_set(room, target, **fields)
        if moved:
            events.room_changed(room_id=room.pk)
    return moved


def question_close(*, room_id: int, question_index: int) -> bool:
    """Close a question once: score its answers and reveal. Safe to call from any process, any number of times."""
    with transaction.atomic():
        room = Room.objects.select_for_update().get(pk=room_id)
        if room.phase != Phase.QUESTION or room.question_index != question_index:
            return False
        if not _compare_and_set(room, Position(Phase.REVEAL, question_index)):
            return False
        _score_question(room, question_index)

        def reveal() -> None:
            # The reveal goes out first (the crowd check never delays it), then the crowd check on its counts.
            shown = events.room_broadcast(room_id=room.pk)
            review.after_reveal(room=room, question_index=question_index, shown=shown)

        transaction.on_commit(reveal)
    return True


def _score_question(room: Room, question_index: int) -> None:
    timer_ms = room.timer_seconds * 1000
    # Rows as tuples, not model objects: this runs with the room's row locked, and its CPU time is the GIL's.
    answers = {
        player_id: (answer_id, elapsed_ms, window_ms or timer_ms)
        for answer_id, player_id, elapsed_ms, window_ms in Answer.objects.filter(
            room=room, question_index=question_index, correct=True
        ).values_list("pk", "player_id", "elapsed_ms", "window_ms")
    }
    answer_rows, player_rows = [], []
    for player_id, score, streak in room.players.filter(removed=False).values_list("pk", "score", "streak"):
        # A wrong answer keeps the points it was stored with (none); only right ones are written.
        answer_id, elapsed_ms, window_ms = answers.get(player_id, (None, 0, timer_ms))
        scored = machine.answer_score(
            streak=streak,
            correct=answer_id is not None,
            elapsed_ms=elapsed_ms,
            window_ms=window_ms,
            speed_bonus=not room.no_speed_bonus,
        )
        if answer_id is not None:
            answer_rows.append((answer_id, scored.points))
        player_rows.append((player_id, score + scored.points, scored.streak))
    # Two statements, not two per player.
    _update_rows(Answer, ["points"], answer_rows)
    _update_rows(Player, ["score", "streak"], player_rows)


def _update_rows(model, fields: list[str], rows: list[tuple]) -> None:
    """One UPDATE … FROM (VALUES …) for rows given as (pk, *values). Django's bulk_update builds a CASE
    expression per row and field: for a room of 20 that was the largest CPU cost of closing a question, spent
    while the room's row is locked and the process's event loop waits for the GIL."""
    if not rows:
        return
    quote = connection.ops.quote_name
    table, pk = quote(model._meta.db_table), quote(model._meta.pk.column)
    sets = ", ".join(f"{quote(model._meta.get_field(f).column)} = v.column{i + 2}" for i, f in enumerate(fields))
    row = "(" + ", ".join(["%s"] * (len(fields) + 1)) + ")"
    sql = f"UPDATE {table} SET {sets} FROM (VALUES {', '.join([row] * len(rows))}) AS v WHERE {table}.{pk} = v.column1"
    with connection.cursor() as cursor:
        cursor.execute(sql, [value for values in rows for value in values])


def resume_after_outage() -> int:
    """After the database was unreachable, give every open question at least a few seconds more, so answers
    held back by the outage land before the clock closes it. Idempotent: every process's clock may call it."""
    floor = timezone.now() + timedelta(seconds=settings.DB_OUTAGE_RESUME_SECONDS)
    # In a room with extra time the deadline is the last player's: everyone's own must reach the floor.
    open_rooms = Room.objects.filter(phase=Phase.QUESTION).annotate(
        closing=Max("players__time_percent", filter=Q(players__removed=False))
    )
    extended = 0
    with transaction.atomic():
        for room_id, timer_seconds, deadline, closing in open_rooms.values_list(
            "pk", "timer_seconds", "deadline", "closing"
        ):
            needed = floor + timedelta(
                milliseconds=machine.own_deadline_offset_ms(
                    timer_ms=timer_seconds * 1000, time_percent=100, closing_percent=closing or 100
                )
            )
            if deadline < needed and Room.objects.filter(pk=room_id, deadline__lt=needed).update(
                deadline=needed, seq=F("seq") + 1
            ):
                extended += 1
                events.room_changed(room_id=room_id)
    return extended


def close_due_questions() -> int:
    """The server's clock: close every question past its deadline. Called by every process's ticker."""
    closed = 0
    due = Room.objects.filter(phase=Phase.QUESTION, deadline__lte=timezone.now()).values_list("pk", "question_index")
    for room_id, question_index in list(due):
        if question_close(room_id=room_id, question_index=question_index):
            closed += 1
    return closed


@dataclass(frozen=True)
class AnswerAck:
    question_index: int
    option: int  # as the player chose it: the position shown in their room
    room_id: int
    room_code: str


@dataclass(frozen=True)
class AnswerIn:
    """One player's answer as the server received it. The deadline is judged at `received_at` (a retry after
    a database outage keeps it), never at a time the client claims."""

    player_id: int
    question_index: object
    option: object
    received_at: datetime | None = None


def answer_submit(
    *, player_id: int, question_index: object, option: object, received_at: datetime | None = None
) -> AnswerAck:
    """One answer, stored and counted: for callers outside the server's batching (tests, the shell)."""
    result = answers_submit([AnswerIn(player_id, question_index, option, received_at)])[0]
    if isinstance(result, GameError):
        raise result
    return result


def answers_submit(answers: Sequence[AnswerIn]) -> list[AnswerAck | GameError]:
    """Store, then count: what the server does per batch in two steps, in one call."""
    results = answers_store(answers)
    answers_counted(results)
    return results


def answers_store(answers: Sequence[AnswerIn]) -> list[AnswerAck | GameError]:
    """Many players' answers in one transaction (the server groups those that arrive together): one result per
    answer, in order, an acknowledgement or the error that player should see. Under load this is what lets a
    process take a thousand answers a second: a handful of queries per batch instead of per answer. Once
    stored, an answer counts: `answers_counted` then closes the questions everyone has answered."""
    try:
        return _answers_store(answers)
    except IntegrityError:
        # The unique (player, question) constraint: another process stored one of these players' answers
        # after we looked. Rare (one player, two connections); each answer then goes in on its own.
        if len(answers) == 1:
            return [AlreadyAnswered()]
        return [answers_store([answer])[0] for answer in answers]


def _answers_store(answers: Sequence[AnswerIn]) -> list[AnswerAck | GameError]:
    results: list[AnswerAck | GameError] = []
    accepted: list[Answer] = []
    with transaction.atomic():
        # One query: the room of every player still in one, under a shared lock on the room's row. Answers
        # to the same question go in side by side; a close (which updates the row) waits for them, or they
        # see it closed.
        rooms = _rooms_for_answers({a.player_id for a in answers})
        # A double click or a replayed frame is refused here, without failing the insert of everyone else's.
        already = {(player_id, room.question_index) for player_id, room in rooms.items() if room.answered_current}
        for answer in answers:
            room = rooms.get(answer.player_id)
            try:
                row = _judge_answer(answer, room, already)
            except GameError as error:
                results.append(error)
                continue
            already.add((row.player_id, row.question_index))
            accepted.append(row)
            results.append(AnswerAck(row.question_index, answer.option, room_id=room.pk, room_code=room.code))
        # In player order, so two batches racing over the same players' rows always lock them in one order.
        Answer.objects.bulk_create(sorted(accepted, key=lambda row: (row.player_id, row.question_index)))
    metrics.answers_stored(len(accepted))
    return results


def answers_counted(results: Sequence[AnswerAck | GameError]) -> set[tuple[int, int]]:
    """After answers are stored (and their players told): count each question they answered, tell its host,
    and close it if everyone has answered. Counted after commit: answers that went in side by side cannot see
    each other inside their transactions, but the last to commit sees them all here. Returns the
    (room, question) pairs this call closed."""
    acks = [r for r in results if isinstance(r, AnswerAck)]
    return _close_where_everyone_answered(
        {(ack.room_id, ack.question_index) for ack in acks}, {ack.room_id: ack.room_code for ack in acks}
    )


def _judge_answer(answer: AnswerIn, room: Room | None, already: set[tuple[int, int]]) -> Answer:
    """The row to store for this answer, or the GameError that says why it is refused. The player names the
    option by where their room shows it; the row keeps the round's index of it, so scoring, the crowd check,
    review and voiding read answers as the round has them."""
    question_index, option = answer.question_index, answer.option
    if not isinstance(question_index, int) or isinstance(question_index, bool):
        raise AnswerRefused(_("The answer must name the question it is for."))
    if not isinstance(option, int) or isinstance(option, bool):
        raise AnswerRefused(_("Choose one of the options."))
    if room is None:
        raise PlayerRemoved()
    if room.phase != Phase.QUESTION or room.question_index != question_index:
        if room.question_index == question_index and room.phase != Phase.LOBBY:
            raise TooLate()
        raise AnswerRefused(_("That question is not open."))
    now = answer.received_at or timezone.now()
    timer_ms = room.timer_seconds * 1000
    # The room's deadline is the last of its players'; this player's own may be earlier.
    own_deadline = room.deadline - timedelta(
        milliseconds=machine.own_deadline_offset_ms(
            timer_ms=timer_ms, time_percent=room.answering_time_percent, closing_percent=room.closing_time_percent
        )
    )
    if now > own_deadline:
        raise TooLate()
    # Cached for a few seconds: a room's 20 answers need it 20 times.
    question = round_question_facts(round_id=room.round_id, position=question_index)
    if not 0 <= option < question.option_count:
        raise AnswerRefused(_("Choose one of the options."))
    if (answer.player_id, question_index) in already:
        raise AlreadyAnswered()
    elapsed_ms = int((now - room.question_started_at).total_seconds() * 1000)
    order = machine.option_order(
        seed=room.option_seed, question_index=question_index, option_count=question.option_count
    )
    original = machine.original_option(order, option)
    return Answer(
        room_id=room.pk,
        player_id=answer.player_id,
        question_index=question_index,
        option=original,
        elapsed_ms=max(elapsed_ms, 0),
        correct=original == question.correct_index,
        window_ms=machine.time_window_ms(timer_ms=timer_ms, time_percent=room.answering_time_percent),
    )


_ROOMS_OF_PLAYERS = (
    "SELECT r.*, p.id AS answering_player_id, p.time_percent AS answering_time_percent, "
    "EXISTS (SELECT 1 FROM lobby_answer a WHERE a.player_id = p.id "
    "AND a.question_index = r.question_index) AS answered_current, "
    "(SELECT MAX(q.time_percent) FROM lobby_player q WHERE q.room_id = r.id AND NOT q.removed) AS closing_time_percent "
    "FROM lobby_room r JOIN lobby_player p ON p.room_id = r.id WHERE p.id IN ({}) AND NOT p.removed"
)


def _rooms_for_answers(player_ids: set[int]) -> dict[int, Room]:
    """Player id -> room, for the players still in a room, each with `answered_current`: whether that player
    has answered the room's current question, `answering_time_percent` (their time) and `closing_time_percent`
    (the most any player of the room has). On PostgreSQL under FOR SHARE; on SQLite the IMMEDIATE
    transaction already holds the database's write lock."""
    ids = [player_id for player_id in player_ids if isinstance(player_id, int)]
    if not ids:
        return {}
    sql = _ROOMS_OF_PLAYERS.format(", ".join(["%s"] * len(ids)))
    sql += " FOR SHARE OF r" if connection.vendor == "postgresql" else ""
    return {room.answering_player_id: room for room in Room.objects.raw(sql, ids)}


def _close_where_everyone_answered(questions: set[tuple[int, int]], codes: dict[int, str]) -> set[tuple[int, int]]:
    """For each (room, question) just answered: tell the host how many have answered, and close the question
    if that is everyone. One query, however many rooms. Returns the questions this call closed."""
    if not questions:
        return set()
    which = Q()
    for room_id, question_index in questions:
        which |= Q(answers__room_id=room_id, answers__question_index=question_index)
    # The condition goes into the join (FilteredRelation): only these questions' answers are joined. As an
    # aggregate FILTER, every answer the players ever gave was joined, and a PostgreSQL without table statistics
    # (autovacuum off, as on our bench machine) scanned the whole answer table for it: 63 ms per batch at
    # 570,000 stored answers. With statistics both shapes take well under a millisecond.
    counts = {
        row["room_id"]: (row["active"], row["answered"])
        for row in Player.objects.filter(room_id__in={room_id for room_id, _ in questions}, removed=False)
        .annotate(current=FilteredRelation("answers", condition=which))
        .values("room_id")
        .annotate(active=Count("id", distinct=True), answered=Count("current", distinct=True))
    }
    closed = set()
    for room_id, question_index in sorted(questions):
        active, answered = counts.get(room_id, (0, 0))
        # Only the count changed: a small event for the host's screen, not a snapshot to every player.
        events.answers_changed(room_code=codes[room_id], question_index=question_index, answered_count=answered)
        if active and answered >= active and question_close(room_id=room_id, question_index=question_index):
            closed.add((room_id, question_index))
    return closed


def _close_if_everyone_answered(*, room_id: int) -> bool:
    """After a player leaves the room: the others may all have answered already."""
    room = Room.objects.get(pk=room_id)
    if room.phase != Phase.QUESTION:
        return False
    return bool(_close_where_everyone_answered({(room.pk, room.question_index)}, {room.pk: room.code}))


# Control characters (NUL breaks PostgreSQL), lone surrogates (not UTF-8) and bidi overrides (they make text
# read differently from what it is). Other format characters stay: ZWJ/ZWNJ belong to emoji and scripts.
_UNSAFE_CHARACTERS = re.compile(r"[\x00-\x1f\x7f-\x9f\ud800-\udfff\u202a-\u202e\u2066-\u2069]")


def _clean_text(raw: str) -> str:
    return " ".join(_UNSAFE_CHARACTERS.sub(" ", raw).split())


def report_create(*, player_id: int, question_index: object, text: object) -> Report:
    if not isinstance(question_index, int) or isinstance(question_index, bool):
        raise NotNow(_("Say which question you are reporting."))
    text = _clean_text(text)[:500] if isinstance(text, str) else ""
    player = Player.objects.select_related("room").get(pk=player_id)
    room = player.room
    # A question can be reported once its answer has been revealed, not while it is open.
    if not machine.is_revealed(room.position, question_index) or not 0 <= question_index < room.question_count:
        raise NotNow(_("You can report a question after its answer is shown."))
    question = round_question_at(round_id=room.round_id, position=question_index)
    try:
        with transaction.atomic():
            report = Report.objects.create(room=room, player=player, question=question, text=text)
            review.report_flag(report=report)
            return report
    except IntegrityError:
        raise AlreadyReported() from None
