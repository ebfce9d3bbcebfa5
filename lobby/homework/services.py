"""Homework: an assignment of a round, played alone by each player on their own clock before a deadline.

An assignment is an ordinary room created already past its last question (phase finished), so the results page,
the results CSV and the audit export read it as a finished game, and no live socket or game clock plays it.
Everything a player's place needs is in the database (lobby.models.HomeworkProgress): nothing is held in a
process's memory, so a player resumes after a reload or a server restart.

Each question's clock starts when the player opens it; their own deadline is the question's own time (or the room's
timer when it has none) stretched by their extra time (machine.question_timer_ms, machine.time_window_ms), never
later than the assignment's deadline. Answers are judged by the question's kind, as the live game judges them, and
scored at once with machine.answer_score (the same formula and streak bonus). A question left unanswered past the
player's own deadline scores nothing. With reveal "deadline", nothing a player is sent names the right answer, an
explanation, points or a score until the assignment's deadline has passed.

`now` is the one time source of these rules: tests replace it. This module is homework's entry point: the
one-statement paths of opening and answering are in at_once.py, the host's overview in overview.py, and what both
paths share (a question shown, an answer judged and scored) in questions.py."""

from collections.abc import Mapping
from contextlib import nullcontext as _nothing
from datetime import datetime, timedelta
from typing import Any

from django.db import IntegrityError, connection, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from lobby.exceptions import (
    AlreadyAnswered,
    AnswerRefused,
    BadToken,
    NicknameTaken,
    NotNow,
    PlayerRemoved,
    RoomNotFound,
    TooLate,
)
from lobby.homework import overview
from lobby.homework.at_once import _answer_at_once, _open_at_once
from lobby.homework.questions import (
    _answer_reply,
    _judged,
    _open_question,
    _past_slides,
    _question,
    _verdict,
    _window_ms,
    answers_shown,
    open_at,
)
from lobby.homework.rows import insert_values, read_place
from lobby.models import Answer, Assignment, HomeworkProgress, Player, Room
from lobby.rules.machine import Phase
from lobby.rules.nicknames import clean_nickname
from lobby.rules.showing import question_numbering
from lobby.services.rooms import CreatedRoom, normalize_code, room_create
from lobby.tokens import player_token, read_player_token

REVEALS = (Assignment.REVEAL_EACH, Assignment.REVEAL_DEADLINE)


def now() -> datetime:
    """The time the rules judge by (tests patch this)."""
    return timezone.now()


class DeadlinePassed(NotNow):
    code = "deadline_passed"

    def __init__(self, message: str | None = None):
        super().__init__(message or _("The deadline of this homework has passed: it can no longer be played."))


def assignment_create(
    *,
    round_id: int,
    deadline: datetime,
    reveal: str,
    timer_seconds: int,
    owner_key: str = "",
    no_speed_bonus: bool = False,
) -> CreatedRoom:
    """A new assignment of a round: a room past its last question, open to players until `deadline` (aware)."""
    if reveal not in REVEALS:
        raise NotNow(_("Choose when players see the right answers."))
    if timezone.is_naive(deadline):
        raise NotNow(_("The deadline needs a time zone."))
    if deadline <= now():
        raise NotNow(_("The deadline must be in the future."))
    with transaction.atomic():
        created = room_create(
            round_id=round_id, timer_seconds=timer_seconds, owner_key=owner_key, no_speed_bonus=no_speed_bonus
        )
        room = created.room
        Room.objects.filter(pk=room.pk).update(phase=Phase.FINISHED, question_index=room.question_count - 1)
        room.phase, room.question_index = Phase.FINISHED, room.question_count - 1
        Assignment.objects.create(room=room, deadline=deadline, reveal=reveal)
    return created


def assignment_by_code(code: object) -> Assignment:
    try:
        return Assignment.objects.select_related("room", "room__round").get(room__code=normalize_code(code))
    except Assignment.DoesNotExist:
        raise RoomNotFound() from None


def is_open(assignment: Assignment, *, at: datetime | None = None) -> bool:
    """Is the assignment still played (at `at`, or now): before its deadline."""
    return open_at(assignment, at or now())


def homework_join(*, code: object, nickname: object, room: Room | None = None) -> tuple[Player, str]:
    """A new player of an assignment (the live game's nickname rules), and their signed token. `room`: the room
    of `code` as rows.room_for_page read it (with its assignment), if the caller has it."""
    name, key = clean_nickname(nickname)
    if room is None or normalize_code(code) != room.code:
        assignment = assignment_by_code(code)
    else:
        try:
            assignment = room.assignment
        except Assignment.DoesNotExist:
            raise RoomNotFound() from None
    if not is_open(assignment):
        raise DeadlinePassed()
    room = assignment.room
    player = Player(room=room, nickname=name, nickname_key=key)
    progress = HomeworkProgress(question_index=_past_slides(room, 0))
    if connection.vendor != "postgresql":
        # SQLite (the embedded default) has no INSERT inside a WITH: two inserts in one transaction.
        try:
            with transaction.atomic():
                player.save(force_insert=True)
                progress.player = player
                progress.save(force_insert=True)
        except IntegrityError:
            raise NicknameTaken() from None
        return player, player_token(room_code=room.code, player_id=player.pk)
    # The player and their place in one statement (one round trip, no transaction of its own to open and commit).
    player_columns, player_values = insert_values(player)
    progress_columns, progress_values = insert_values(progress)
    at = progress_columns.index(connection.ops.quote_name("player_id"))
    quote = connection.ops.quote_name
    sql = (
        f"WITH made AS (INSERT INTO {quote(Player._meta.db_table)} ({', '.join(player_columns)})"
        f" VALUES ({', '.join(['%s'] * len(player_values))}) RETURNING {quote('id')})"
        f" INSERT INTO {quote(HomeworkProgress._meta.db_table)} ({', '.join(progress_columns)})"
        f" SELECT {', '.join(quote('id') if n == at else '%s' for n in range(len(progress_columns)))} FROM made"
        f" RETURNING {quote('id')}, {quote('player_id')}"
    )
    try:
        with transaction.atomic() if connection.in_atomic_block else _nothing(), connection.cursor() as cursor:
            cursor.execute(sql, player_values + [v for n, v in enumerate(progress_values) if n != at])
            progress.pk, player.pk = cursor.fetchone()
    except IntegrityError:
        raise NicknameTaken() from None
    for made in (player, progress):
        made._state.adding, made._state.db = False, connection.alias
    player.homework = progress  # and progress.player = player
    return player, player_token(room_code=room.code, player_id=player.pk)


def homework_player(*, code: object, token: object) -> Player:
    """The player a token names, in this assignment."""
    grant = read_player_token(token)
    if grant is None or grant[0] != normalize_code(code):
        raise BadToken()
    player = Player.objects.select_related("room", "room__assignment", "homework").filter(pk=grant[1]).first()
    if player is None or not hasattr(player, "homework"):
        raise BadToken()
    if player.removed:
        raise PlayerRemoved()
    return player


def homework_place(*, code: object, token: object) -> HomeworkProgress:
    """The place of the player a token names, in this assignment, with their player, room and assignment: one
    query, no lock. Opening and answering start from it (homework_open, homework_answer: `place`), so the
    common request reads the database once before its one write."""
    grant = read_player_token(token)
    if grant is None or grant[0] != normalize_code(code):
        raise BadToken()
    place = read_place(grant[1])
    if place is None:
        raise BadToken()
    if place.player.removed:
        raise PlayerRemoved()
    return place


def _expire(progress: HomeworkProgress, player: Player, room: Room, at: datetime) -> None:
    """A question opened and left unanswered past the player's own deadline: it scores nothing (and ends the
    streak, as an unanswered live question does; a poll leaves it), and the player goes on to the next one.
    Called with the progress row locked."""
    while progress.opened_at is not None and progress.own_deadline is not None and at > progress.own_deadline:
        index = progress.question_index
        if Answer.objects.filter(player=player, question_index=index).exists():
            break  # answered in time: already moved on by the answer
        question, _order, kind = _question(room, index)
        if kind.scored and player.streak:
            player.streak = 0
            Player.objects.filter(pk=player.pk).update(streak=0)
        progress.question_index = _past_slides(room, index + 1)
        progress.opened_at = progress.own_deadline = None
        if progress.question_index >= room.question_count:
            progress.finished_at = progress.finished_at or at
        progress.save()


def _locked(player_id: int) -> tuple[Player, HomeworkProgress, Room, Assignment]:
    progress = HomeworkProgress.objects.select_for_update().get(player_id=player_id)
    player = Player.objects.select_related("room", "room__assignment").get(pk=player_id)
    return player, progress, player.room, player.room.assignment


def homework_state(*, player_id: int, joined: Player | None = None) -> dict[str, Any]:
    """A player's place, from the database: the page draws itself from it after a reload or a restart.
    `joined`: the player homework_join just made (with its room, assignment and place): nothing to read again."""
    at = now()
    if joined is not None:
        player, progress, room = joined, joined.homework, joined.room
        assignment = room.assignment
    else:
        with transaction.atomic():
            player, progress, room, assignment = _locked(player_id)
            _expire(progress, player, room, at)
        player.refresh_from_db(fields=["score", "streak"])
    shown = answers_shown(assignment, at=at)
    state: dict[str, Any] = {
        "nickname": player.nickname,
        "title": room.round.title,
        "question_count": room.question_count,
        "question_index": progress.question_index,
        "deadline": assignment.deadline.isoformat(),
        "open": is_open(assignment, at=at),
        "finished": progress.question_index >= room.question_count,
        "reveal": assignment.reveal,
    }
    if not state["finished"]:
        # "Question 3 of 10" as live counts it (a slide has no number, and homework steps over it).
        state["numbering"] = question_numbering(
            round_id=room.round_id, index=progress.question_index, count=room.question_count
        )
    if shown:
        state["score"] = player.score
        # Each question the player is past; every question once the deadline is (none ahead of them before).
        upto = progress.question_index if state["open"] else room.question_count
        state["answers"] = _answers_told(player, room, upto=min(upto, room.question_count), none_yet=joined is not None)
    if progress.opened_at is not None and not state["finished"]:
        state["question"] = _open_question(room, progress, at)
    return state


def _answers_told(player: Player, room: Room, *, upto: int, none_yet: bool = False) -> list[dict[str, Any]]:
    """The questions before `upto` with what was right, and the player's own answer and verdict, for when they
    may see it. Each question and its right answer are as the live phone gets them at a reveal (its kind's
    public part and reveal, in the player's order), so the page draws each kind as the live game does."""
    told = []
    given = (
        {}
        if none_yet
        else {
            index: (option, response, correct, points)
            for index, option, response, correct, points in Answer.objects.filter(player=player).values_list(
                "question_index", "option", "response", "correct", "points"
            )
        }
    )
    for index in range(upto):
        question, order, kind = _question(room, index)
        option, response, correct, points = given.get(index, (None, None, False, 0))
        told.append(
            {
                **_verdict(question, order, kind, index=index, correct=correct, points=points),
                "question": {
                    "index": index,
                    "kind": kind.name,
                    "text": question.text,
                    **kind.public(question, order),
                    "numbering": question_numbering(round_id=room.round_id, index=index, count=room.question_count),
                },
                "given": None if option is None else kind.shown(question, order, option, response),
            }
        )
    return told


def homework_open(*, player_id: int, question_index: object, place: HomeworkProgress | None = None) -> dict[str, Any]:
    """The player opens their next question: its clock starts now. Opening the one already open (a reload)
    keeps its clock; no question is opened after the assignment's deadline.

    `place` is the player's place as homework_place read it (unlocked): when it shows the common case (the next
    question asked for, not open yet, the assignment open; or the open one asked for again within its time) the
    question is opened with one conditional UPDATE, or shown; anything else, or a place that changed since it
    was read, takes the locked path below, which decides."""
    at = now()
    shown = _open_at_once(place, question_index, at) if place is not None else None
    if shown is not None:
        return shown
    with transaction.atomic():
        player, progress, room, assignment = _locked(player_id)
        _expire(progress, player, room, at)
        if progress.question_index >= room.question_count:
            raise NotNow(_("You have answered every question of this homework."))
        if question_index != progress.question_index or isinstance(question_index, bool):
            raise NotNow(_("That question is not the next one."))
        if progress.opened_at is None:
            if not is_open(assignment, at=at):
                raise DeadlinePassed()
            question, _order, _kind = _question(room, progress.question_index)
            window = timedelta(milliseconds=_window_ms(room, player, question))
            progress.opened_at = at
            progress.own_deadline = min(at + window, assignment.deadline)
            progress.save(update_fields=["opened_at", "own_deadline"])
        return _open_question(room, progress, at)


def homework_answer(
    *, player_id: int, question_index: object, given: Mapping[str, Any], place: HomeworkProgress | None = None
) -> dict[str, Any]:
    """The player's one answer to the question they have open, judged at once by its kind and scored. The
    reply is small: the next question's number, and (when answers are shown) the verdict and points.

    `place` is the player's place as homework_place read it (unlocked): when it shows the question open and in
    time, the answer is judged and stored with one statement that moves the place on only if it is still as read
    (_answer_at_once); anything else, or a place that changed since, takes the locked path below, which decides."""
    at = now()
    if place is not None:
        reply = _answer_at_once(place, question_index, given, at)
        if reply is not None:
            return reply
    with transaction.atomic():
        player, progress, room, assignment = _locked(player_id)
        if not isinstance(question_index, int) or isinstance(question_index, bool):
            raise AnswerRefused(_("The answer must name the question it is for."))
        if (
            question_index < progress.question_index
            or Answer.objects.filter(player=player, question_index=question_index).exists()
        ):
            raise AlreadyAnswered()
        if question_index != progress.question_index or progress.opened_at is None:
            raise AnswerRefused(_("That question is not open."))
        if at > progress.own_deadline:
            _expire(progress, player, room, at)
            raise TooLate()
        question, order, kind, judged, scored, elapsed_ms, window_ms = _judged(
            room, player, question_index, given, opened_at=progress.opened_at, at=at
        )
        Answer.objects.create(
            room=room,
            player=player,
            question_index=question_index,
            option=judged.option,
            elapsed_ms=elapsed_ms,
            correct=judged.right,
            points=scored.points,
            credit=judged.credit,
            response=judged.response,
            window_ms=window_ms,
        )
        player.score += scored.points
        player.streak = scored.streak
        Player.objects.filter(pk=player.pk).update(score=player.score, streak=player.streak)
        progress.question_index = _past_slides(room, question_index + 1)
        progress.opened_at = progress.own_deadline = None
        if progress.question_index >= room.question_count:
            progress.finished_at = at
        progress.save()
    return _answer_reply(
        question,
        order,
        kind,
        judged,
        scored,
        index=question_index,
        place=progress,
        player=player,
        assignment=assignment,
        at=at,
    )


def homework_overview(*, room: Room) -> dict[str, Any]:
    """The host's page, as of now: who has started and finished, and per question how many answered and how many
    right (overview.py)."""
    return overview.homework_overview(room=room, at=now())
