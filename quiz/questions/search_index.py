"""Full-text search of the questions' words, one way per database: PostgreSQL's text search (a GIN index on the
questions' words, `to_tsvector('simple', …)`) in production, SQLite's FTS5 (a virtual table kept in step with
`quiz_question` by triggers) on the embedded default.

A host's words are never handed to either query language as typed: they are cut into words of letters and digits
(`search_words`), and each word is quoted by this module, so quotes, `*`, `NEAR`, `AND`, parentheses or control
characters in a search are only characters, never syntax. The 'simple' configuration (no stemming, no stop
words) and FTS5's unicode61 tokenizer with the diacritics kept find the same questions for the same words: a word
matches as a prefix ("canb" finds "Canberra") in both."""

import re

from django.db import connection
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models import BooleanField, Q
from django.db.models.expressions import RawSQL

# What a search keeps of what was typed: its first characters, and its first words, each cut to a length.
MAX_SEARCH_CHARS = 200
MAX_SEARCH_WORDS = 10
MAX_WORD_CHARS = 40

_WORD = re.compile(r"[^\W_]+")

# The one expression the PostgreSQL index is built on and the query filters by (they must match for the index
# to be used).
_PG_VECTOR = (
    "to_tsvector('simple'::regconfig, coalesce(\"text\", '') || ' ' || coalesce(\"explanation\", '') || ' ' "
    "|| coalesce(\"options\"::text, ''))"
)
_PG_INDEX = "quiz_question_words"
_FTS = "quiz_question_fts"


def search_words(typed: str) -> list[str]:
    """The words a search looks for: letters and digits only, lower-cased, at most MAX_SEARCH_WORDS of them."""
    words = []
    for word in _WORD.findall(typed[:MAX_SEARCH_CHARS]):
        word = word.casefold()[:MAX_WORD_CHARS]
        if word not in words:
            words.append(word)
    return words[:MAX_SEARCH_WORDS]


def words_match(words: list[str]) -> Q | RawSQL:
    """A filter of the questions with every word (as a prefix) in their text, options or explanation; `words` from
    `search_words`. On PostgreSQL a condition on quiz_question's own row, so the planner starts from the GIN index
    and checks the few questions it finds; on SQLite the ids the FTS5 table matches."""
    if not words:
        raise ValueError("no words to search for")
    if connection.vendor == "postgresql":
        query = " & ".join(f"'{word}':*" for word in words)
        vector = _PG_VECTOR  # its columns named with their table: the bank's query joins others
        for column in ("text", "explanation", "options"):
            vector = vector.replace(f'"{column}"', f'"quiz_question"."{column}"')
        return RawSQL(f"{vector} @@ to_tsquery('simple'::regconfig, %s)", [query], output_field=BooleanField())
    if connection.vendor == "sqlite":
        query = " ".join(f'"{word}"*' for word in words)
        return Q(pk__in=RawSQL(f"SELECT rowid FROM {_FTS} WHERE {_FTS} MATCH %s", [query]))
    raise NotImplementedError(f"no word search on {connection.vendor}")


_SQLITE_TRIGGERS = {
    f"{_FTS}_ai": f"""CREATE TRIGGER IF NOT EXISTS {_FTS}_ai AFTER INSERT ON quiz_question BEGIN
        INSERT INTO {_FTS}(rowid, text, explanation, options) VALUES (new.id, new.text, new.explanation, new.options);
        END""",
    f"{_FTS}_ad": f"""CREATE TRIGGER IF NOT EXISTS {_FTS}_ad AFTER DELETE ON quiz_question BEGIN
        INSERT INTO {_FTS}({_FTS}, rowid, text, explanation, options)
        VALUES ('delete', old.id, old.text, old.explanation, old.options);
        END""",
    f"{_FTS}_au": f"""CREATE TRIGGER IF NOT EXISTS {_FTS}_au AFTER UPDATE ON quiz_question BEGIN
        INSERT INTO {_FTS}({_FTS}, rowid, text, explanation, options)
        VALUES ('delete', old.id, old.text, old.explanation, old.options);
        INSERT INTO {_FTS}(rowid, text, explanation, options) VALUES (new.id, new.text, new.explanation, new.options);
        END""",
}


def search_index_install(db: BaseDatabaseWrapper) -> None:
    """Make the database's word index (the migration that brings it runs this)."""
    with db.cursor() as cursor:
        if db.vendor == "postgresql":
            cursor.execute(f"CREATE INDEX IF NOT EXISTS {_PG_INDEX} ON quiz_question USING gin ({_PG_VECTOR})")
        elif db.vendor == "sqlite":
            cursor.execute(
                f"CREATE VIRTUAL TABLE IF NOT EXISTS {_FTS} USING fts5(text, explanation, options, "
                f"content='quiz_question', content_rowid='id', tokenize='unicode61 remove_diacritics 0')"
            )
    search_index_repair(db)


def search_index_repair(db: BaseDatabaseWrapper) -> None:
    """SQLite's triggers go with the table they are on, and Django rebuilds a table to alter it (a new table, the
    rows copied, the old one dropped): a later migration of quiz_question loses them, and the index would stop
    following the questions. So after every migrate (QuizConfig.ready), where the FTS5 table exists and a trigger
    is missing, the triggers are made again and the index rebuilt. PostgreSQL alters in place: nothing to mend."""
    if db.vendor != "sqlite":
        return
    tables = set(db.introspection.table_names())
    if _FTS not in tables or "quiz_question" not in tables:
        return  # not installed (or migrated back before it)
    with db.cursor() as cursor:
        cursor.execute(
            "SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'quiz_question' AND name LIKE %s",
            [f"{_FTS}_%"],
        )
        present = {name for (name,) in cursor.fetchall()}
        if present != set(_SQLITE_TRIGGERS):
            for sql in _SQLITE_TRIGGERS.values():
                cursor.execute(sql)
            cursor.execute(f"INSERT INTO {_FTS}({_FTS}) VALUES ('rebuild')")


def search_index_drop(db: BaseDatabaseWrapper) -> None:
    with db.cursor() as cursor:
        if db.vendor == "postgresql":
            cursor.execute(f"DROP INDEX IF EXISTS {_PG_INDEX}")
        elif db.vendor == "sqlite":
            for name in _SQLITE_TRIGGERS:
                cursor.execute(f"DROP TRIGGER IF EXISTS {name}")
            cursor.execute(f"DROP TABLE IF EXISTS {_FTS}")
