"""Reading rows straight from a cursor, for the game's hottest reads (a room's picture, judging answers): the
ORM spends most of such a read building and compiling its query (bench/game_path.py), a cursor does not. What
the models would have converted is converted here: SQLite's booleans come as 0 and 1, its timestamps as naive
text. No model objects, no signals."""

from datetime import UTC, datetime

from django.db import connection
from django.utils.dateparse import parse_datetime


def aware(value) -> datetime | None:
    """A timestamp from a cursor as the models would give it: PostgreSQL's is aware already; SQLite's comes
    as the naive UTC text or datetime Django stored."""
    if value is None or isinstance(value, datetime) and value.tzinfo is not None:
        return value
    if isinstance(value, str):
        value = parse_datetime(value)
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def fetch(sql: str, params: list | tuple) -> list[tuple]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()
