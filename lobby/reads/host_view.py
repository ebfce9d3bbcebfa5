"""What the host's screen is sent: what it draws, never every player. A room of 10,000 sends its host the same
few dozen lines as a room of 100, so a projector laptop on venue Wi-Fi keeps up.

The host's frame is the common part of the picture (counts, the question, the distribution at a reveal, the
top places, the teams) and a few players' lines, chosen in this order until HOST_FRAME_BUDGET is reached:
  1. players waiting for an answer to "I need more time" (the oldest requests first),
  2. the top of the leaderboard,
  3. the newest arrivals (the lobby's chips),
  4. players the host has given extra time.
Each listed player's line carries their score and rank, their result at a reveal (without the words the host
hid: a hidden typed answer is None, a hidden open answer is left out of its list), their time and request.
The totals (`player_count`, `time_request_count`, `extra_time_count`) count everyone. The full list is the
host's own paginated page (`players_page`); the results CSV has every answer."""

import heapq
import json

from django.core.paginator import Page, Paginator

from core.wordfilter import fold
from lobby.models import Player
from lobby.rules import machine
from quiz.selectors import round_check_label

HOST_TOP = 10  # the final board's places (the leaderboard draws 5)
HOST_NEWEST = 20  # the lobby's chips: two columns of ten at 1366x768
HOST_ASKED = 20  # requests for more time listed by name; the count says how many in all
HOST_TIMED = 20  # players with extra time listed by name
# Under 64 KB whatever the nicknames and answers: lines that would pass it are left out (the count still says).
HOST_FRAME_BUDGET = 60_000
PAGE_SIZE = 100
EXTRA_TIME = "extra_time"
TIME_REQUESTS = "time_requests"


def _size(value) -> int:
    return len(json.dumps(value).encode())


def _unhidden(option, hidden: set[str]):
    """A result's answer without the players' words the host hid (folded)."""
    if isinstance(option, str):
        return None if fold(option) in hidden else option
    if isinstance(option, list):
        return [text for text in option if not (isinstance(text, str) and fold(text) in hidden)]
    return option


def listed_players(standings) -> list[int]:
    """The ids of the players the host's frame names, in priority order (before the budget)."""
    players = standings.players
    asked = [player_id for player_id in standings.time_requests if player_id in players][:HOST_ASKED]
    top = heapq.nsmallest(HOST_TOP, players, key=lambda player_id: (players[player_id][2], player_id))
    newest = list(players)[-HOST_NEWEST:][::-1]
    timed = [player_id for player_id in standings.extra_time if player_id in players][:HOST_TIMED]
    return list(dict.fromkeys([*asked, *top, *newest, *timed]))


def host_frame(common: dict, standings) -> dict:
    """The host's frame of a picture's common part and its standings (lobby.reads.selectors.Standings): bounded in
    size whatever the room's size (see the module's docstring)."""
    frame = dict(common)
    teams = "teams" in frame
    results = standings.results if "reveal" in frame else None
    hidden = set(standings.hidden)
    asking = set(standings.time_requests)
    lines, chosen_results = [], {}
    room_left = HOST_FRAME_BUDGET - _size(frame) - 200  # the totals and the keys below
    for player_id in listed_players(standings):
        nickname, score, rank = standings.players[player_id]
        line = {"id": player_id, "nickname": nickname, "score": score, "rank": rank}
        if teams:
            line["team"] = standings.teams.get(player_id, (None, 0))[0]
        result = None
        if results is not None and player_id in results:
            option, correct, points = results[player_id]
            result = {"option": _unhidden(option, hidden) if hidden else option, "correct": correct, "points": points}
        cost = _size(line) + _size(result) + 40  # its key, its time and its request
        if cost > room_left:
            continue
        room_left -= cost
        lines.append(line)
        if result is not None:
            chosen_results[str(player_id)] = result
    lines.sort(key=lambda line: line["id"])  # join order: the lobby draws the newest last
    frame["players"] = lines
    frame[EXTRA_TIME] = {
        str(line["id"]): standings.extra_time[line["id"]] for line in lines if line["id"] in standings.extra_time
    }
    frame["extra_time_count"] = len(standings.extra_time)
    frame[TIME_REQUESTS] = [line["id"] for line in lines if line["id"] in asking]
    frame["time_request_count"] = len(standings.time_requests)
    if "check_status" in frame:
        frame["check_label"] = round_check_label(status=frame["check_status"], counts=standings.check_counts)
    if results is not None:
        frame["reveal"] = {**frame["reveal"], "results": chosen_results}
    return frame


def players_page(*, room_id: int, number: object) -> Page:
    """One page of every player still in the room, in join order, each with `rank` (the host's full list)."""
    rows = list(
        Player.objects.filter(room_id=room_id, removed=False)
        .order_by("pk")
        .values("pk", "nickname", "score", "time_percent", "asks_more_time")
    )
    ranks = machine.rank([(row["pk"], row["score"]) for row in rows])
    page = Paginator(rows, PAGE_SIZE).get_page(number)
    for row in page.object_list:
        row["rank"] = ranks[row["pk"]]
    return page
