"""Homework's rows written out as SQL and made into model instances as the ORM makes them: the page's room with
its assignment and round, a player's place with its player, room and assignment. Compiling those ORM queries was
most of the CPU of the requests every homework player sends (bench/homework_load.py)."""

from typing import Any

from django.db import connection

from lobby.exceptions import RoomNotFound
from lobby.models import Assignment, HomeworkProgress, Player, Room
from lobby.services.rooms import normalize_code
from quiz.models import Round


def room_for_page(code: object) -> Room:
    """The room of a code with its assignment (if it has one) and round, in one query; RoomNotFound. Written
    out: the ORM's compiling of it was most of the CPU of the page and the join, which every player opens."""
    quote = connection.ops.quote_name
    room, assignment, round_ = (quote(model._meta.db_table) for model in (Room, Assignment, Round))
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {_columns((Room, Assignment, Round))} FROM {room}"
            f" LEFT JOIN {assignment} ON {assignment}.{quote('room_id')} = {room}.{quote('id')}"
            f" JOIN {round_} ON {round_}.{quote('id')} = {room}.{quote('round_id')}"
            f" WHERE {room}.{quote('code')} = %s",
            [normalize_code(code)],
        )
        row = cursor.fetchone()
    if row is None:
        raise RoomNotFound()
    found, its_assignment, its_round = _models_of(row, (Room, Assignment, Round))
    found.round = its_round
    found.assignment = its_assignment  # None: room.assignment raises Assignment.DoesNotExist, as the ORM's would
    if its_assignment is not None:
        its_assignment.room = found
    return found


_PLACE_MODELS = (HomeworkProgress, Player, Room, Assignment)
_place_sql: str | None = None


def _place_query() -> str:
    global _place_sql
    if _place_sql is None:
        quote = connection.ops.quote_name
        columns = _columns(_PLACE_MODELS)
        progress, player, room, assignment = (quote(model._meta.db_table) for model in _PLACE_MODELS)
        _place_sql = (
            f"SELECT {columns} FROM {progress}"
            f" JOIN {player} ON {player}.{quote('id')} = {progress}.{quote('player_id')}"
            f" JOIN {room} ON {room}.{quote('id')} = {player}.{quote('room_id')}"
            f" JOIN {assignment} ON {assignment}.{quote('room_id')} = {room}.{quote('id')}"
            f" WHERE {progress}.{quote('player_id')} = %s"
        )
    return _place_sql


def read_place(player_id: int) -> HomeworkProgress | None:
    """A player's place with its player, room and assignment (as select_related would give them), or None."""
    with connection.cursor() as cursor:
        cursor.execute(_place_query(), [player_id])
        row = cursor.fetchone()
    if row is None:
        return None
    place, player, room, assignment = _models_of(row, _PLACE_MODELS)
    room.assignment = assignment
    player.room = room
    place.player = player
    return place


_open_sql: dict[str, str] = {}


def open_place(player_id: int, question_index: int, at, own_deadline) -> bool:
    """Start the clock of a player's question if their place is still as read (at that question, not opened, not
    finished): one conditional UPDATE, written out (the ORM's building of it was a tenth of an opening's CPU).
    Whether it did."""
    sql = _open_sql.get(connection.vendor)
    if sql is None:
        quote = connection.ops.quote_name
        sql = _open_sql[connection.vendor] = (
            f"UPDATE {quote(HomeworkProgress._meta.db_table)} SET {quote('opened_at')} = %s,"
            f" {quote('own_deadline')} = %s WHERE {quote('player_id')} = %s AND {quote('question_index')} = %s"
            f" AND {quote('opened_at')} IS NULL AND {quote('finished_at')} IS NULL"
        )
    field = HomeworkProgress._meta.get_field("opened_at")  # own_deadline is a DateTimeField too
    with connection.cursor() as cursor:
        cursor.execute(
            sql,
            [
                field.get_db_prep_save(at, connection),
                field.get_db_prep_save(own_deadline, connection),
                player_id,
                question_index,
            ],
        )
        return cursor.rowcount == 1


def _columns(models) -> str:
    quote = connection.ops.quote_name
    return ", ".join(
        f"{quote(model._meta.db_table)}.{quote(field.column)}"
        for model in models
        for field in model._meta.concrete_fields
    )


# Per model and database vendor: the fields' attnames and, for each column, the converters the ORM would apply
# (the backend's, then the field's own), found once. Finding them again for every field of every row was a tenth
# of the server's CPU for a homework request (bench/homework_load.py under py-spy).
_readers: dict[tuple[str, str, type], tuple[list[str], list[tuple[int, Any, list]], int]] = {}


def _reader(model) -> tuple[list[str], list[tuple[int, Any, list]], int]:
    key = (connection.alias, connection.vendor, model)
    found = _readers.get(key)
    if found is None:
        fields = model._meta.concrete_fields
        converting = []
        for at, field in enumerate(fields):
            column = field.get_col(model._meta.db_table)
            converters = connection.ops.get_db_converters(column) + field.get_db_converters(connection)
            if converters:
                converting.append((at, column, converters))
        found = _readers[key] = ([field.attname for field in fields], converting, fields.index(model._meta.pk))
    return found


def _models_of(row, models) -> list:
    """One instance of each model from a row of _columns(models), as the ORM makes them (its converters: SQLite's
    datetimes are text, made aware here; None for a model whose columns a LEFT JOIN left empty)."""
    made, at = [], 0
    for model in models:
        attnames, converting, pk_at = _reader(model)
        values = list(row[at : at + len(attnames)])
        at += len(attnames)
        if values[pk_at] is None:
            made.append(None)
            continue
        for index, column, converters in converting:
            value = values[index]
            for converter in converters:
                value = converter(value, column, connection)
            values[index] = value
        made.append(model.from_db(connection.alias, attnames, values))
    return made


def insert_values(instance) -> tuple[list[str], list[Any]]:
    """The columns and values the ORM would insert for a new `instance` (its defaults, auto_now_add)."""
    fields = [field for field in instance._meta.concrete_fields if not field.primary_key]
    values = [field.get_db_prep_save(field.pre_save(instance, True), connection) for field in fields]
    return [connection.ops.quote_name(field.column) for field in fields], values
