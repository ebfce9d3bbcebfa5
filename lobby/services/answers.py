"""Answers, stored in batches (the server groups those that arrive together) and then counted: a question
everyone has answered closes."""

import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, NamedTuple

from django.db import DataError, IntegrityError, connection, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from core import metrics
from lobby import events
from lobby.exceptions import (
    AlreadyAnswered,
    AnswerRefused,
    GameError,
    PlayerRemoved,
    TooLate,
)
from lobby.models import Answer
from lobby.reads.rows import aware, fetch
from lobby.rules import machine
from lobby.rules.machine import Phase
from lobby.rules.showing import shown_order
from lobby.services.progress import question_close
from quiz.kinds import BadAnswer, kind_of
from quiz.selectors import round_question_facts

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class AnswerAck:
    question_index: int
    # The answer as the player gave it, in their room's positions: an option (single, true/false, poll), the
    # options picked (multi), the text typed, the order chosen or the value.
    option: Any
    room_id: int
    room_code: str


@dataclass(frozen=True)
class AnswerIn:
    """One player's answer as the server received it. The deadline is judged at `received_at` (a retry after
    a database outage keeps it), never at a time the client claims."""

    player_id: int
    question_index: object
    option: object = None
    received_at: datetime | None = None
    # The answer frame's own fields ("option", "options", "text", "texts", "order", "value"); None: just `option`.
    given: Mapping[str, Any] | None = None

    def fields(self) -> Mapping[str, Any]:
        return self.given if self.given is not None else {"option": self.option}


# The fields an answer frame may carry, one per kind of answer (quiz/kinds).
ANSWER_FIELDS = ("option", "options", "text", "texts", "order", "value")


def answer_given(frame: Mapping[str, Any]) -> dict[str, Any]:
    """The answer fields of a player's frame, and nothing else of it."""
    return {name: frame[name] for name in ANSWER_FIELDS if name in frame}


def answer_submit(
    *,
    player_id: int,
    question_index: object,
    option: object = None,
    received_at: datetime | None = None,
    given: Mapping[str, Any] | None = None,
) -> AnswerAck:
    """One answer, stored and counted: for callers outside the server's batching (tests, the shell)."""
    result = answers_submit([AnswerIn(player_id, question_index, option, received_at, given)])[0]
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
    except (DataError, UnicodeEncodeError):
        # A row the database cannot hold (text is cleaned where it enters, core/text.py, so this is a kind's
        # bug): that player is told, and everyone else's answers in the batch go in, each on its own.
        if len(answers) == 1:
            logger.exception("an answer the database refused, from player %s", answers[0].player_id)
            return [AnswerRefused(_("That answer could not be stored. Try again in plain text."))]
        return [answers_store([answer])[0] for answer in answers]


class _RoomOfPlayer(NamedTuple):
    """What judging one player's answer reads of their room: a row, not a model (no signals, no fields' work)."""

    pk: int
    code: str
    phase: str
    question_index: int
    round_id: int
    timer_seconds: int
    deadline: datetime | None
    question_started_at: datetime | None
    option_seed: str
    team_talk_seconds: int
    answering_player_id: int
    answering_time_percent: int
    answered_current: bool
    closing_time_percent: int


class _AnswerRow(NamedTuple):
    """An answer to store, as its columns (lobby.models.Answer; points are set when the question closes)."""

    room_id: int
    player_id: int
    question_index: int
    option: int
    elapsed_ms: int
    correct: bool
    window_ms: int
    credit: float
    response: Any


def _answers_store(answers: Sequence[AnswerIn]) -> list[AnswerAck | GameError]:
    results: list[AnswerAck | GameError] = []
    accepted: list[_AnswerRow] = []
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
                row, shown = _judge_answer(answer, room, already)
            except GameError as error:
                results.append(error)
                continue
            already.add((row.player_id, row.question_index))
            accepted.append(row)
            results.append(AnswerAck(row.question_index, shown, room_id=room.pk, room_code=room.code))
        # In player order, so two batches racing over the same players' rows always lock them in one order.
        _answers_insert(sorted(accepted, key=lambda row: (row.player_id, row.question_index)))
    metrics.answers_stored(len(accepted))
    return results


def answers_counted(results: Sequence[AnswerAck | GameError]) -> set[tuple[int, int]]:
    """After answers are stored (and their players told): count each question they answered, tell its host,
    and close it if everyone has answered. Counted after commit: answers that went in side by side cannot see
    each other inside their transactions, but the last to commit sees them all here. Returns the
    (room, question) pairs this call closed."""
    acks = [r for r in results if isinstance(r, AnswerAck)]
    return close_where_everyone_answered(
        {(ack.room_id, ack.question_index) for ack in acks}, {ack.room_id: ack.room_code for ack in acks}
    )


def _judge_answer(
    answer: AnswerIn, room: _RoomOfPlayer | None, already: set[tuple[int, int]]
) -> tuple[_AnswerRow, Any]:
    """The row to store for this answer and the answer as the player's room shows it (their acknowledgement),
    or the GameError that says why it is refused. The player names
    options and items by where their room shows them; the row keeps the round's indexes, so scoring, the crowd
    check, review and voiding read answers as the round has them. Its kind judges it (quiz/kinds)."""
    question_index = answer.question_index
    if not isinstance(question_index, int) or isinstance(question_index, bool):
        raise AnswerRefused(_("The answer must name the question it is for."))
    if room is None:
        raise PlayerRemoved()
    if room.phase != Phase.QUESTION or room.question_index != question_index:
        if room.question_index == question_index and room.phase != Phase.LOBBY:
            raise TooLate()
        raise AnswerRefused(_("That question is not open."))
    now = answer.received_at or timezone.now()
    # Cached for a few seconds: a room's 20 answers need it 20 times.
    question = round_question_facts(round_id=room.round_id, position=question_index)
    # The question's own time, or the room's timer: the player's window is that, stretched by their extra time.
    timer_ms = machine.question_timer_ms(room_seconds=room.timer_seconds, question_seconds=question.seconds)
    # The room's deadline is the last of its players'; this player's own may be earlier.
    # None: a slide, which has no clock (its kind refuses every answer below).
    own_deadline = room.deadline and room.deadline - timedelta(
        milliseconds=machine.own_deadline_offset_ms(
            timer_ms=timer_ms, time_percent=room.answering_time_percent, closing_percent=room.closing_time_percent
        )
    )
    if own_deadline is not None and now > own_deadline:
        raise TooLate()
    if room.question_started_at is not None and now < room.question_started_at:
        if now >= room.question_started_at - timedelta(seconds=room.team_talk_seconds):
            raise AnswerRefused(_("Team talk: agree on your answer, the answers open when the clock starts."))
        raise AnswerRefused(_("Wait for the options: the question is still being read."))
    order = shown_order(question, seed=room.option_seed, question_index=question_index)
    kind = kind_of(question)
    try:
        judged = kind.judge(question, answer.fields(), order)
    except BadAnswer as error:
        raise AnswerRefused(str(error)) from None
    if (answer.player_id, question_index) in already:
        raise AlreadyAnswered()
    elapsed_ms = int((now - room.question_started_at).total_seconds() * 1000)
    row = _AnswerRow(
        room_id=room.pk,
        player_id=answer.player_id,
        question_index=question_index,
        option=judged.option,
        elapsed_ms=max(elapsed_ms, 0),
        correct=judged.right,
        window_ms=machine.time_window_ms(timer_ms=timer_ms, time_percent=room.answering_time_percent),
        credit=judged.credit,
        response=judged.response,
    )
    return row, kind.shown(question, order, judged.option, judged.response)


# The most time any player of the room has comes from one scan of each room's players (the derived table), not
# a subquery per answering player: in a room of 2,000 that subquery read 2,000 rows for each of a batch's 200
# answers (144 ms a batch; issue 31).
_ROOMS_OF_PLAYERS = (
    "SELECT r.id, r.code, r.phase, r.question_index, r.round_id, r.timer_seconds, r.deadline, "
    "r.question_started_at, r.option_seed, r.team_talk_seconds, "
    "p.id AS answering_player_id, p.time_percent AS answering_time_percent, "
    "EXISTS (SELECT 1 FROM lobby_answer a WHERE a.player_id = p.id "
    "AND a.question_index = r.question_index) AS answered_current, "
    "c.closing AS closing_time_percent "
    "FROM lobby_room r JOIN lobby_player p ON p.room_id = r.id "
    "JOIN (SELECT q.room_id, MAX(q.time_percent) AS closing FROM lobby_player q WHERE NOT q.removed AND q.room_id IN "
    "(SELECT o.room_id FROM lobby_player o WHERE o.id {ids}) GROUP BY q.room_id) c ON c.room_id = r.id "
    "WHERE p.id {ids} AND NOT p.removed"
)


def _rooms_for_answers(player_ids: set[int]) -> dict[int, _RoomOfPlayer]:
    """Player id -> room, for the players still in a room, each with `answered_current`: whether that player
    has answered the room's current question, `answering_time_percent` (their time) and `closing_time_percent`
    (the most any player of the room has). On PostgreSQL under FOR SHARE; on SQLite the IMMEDIATE
    transaction already holds the database's write lock."""
    ids = [player_id for player_id in player_ids if isinstance(player_id, int)]
    if not ids:
        return {}
    if connection.vendor == "postgresql":
        rows = fetch(_ROOMS_OF_PLAYERS.format(ids="= ANY(%s)") + " FOR SHARE OF r", [ids, ids])
    else:
        rows = fetch(_ROOMS_OF_PLAYERS.format(ids=f"IN ({', '.join(['%s'] * len(ids))})"), ids + ids)
    rooms = {}
    times: dict[int, tuple] = {}  # room -> its deadline and start, made aware once a room, not once a player
    for row in rows:
        pk, code, phase, index, round_id, timer, deadline, started, seed, talk, player, percent, answered, closing = row
        if pk not in times:
            times[pk] = (aware(deadline), aware(started))
        deadline, started = times[pk]
        rooms[player] = _RoomOfPlayer(
            pk, code, phase, index, round_id, timer, deadline, started, seed, talk, player, percent, bool(answered),
            closing,
        )  # fmt: skip
    return rooms


_ANSWER_COLUMNS = (
    "room_id", "player_id", "question_index", "option", "elapsed_ms", "correct", "window_ms", "credit", "response"
)  # fmt: skip
# The columns' types as PostgreSQL arrays (the response, jsonb, follows them).
_ANSWER_ARRAY_TYPES = ("integer", "integer", "smallint", "smallint", "integer", "boolean", "integer", "float8")
# SQLite: rows a statement, ten parameters each, well inside its limit.
_INSERT_ROWS = 500


def _answers_insert(rows: list[_AnswerRow]) -> None:
    """One INSERT for the batch, from the rows as they are (no model objects); raises IntegrityError as
    bulk_create did when another process stored one of them first. On PostgreSQL each column goes as one array
    (ten parameters, however many rows): psycopg caches a query's parsing only up to 50 parameters, and parsing a
    batch's 200 placeholders again on every batch was most of storing it."""
    if not rows:
        return
    quote = connection.ops.quote_name
    columns = ", ".join(quote(name) for name in (*_ANSWER_COLUMNS, "points", "created_at"))
    created_at = Answer._meta.get_field("created_at").get_db_prep_value(timezone.now(), connection)
    response = Answer._meta.get_field("response")
    table = quote(Answer._meta.db_table)
    if connection.vendor == "postgresql":
        arrays = [list(column) for column in zip(*(row[:-1] for row in rows), strict=True)]
        # The response as JSON text (None stays SQL NULL, as the model stores it), cast back to jsonb.
        given = [None if row.response is None else json.dumps(row.response) for row in rows]
        with connection.cursor() as cursor:
            cursor.execute(
                f"INSERT INTO {table} ({columns}) SELECT *, 0, %s FROM unnest("
                + ", ".join(f"%s::{kind}[]" for kind in _ANSWER_ARRAY_TYPES)
                + ", %s::jsonb[])",
                [created_at, *arrays, given],
            )
        return
    for start in range(0, len(rows), _INSERT_ROWS):
        chunk = rows[start : start + _INSERT_ROWS]
        values = ", ".join(["(%s, %s, %s, %s, %s, %s, %s, %s, %s, 0, %s)"] * len(chunk))
        params = [
            value
            for row in chunk
            for value in (*row[:-1], response.get_db_prep_save(row.response, connection), created_at)
        ]
        with connection.cursor() as cursor:
            cursor.execute(f"INSERT INTO {table} ({columns}) VALUES {values}", params)


def close_where_everyone_answered(questions: set[tuple[int, int]], codes: dict[int, str]) -> set[tuple[int, int]]:
    """For each (room, question) just answered: tell the host how many have answered, and close the question
    if that is everyone. One query, however many rooms. Returns the questions this call closed."""
    if not questions:
        return set()
    counts = _counts(questions)
    closed = set()
    for room_id, question_index in sorted(questions):
        active, answered = counts.get(room_id, (0, 0))
        # Only the count changed: a small event for the host's screen, not a snapshot to every player.
        events.answers_changed(room_code=codes[room_id], question_index=question_index, answered_count=answered)
        if active and answered >= active and question_close(room_id=room_id, question_index=question_index):
            closed.add((room_id, question_index))
    return closed


# Per (room, question) asked about: the room's active players, and how many of them answered that question. Two
# counts by index, whatever the planner knows: one join of every player with the answers (the shape before) was
# planned, on a database without statistics, as a nested loop over both: 4,000,000 comparisons and 600 ms per
# batch in a room of 2,000 (issue 31).
_COUNTS = (
    "SELECT q.room, "
    "(SELECT COUNT(*) FROM lobby_player p WHERE p.room_id = q.room AND NOT p.removed), "
    "(SELECT COUNT(*) FROM lobby_answer a JOIN lobby_player p ON p.id = a.player_id "
    "WHERE a.room_id = q.room AND a.question_index = q.idx AND NOT p.removed) FROM {}"
)


def _counts(questions: set[tuple[int, int]]) -> dict[int, tuple[int, int]]:
    """Room -> (active players, answers to the questions asked about it)."""
    asked = sorted(questions)
    if connection.vendor == "postgresql":  # arrays: two parameters, however many rooms (see _answers_insert)
        sql = _COUNTS.format("unnest(%s::integer[], %s::integer[]) AS q(room, idx)")
        rows = fetch(sql, [[room for room, _ in asked], [index for _, index in asked]])
    else:
        values = ", ".join(["(%s, %s)"] * len(asked))
        sql = f"WITH q(room, idx) AS (VALUES {values}) " + _COUNTS.format("q")
        rows = fetch(sql, [value for pair in asked for value in pair])
    counts: dict[int, tuple[int, int]] = {}
    for room_id, active, answered in rows:
        counts[room_id] = (active, counts.get(room_id, (0, 0))[1] + answered)
    return counts
