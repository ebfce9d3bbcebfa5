"""A room event's frames, encoded once per process (issue 31): the common part of a broadcast is the same for
every player, so it is serialised once and each player's frame is that text plus their own small `you` part.

`player_text(common, you)` is exactly `json.dumps({**common, "you": you})`, at the cost of encoding `you`: the
common text, without its closing brace, is kept for the broadcast it came with — (room code, seq, sent_at), which
the sender stamps on every broadcast and heal (lobby/events.py, lobby/realtime/heal.py) — in a small per-process table.
A frame without `sent_at` (a reader's own snapshot) is encoded whole, as before. No Django: plain JSON."""

import json
import threading
from collections import OrderedDict

# Rooms × events in flight in one process: a broadcast's text is needed only while its fan-out runs.
_KEPT = 256
_prefixes: OrderedDict[tuple, str] = OrderedDict()
_lock = threading.Lock()


def _prefix(common: dict) -> str:
    if "you" in common:  # a frame's own part is added after it, never twice
        common = {key: value for key, value in common.items() if key != "you"}
    text = json.dumps(common)
    # '{}' has no members to follow: the player's part then opens the object.
    return text[:-1] + (", " if len(common) else "")


def common_prefix(common: dict) -> str:
    """The common part's JSON without its closing brace, encoded once per broadcast and process."""
    sent_at = common.get("sent_at")
    if not isinstance(sent_at, float):
        return _prefix(common)
    key = (common.get("code"), common.get("seq"), sent_at)
    with _lock:
        text = _prefixes.get(key)
        if text is not None:
            _prefixes.move_to_end(key)
            return text
    text = _prefix(common)
    with _lock:
        _prefixes[key] = text
        while len(_prefixes) > _KEPT:
            _prefixes.popitem(last=False)
    return text


def player_text(common: dict, you: dict) -> str:
    """One player's frame as text: the common part (encoded once) and their own `you`."""
    return common_prefix(common) + '"you": ' + json.dumps(you) + "}"
