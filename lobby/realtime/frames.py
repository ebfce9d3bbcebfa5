"""A room event's frames, encoded once per process (issue 31): the common part of a broadcast is the same for
every player, so it is serialised once and each player's frame is that text plus their own small `you` part.

`player_text(common, you)` is exactly `json.dumps({**common, "you": you})`, at the cost of encoding `you`: the
common text, without its closing brace, is kept for the broadcast it came with — (room code, seq, sent_at), which
the sender stamps on every broadcast and heal (lobby/events.py, lobby/realtime/heal.py) — in a small per-process table.
A frame without `sent_at` (a reader's own snapshot) is encoded whole, as before. No Django: plain JSON.

A broadcast's players' own parts are built once too (issue 47): `broadcast_text` keeps, beside the common text, every
player's `you` as text, built in one pass over the picture's standings the first time a socket of the process needs
it (`lobby.reads.selectors.player_you_texts`); each socket's frame is then a look-up and a concatenation, where it was
a dict built and encoded per socket. The texts are kept for the broadcast and the standings they came from: another
picture (a heal's, newer) gets its own. What a socket alone knows (whether it answered the question, and what) is
added per socket, so a phone's frame carries its own `you` and nobody else's, as before."""

import json
import threading
from collections import OrderedDict

# Rooms × events in flight in one process: a broadcast's text is needed only while its fan-out runs.
_KEPT = 256
_prefixes: OrderedDict[tuple, str] = OrderedDict()
_lock = threading.Lock()
# Players' texts in all the broadcasts kept (a room of 2,000 is ~300 KB of them): the oldest go first past this.
_KEPT_PLAYER_TEXTS = 50_000
_players: OrderedDict[tuple, "_PlayerTexts"] = OrderedDict()
_player_texts_held = 0


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


class _PlayerTexts:
    __slots__ = ("standings", "prefix", "index", "heads", "tails")

    def __init__(self, standings, prefix: str, index, parts: tuple[dict, dict]) -> None:
        self.standings = standings  # the parts were built from this picture's standings, and only serve it
        self.prefix = prefix
        self.index = index
        self.heads, self.tails = parts


_UNANSWERED = 'false, "option": null'


def broadcast_text(common: dict, standings, player_id: int, answered: dict, build) -> str | None:
    """One player's frame of a broadcast (`common` stamped with `sent_at`) as text, from the broadcast's players'
    texts, built once per process with `build(common, standings)` (the heads and tails of each `you`); None if the
    player is not in these standings (removed). Equal to `player_text(common, player_you(...))`."""
    key = (common.get("code"), common.get("seq"), common["sent_at"])
    held = _players.get(key)
    if held is None or held.standings is not standings:
        held = _build(key, common, standings, build)
    head = held.heads.get(player_id)
    if head is None:
        return None
    index = held.index
    own = _UNANSWERED if index not in answered else 'true, "option": ' + json.dumps(answered[index])
    return held.prefix + head + own + held.tails[player_id] + "}"


def _build(key: tuple, common: dict, standings, build) -> _PlayerTexts:
    global _player_texts_held
    prefix = common_prefix(common) + '"you": '
    held = _PlayerTexts(standings, prefix, common["question_index"], build(common, standings))
    with _lock:
        old = _players.pop(key, None)
        if old is not None:
            _player_texts_held -= len(old.heads)
        _players[key] = held
        _player_texts_held += len(held.heads)
        while len(_players) > 1 and (len(_players) > _KEPT or _player_texts_held > _KEPT_PLAYER_TEXTS):
            _, gone = _players.popitem(last=False)
            _player_texts_held -= len(gone.heads)
    return held
