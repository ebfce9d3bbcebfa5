"""The rows of a room's picture (lobby/reads/selectors.py `room_picture`), read from a cursor (lobby/reads/rows.py): the
picture is read on every event of every room, and through the ORM building and compiling its four queries was
most of its CPU (bench/game_path.py; a reveal of 20: 6.06 -> 1.29 ms). Rows as tuples, not model objects."""

from django.db import connection

from lobby.models import Answer, Player, Room, VoidedQuestion
from lobby.reads.rows import aware, fetch
from lobby.rules import ways
from quiz.models import Round

_BASE_FIELDS = ("id", "seq", "code", "phase", "round_id", "question_count", "question_index", "timer_seconds", "locked",
                "deadline", "option_seed", "round__title", "round__check_status", "question_started_at",
                "round__check_counts", "hidden_words")  # fmt: skip
# And what each way to play stores (lobby/rules/ways.py).
_WAY_FIELDS = ways.stored_fields()
_ROOM_FIELDS = _BASE_FIELDS + tuple(name for name in _WAY_FIELDS if name not in _BASE_FIELDS)
_ROOM_BOOLEANS = ("locked", *(name for name, kind in _WAY_FIELDS.items() if kind is bool))
_ROOM_TIMES = ("deadline", "question_started_at", "waiting_since")

_ROOM_SQL = (
    "SELECT " + ", ".join(f"q.{name[len('round__'):]}" if name.startswith("round__") else f"r.{name}"
                          for name in _ROOM_FIELDS)
    + f" FROM {Room._meta.db_table} r JOIN {Round._meta.db_table} q ON q.id = r.round_id WHERE r.id = %s"
)  # fmt: skip
# In join order (the host's lobby shows the newest last); id is the primary key, so no plan needs statistics.
_PLAYERS_SQL = (
    "SELECT id, nickname, score, time_percent, asks_more_time, team_id "
    f"FROM {Player._meta.db_table} WHERE room_id = %s AND NOT removed ORDER BY id"
)
_VOIDED_SQL = f"SELECT question_index FROM {VoidedQuestion._meta.db_table} WHERE room_id = %s ORDER BY question_index"
# One query for the count, the distribution and the results: one row per player (still in the room) who answered.
_ANSWERS_SQL = (
    "SELECT a.player_id, a.option, a.response, a.correct, a.points "
    f"FROM {Answer._meta.db_table} a JOIN {Player._meta.db_table} p ON p.id = a.player_id "
    "WHERE a.room_id = %s AND a.question_index = %s AND NOT p.removed ORDER BY a.id"
)


def room_row(room_id: int) -> dict:
    """The room's row and its round's title, check status and writing flag, as the models would give them."""
    found = fetch(_ROOM_SQL, [room_id])
    if not found:
        raise Room.DoesNotExist(f"Room {room_id} does not exist.")
    room = dict(zip(_ROOM_FIELDS, found[0], strict=True))
    for name in _ROOM_BOOLEANS:
        room[name] = bool(room[name])
    for name in _ROOM_TIMES:
        room[name] = aware(room[name])
    counts = Round._meta.get_field("check_counts")
    room["round__check_counts"] = counts.from_db_value(room["round__check_counts"], None, connection) or {}
    room["hidden_words"] = Room._meta.get_field("hidden_words").from_db_value(room["hidden_words"], None, connection)
    return room


def answer_rows(room_id: int, question_index: int) -> list[tuple]:
    """(player, option, response, correct, points) of each answer to the question by a player still in the room."""
    response = Answer._meta.get_field("response")
    return [
        (player_id, option, response.from_db_value(given, None, connection), bool(correct), points)
        for player_id, option, given, correct, points in fetch(_ANSWERS_SQL, [room_id, question_index])
    ]


def player_rows(room_id: int) -> list[tuple]:
    """(id, nickname, score, time percent, asks for more time, team) of each player still in the room."""
    return [
        (player_id, nickname, score, percent, bool(asks), team_id)
        for player_id, nickname, score, percent, asks, team_id in fetch(_PLAYERS_SQL, [room_id])
    ]


def voided_indexes(room_id: int) -> list[int]:
    return [index for (index,) in fetch(_VOIDED_SQL, [room_id])]
