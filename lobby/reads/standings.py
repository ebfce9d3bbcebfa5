"""Each server process's newest picture of each room, so that one event to a room of 2,000 costs each process
one read of the standings, not one per connection.

A room event carries only the common part of the picture (the same for every reader, a few hundred bytes). Each
consumer then needs its own line of the standings (a player) or all of them (a host): it asks here for a picture
at least as new as the event. The first consumer of the process to ask loads it (one database read); the others
wait for that same load. The process that sent the event already holds the picture it built.

A small room's event carries its standings too (`carried`, at most CARRY_PLAYERS lines, a few KB): then no
process reads the picture again, and one event costs the room one picture, built by its sender, however many
processes hold its sockets. A big room's standings stay out of the event: sent through Redis to every process on
every event, 2,000 lines would cost more than the one read each process makes. But a big room's standings often
do not change from one event to the next (a question opening after the leaderboard: the same scores and ranks): its
event then names the seq of the picture whose standings it keeps (`standings_of`), and a process holding that
picture serves the event from it with no read (issue 47: half a room's sockets waited for that read)."""

import asyncio
import threading
from collections import OrderedDict
from collections.abc import Awaitable, Callable

from lobby.reads.selectors import Picture, Standings

# Rooms whose newest picture a process keeps (least recently used go first); a picture of 2,000 is ~200 KiB.
KEEP_ROOMS = 500
LOAD_ATTEMPTS = 3
# Rooms up to this many players send their standings with each event (a line is ~30 bytes packed).
CARRY_PLAYERS = 200

_lock = threading.Lock()
_latest: OrderedDict[int, Picture] = OrderedDict()
_loading: dict[tuple[int, int], asyncio.Future] = {}  # (id of the event loop, room id) -> the load in flight


def remember(room_id: int, picture: Picture) -> None:
    """Keep `picture` as the room's newest unless a newer one is held. Thread-safe (the broadcast's thread)."""
    with _lock:
        held = _latest.get(room_id)
        # A held picture of another room with this id (a test database reuses ids) is replaced.
        if (
            held is None
            or held.snapshot["seq"] <= picture.snapshot["seq"]
            or held.snapshot["code"] != picture.snapshot["code"]
        ):
            _latest[room_id] = picture
        _latest.move_to_end(room_id)
        while len(_latest) > KEEP_ROOMS:
            _latest.popitem(last=False)


def newest(room_id: int) -> Picture | None:
    """The room's newest picture this process holds, whatever its seq."""
    with _lock:
        return _latest.get(room_id)


def unchanged_since(before: Picture | None, picture: Picture) -> int | None:
    """The seq of `before` if `picture` (newer, of the same room) has the very same standings, else None."""
    if before is None or before.snapshot["code"] != picture.snapshot["code"]:
        return None
    if before.snapshot["seq"] >= picture.snapshot["seq"] or before.standings != picture.standings:
        return None
    return before.snapshot["seq"]


def held(room_id: int, code: str, seq: int) -> Picture | None:
    with _lock:
        picture = _latest.get(room_id)
    if picture is None or picture.snapshot["code"] != code or picture.snapshot["seq"] < seq:
        return None
    return picture


async def picture_at_least(room_id: int, code: str, seq: int, load: Callable[..., Awaitable[Picture]]) -> Picture:
    """A picture of the room at `seq` or newer: held, or loaded once for every consumer of this loop that asks."""
    picture = None
    for _ in range(LOAD_ATTEMPTS):
        found = held(room_id, code, seq)
        if found is not None:
            return found
        loop = asyncio.get_running_loop()
        key = (id(loop), room_id)
        task = _loading.get(key)
        if task is None or task.get_loop() is not loop:
            task = loop.create_task(load(room_id=room_id))
            _loading[key] = task
            task.add_done_callback(lambda done, key=key: _loading.pop(key) if _loading.get(key) is done else None)
        # shield: one consumer going away must not cancel the load the others wait for.
        picture = await asyncio.shield(task)
        remember(room_id, picture)
        if picture.snapshot["seq"] >= seq and picture.snapshot["code"] == code:
            return picture
        # That load had started before the event's change committed: load once more.
    return picture


def carried(picture: Picture) -> dict | None:
    """The picture's standings as an event can carry them (plain lists: the channel layer packs no int keys),
    or None for a room above CARRY_PLAYERS."""
    held = picture.standings
    if len(held.players) > CARRY_PLAYERS:
        return None
    return {
        "players": [[player_id, *line] for player_id, line in held.players.items()],
        "results": None if held.results is None else [[player_id, *line] for player_id, line in held.results.items()],
        "extra_time": [[player_id, percent] for player_id, percent in held.extra_time.items()],
        "time_requests": list(held.time_requests),
        "teams": [[player_id, *line] for player_id, line in held.teams.items()],
        "check_counts": held.check_counts,
        "hidden": list(held.hidden),
    }


def take(event: dict) -> None:
    """Keep the picture a room event carries, if it carries its standings (or names a picture whose standings this
    process holds) and this process holds nothing as new (the sender holds its own, with the crowd's verdict)."""
    packed = event.get("standings")
    common = event["state"]
    if held(event["room_id"], common["code"], common["seq"]) is not None:
        return
    if packed is None:
        same = event.get("standings_of")
        prior = None if same is None else newest(event["room_id"])
        if prior is not None and prior.snapshot["code"] == common["code"] and prior.snapshot["seq"] == same:
            # The standings this process holds for the picture the event names, unchanged since: no read.
            remember(event["room_id"], Picture(snapshot=common, standings=prior.standings))
        return
    results = packed["results"]
    remember(
        event["room_id"],
        Picture(
            snapshot=common,
            standings=Standings(
                players={player_id: tuple(line) for player_id, *line in packed["players"]},
                results=None if results is None else {player_id: tuple(line) for player_id, *line in results},
                extra_time=dict(packed["extra_time"]),
                time_requests=tuple(packed["time_requests"]),
                teams={player_id: tuple(line) for player_id, *line in packed["teams"]},
                check_counts=dict(packed.get("check_counts") or {}),
                hidden=tuple(packed.get("hidden") or ()),
            ),
        ),
    )


async def picture_for(event: dict, load: Callable[..., Awaitable[Picture]]) -> Picture:
    """A picture at least as new as the room event: the one it carries, held, or loaded once (`picture_at_least`)."""
    take(event)
    common = event["state"]
    return await picture_at_least(event["room_id"], common["code"], common["seq"], load=load)
