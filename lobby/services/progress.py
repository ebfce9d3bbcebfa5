"""Game progress. Every phase change is a compare-and-set on the room's row: the host's actions, closing
and scoring a question, the server's clock and the resume after a database outage."""

from datetime import timedelta

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Count, F, Max, Q
from django.utils import timezone
from django.utils.translation import gettext as _

from lobby import events
from lobby.exceptions import (
    NotNow,
)
from lobby.models import Answer, Player, Room
from lobby.rules import machine, ways
from lobby.rules.machine import Action, Phase, Position
from lobby.services import review
from lobby.services.common import closing_percent, question_timer_ms
from quiz.kinds import kind_of
from quiz.selectors import round_question_facts, round_readiness


def _compare_and_set(room: Room, target: Position, **fields) -> bool:
    """Move the room from the position it was read at to `target`; False if someone else moved it first."""
    updated = Room.objects.filter(pk=room.pk, phase=room.phase, question_index=room.question_index).update(
        phase=target.phase, question_index=target.index, seq=F("seq") + 1, **fields
    )
    return updated == 1


def _asks(room: Room, index: int) -> bool:
    """Whether the round's step `index` is a question (a slide asks nothing: quiz/kinds/slide.py)."""
    return kind_of(round_question_facts(round_id=room.round_id, position=index)).asks


def _start_question_fields(room: Room, index: int) -> dict:
    """The room's deadline is the last of its players' own: the clock closes the question then. With a moment to
    read, the question's clock (and its speed bonus) starts when its options appear, that many seconds on; with
    team talk, that many seconds later again (the options are shown, the answers wait). A slide has no deadline:
    the host's key moves it on."""
    if not _asks(room, index):
        return {"question_started_at": timezone.now(), "deadline": None}
    opens = timezone.now() + timedelta(seconds=room.reading_seconds + room.team_talk_seconds)
    # The question's own time when it carries one, the room's timer otherwise; extra time stretches either.
    timer_ms = question_timer_ms(round_id=room.round_id, timer_seconds=room.timer_seconds, index=index)
    window = machine.time_window_ms(timer_ms=timer_ms, time_percent=closing_percent(room.pk))
    return {"question_started_at": opens, "deadline": opens + timedelta(milliseconds=window)}


def game_act(
    *, room_id: int, action: Action, expected_phase: str | None = None, expected_index: int | None = None
) -> bool:
    """Apply a host action (start, next, close). Returns False when the room had already moved on."""
    room = Room.objects.get(pk=room_id)
    if expected_phase is not None and (room.phase != expected_phase or room.question_index != expected_index):
        return False
    slide = room.phase == Phase.QUESTION and not _asks(room, room.question_index)
    if action is Action.CLOSE and not slide:
        return question_close(room_id=room_id, question_index=room.question_index)
    total, more_coming, expected = room.question_count, False, None
    if room.written_live:
        # Its round is still being written: what is ready now, and whether more may come.
        readiness = round_readiness(round_id=room.round_id)
        total, more_coming, expected = max(readiness.ready, room.question_count), readiness.writing, readiness.expected
    try:
        target = machine.transition(room.position, action, total=total, more_coming=more_coming, slide=slide)
    except machine.IllegalMove:
        raise NotNow() from None
    if action is Action.START and not room.players.filter(removed=False).exists():
        raise NotNow(_("Wait for at least one player to join before starting."))
    if target == room.position:
        # The next question is still being checked: the room waits for it (the clock moves it on, `writing_tick`).
        with transaction.atomic():
            waits = Room.objects.filter(
                pk=room.pk, phase=room.phase, question_index=room.question_index, waiting_since__isnull=True
            ).update(waiting_since=timezone.now(), question_count=total, seq=F("seq") + 1)
            if waits:
                events.room_changed(room_id=room.pk)
        return bool(waits)
    fields = _start_question_fields(room, target.index) if target.phase == Phase.QUESTION else {}
    if room.written_live:
        fields.update(_written_live_fields(target, ready=total, expected=expected))
    with transaction.atomic():
        moved = _compare_and_set(room, target, **fields)
        if moved:
            events.room_changed(room_id=room.pk)
    return moved


def _written_live_fields(target: Position, *, ready: int, expected: int | None, note: str = "short") -> dict:
    """A room on a round written while it plays: its ready count, and why it ended early (fewer than asked)."""
    fields: dict = {"question_count": ready, "waiting_since": None}
    if target.phase == Phase.FINISHED and expected is not None and ready < expected:
        fields["end_note"] = note
    return fields


def writing_tick() -> int:
    """The clock's part for rooms playing a round still being written (every process's ticker calls it): each
    follows its round's ready count, and one waiting at a leaderboard moves on to its next question once that is
    ready, or ends with the questions it had when the writing ended or ROOM_WRITING_WAIT_SECONDS ran out. Returns
    how many rooms moved."""
    moved = 0
    rooms = (
        Room.objects.filter(written_live=True)
        .exclude(phase=Phase.FINISHED)
        .annotate(ready=Count("round__entries"))
        .values_list("pk", "ready", "round__writing", "round__expected_count", "question_count", "waiting_since")
    )
    waited_enough = timezone.now() - timedelta(seconds=settings.ROOM_WRITING_WAIT_SECONDS)
    for room_id, ready, writing, expected, count, waiting_since in list(rooms):
        ready = max(ready, count)
        if waiting_since is None:
            if ready != count and Room.objects.filter(pk=room_id, question_count=count).update(
                question_count=ready, seq=F("seq") + 1
            ):
                events.room_changed(room_id=room_id)
            continue
        room = Room.objects.get(pk=room_id)
        if room.phase != Phase.LEADERBOARD:
            continue
        if room.question_index + 1 < ready:
            target = Position(Phase.QUESTION, room.question_index + 1)
            fields = _start_question_fields(room, target.index)
        elif not writing or waiting_since <= waited_enough:
            target, fields = Position(Phase.FINISHED, room.question_index), {}
        else:
            if ready != count and Room.objects.filter(pk=room_id, question_count=count).update(
                question_count=ready, seq=F("seq") + 1
            ):
                events.room_changed(room_id=room_id)
            continue
        note = "short" if not writing else "timeout"
        fields.update(_written_live_fields(target, ready=ready, expected=expected, note=note))
        with transaction.atomic():
            if _compare_and_set(room, target, **fields):
                events.room_changed(room_id=room_id)
                moved += 1
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
    question = round_question_facts(round_id=room.round_id, position=question_index)
    timer_ms = machine.question_timer_ms(room_seconds=room.timer_seconds, question_seconds=question.seconds)
    if not kind_of(question).scored:
        return  # a poll: no points, and every streak stays as it was
    # Rows as tuples, not model objects: this runs with the room's row locked, and its CPU time is the GIL's.
    answers = {
        player_id: (answer_id, elapsed_ms, window_ms or timer_ms, correct, credit)
        for answer_id, player_id, elapsed_ms, window_ms, correct, credit in Answer.objects.filter(
            Q(correct=True) | Q(credit__gt=0), room=room, question_index=question_index
        ).values_list("pk", "player_id", "elapsed_ms", "window_ms", "correct", "credit")
    }
    answer_rows, player_rows = [], []
    speed_bonus = ways.speed_bonus(room)
    for player_id, score, streak in room.players.filter(removed=False).values_list("pk", "score", "streak"):
        # A wrong answer keeps the points it was stored with (none); only those that earn some are written.
        answer_id, elapsed_ms, window_ms, correct, credit = answers.get(player_id, (None, 0, timer_ms, False, None))
        scored = machine.answer_score(
            streak=streak,
            correct=correct,
            elapsed_ms=elapsed_ms,
            window_ms=window_ms,
            speed_bonus=speed_bonus,
            credit=credit,
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
    if connection.vendor == "postgresql":
        # Each column as one array: a room of 10,000 was 30,000 placeholders, which the driver split and
        # converted in Python on every close (the largest part of a big room's reveal); now as many as columns.
        columns = [model._meta.pk, *(model._meta.get_field(f) for f in fields)]
        arrays = [list(column) for column in zip(*rows, strict=True)]
        unnest = ", ".join(f"%s::{field.db_type(connection)}[]" for field in columns)
        names = ", ".join(f"column{i + 1}" for i in range(len(columns)))
        sql = f"UPDATE {table} SET {sets} FROM unnest({unnest}) AS v({names}) WHERE {table}.{pk} = v.column1"
        with connection.cursor() as cursor:
            cursor.execute(sql, arrays)
        return
    row = "(" + ", ".join(["%s"] * (len(fields) + 1)) + ")"
    sql = f"UPDATE {table} SET {sets} FROM (VALUES {', '.join([row] * len(rows))}) AS v WHERE {table}.{pk} = v.column1"
    with connection.cursor() as cursor:
        cursor.execute(sql, [value for values in rows for value in values])


def resume_after_outage() -> int:
    """After the database was unreachable, give every open question at least a few seconds more, so answers
    held back by the outage land before the clock closes it. Idempotent: every process's clock may call it."""
    floor = timezone.now() + timedelta(seconds=settings.DB_OUTAGE_RESUME_SECONDS)
    # In a room with extra time the deadline is the last player's: everyone's own must reach the floor.
    open_rooms = Room.objects.filter(phase=Phase.QUESTION, deadline__isnull=False).annotate(
        closing=Max("players__time_percent", filter=Q(players__removed=False))
    )
    extended = 0
    with transaction.atomic():
        for room_id, round_id, index, timer_seconds, deadline, closing in open_rooms.values_list(
            "pk", "round_id", "question_index", "timer_seconds", "deadline", "closing"
        ):
            timer_ms = question_timer_ms(round_id=round_id, timer_seconds=timer_seconds, index=index)
            needed = floor + timedelta(
                milliseconds=machine.own_deadline_offset_ms(
                    timer_ms=timer_ms, time_percent=100, closing_percent=closing or 100
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
