"""Homework's common requests in one statement each, from the place homework_place read without a lock: a question
opened with one conditional UPDATE, an answer stored with its points and the place moved on in one statement
(PostgreSQL's: writes inside a WITH). Each acts only if the place is still as read, and returns None for anything
else, which services.homework_open and services.homework_answer then decide on their locked path."""

from collections.abc import Mapping
from contextlib import nullcontext as _nothing
from datetime import datetime, timedelta
from typing import Any

from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from lobby.homework.questions import (
    _answer_reply,
    _judged,
    _open_question,
    _past_slides,
    _question,
    _window_ms,
    open_at,
)
from lobby.homework.rows import open_place
from lobby.models import Answer, HomeworkProgress, Player


def _open_at_once(place: HomeworkProgress, question_index: object, at: datetime) -> dict[str, Any] | None:
    """homework_open's common case from an unlocked read, or None for the locked path to decide."""
    player, room = place.player, place.player.room
    if (
        isinstance(question_index, bool)
        or question_index != place.question_index
        or place.question_index >= room.question_count
        or place.finished_at is not None
    ):
        return None
    if place.opened_at is not None:
        # Asked again (a reload): shown as it is, its clock kept, while its time lasts.
        return _open_question(room, place, at) if at <= place.own_deadline else None
    if not open_at(room.assignment, at):
        return None
    question, _order, _kind = _question(room, place.question_index)
    own_deadline = min(at + timedelta(milliseconds=_window_ms(room, player, question)), room.assignment.deadline)
    # The clock starts only if the place is still as read: not opened meanwhile, not moved on.
    if not open_place(place.player_id, place.question_index, at, own_deadline):
        return None
    place.opened_at, place.own_deadline = at, own_deadline
    return _open_question(room, place, at)


_ANSWER_AT_ONCE = """
WITH moved AS (
    UPDATE {progress} SET question_index = %s, opened_at = NULL, own_deadline = NULL,
        finished_at = COALESCE(%s, finished_at)
    WHERE player_id = %s AND question_index = %s AND opened_at = %s AND finished_at IS NULL
    RETURNING player_id
), answered AS (
    INSERT INTO {answer} (room_id, player_id, question_index, option, elapsed_ms, correct, points, credit,
        response, window_ms, created_at)
    SELECT %s, player_id, %s, %s, %s, %s, %s, %s, %s, %s, %s FROM moved
    RETURNING player_id
)
UPDATE {player} SET score = score + %s, streak = %s
WHERE id = (SELECT player_id FROM answered)
RETURNING score
"""


def _answer_at_once(
    place: HomeworkProgress, question_index: object, given: Mapping[str, Any], at: datetime
) -> dict[str, Any] | None:
    """homework_answer's common case from an unlocked read: the answer stored, the player's score and streak
    and their place moved on, in one statement (one answer a question: the place moves on only from the question
    and the opening read, and the answer's unique key holds besides), or None for the locked path to decide."""
    player, room = place.player, place.player.room
    if (
        connection.vendor != "postgresql"  # one statement with writes inside a WITH: PostgreSQL's; SQLite locks
        or not isinstance(question_index, int)
        or isinstance(question_index, bool)
        or question_index != place.question_index
        or place.opened_at is None
        or place.finished_at is not None
        or at > place.own_deadline
    ):
        return None
    question, order, kind, judged, scored, elapsed_ms, window_ms = _judged(
        room, player, question_index, given, opened_at=place.opened_at, at=at
    )
    following = _past_slides(room, question_index + 1)
    finished = at if following >= room.question_count else None
    response = Answer._meta.get_field("response").get_db_prep_save(judged.response, connection)
    sql = _ANSWER_AT_ONCE.format(
        progress=connection.ops.quote_name(HomeworkProgress._meta.db_table),
        answer=connection.ops.quote_name(Answer._meta.db_table),
        player=connection.ops.quote_name(Player._meta.db_table),
    )
    params = [
        following, finished, place.player_id, question_index, place.opened_at,
        room.pk, question_index, judged.option, elapsed_ms, judged.right, scored.points, judged.credit,
        response, window_ms, timezone.now(),
        scored.points, scored.streak,
    ]  # fmt: skip
    try:
        # A savepoint only inside a caller's transaction (a test's): a refused statement must not spoil it.
        with transaction.atomic() if connection.in_atomic_block else _nothing(), connection.cursor() as cursor:
            cursor.execute(sql, params)
            row = cursor.fetchone()
    except IntegrityError:
        return None  # answered already: the locked path says so
    if row is None:
        return None  # the place moved since it was read (answered, expired): the locked path says what happened
    player.score, player.streak = row[0], scored.streak
    place.question_index, place.opened_at, place.own_deadline = following, None, None
    place.finished_at = finished or place.finished_at
    return _answer_reply(
        question,
        order,
        kind,
        judged,
        scored,
        index=question_index,
        place=place,
        player=player,
        assignment=room.assignment,
        at=at,
    )
