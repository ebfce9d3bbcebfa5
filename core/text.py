"""Text from outside (a player's frame, a homework request, an imported or typed round) made safe to store and show.

Two steps, both here so every way in cleans alike:
- `safe_payload` where a request enters (the room's socket, homework's JSON endpoints): every string of the
  message loses what no column can hold — control characters (NUL breaks PostgreSQL) and lone surrogates (not
  UTF-8) become a space; tabs and line breaks stay (team names come one a line). Each field's own rules then
  judge what is left (a nickname still refuses invisible characters).
- `clean_line` for a field that is one line of text (a typed answer, a report, a question's text): the same, plus
  bidi overrides (they make text read differently from what it is), and runs of whitespace made one space.

Pure Python: the pure rules (lobby.rules.teams) may use it."""

import re
from typing import Any

# C0 controls but tab, line feed and carriage return; DEL and C1 controls; lone surrogates.
_UNSTORABLE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]")
# All of those, the three kept above, and the bidi embeddings, overrides and isolates.
_UNSAFE_IN_A_LINE = re.compile(r"[\x00-\x1f\x7f-\x9f\ud800-\udfff\u202a-\u202e\u2066-\u2069]")
# How deep a message may nest before cleaning stops descending (json.loads already bounds it).
_MAX_DEPTH = 32


def safe_text(text: str) -> str:
    """`text` with its control characters (but tab and line breaks) and lone surrogates made spaces."""
    return _UNSTORABLE.sub(" ", text)


def clean_line(text: str) -> str:
    """One line of text as stored and shown: nothing unsafe, single spaces, no spaces at either end."""
    return " ".join(_UNSAFE_IN_A_LINE.sub(" ", text).split())


def safe_payload(value: Any, _depth: int = 0) -> Any:
    """A decoded JSON message with every string in it (keys too) passed through `safe_text`."""
    if isinstance(value, str):
        return safe_text(value)
    if _depth >= _MAX_DEPTH:
        return value if not isinstance(value, dict | list) else type(value)()
    if isinstance(value, dict):
        return {safe_payload(key, _depth + 1): safe_payload(item, _depth + 1) for key, item in value.items()}
    if isinstance(value, list):
        return [safe_payload(item, _depth + 1) for item in value]
    return value
