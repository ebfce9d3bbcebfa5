"""Teams' rules: the modes, the names a host types, where a new player goes, and a team's score.
Pure: plain data in, plain data out; no database, request or channel layer (import-linter checks it).

A team's score on a question is the mean of its members' points on it (a member who did not answer counts 0), so a
team of five does not beat a team of two by being five; its total is the sum over the closed questions that were
not voided. The points are the ones stored with each answer, so every screen and file that reads them agrees."""

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

from lobby.rules.machine import rank


class TeamsMode(StrEnum):
    OFF = "off"
    AUTO = "auto"  # the server puts each new player in the smallest team, named by colour
    NAMED = "named"  # the host names the teams; each player picks one on joining (and may switch in the lobby)


MIN_TEAMS = 2
MAX_TEAMS = 8
TEAM_NAME_MAX = 30
MAX_TEAM_TALK = 30
# An auto team's colour, by its order; each has a translated name (lobby/reads/team_board.py) and a colour on screen.
COLOURS = ("red", "blue", "green", "yellow", "purple", "orange", "pink", "teal")


class BadTeams(ValueError):
    """The host's teams cannot be made as asked; the message says why (in English: the caller translates)."""


def team_names_parse(text: object) -> list[str]:
    """The host's team names, one a line: blank lines dropped, spaces collapsed, 2-8 names of 1-30 characters,
    no two the same (ignoring case). Raises BadTeams with the reason."""
    if not isinstance(text, str):
        raise BadTeams("names")
    names = [" ".join(line.split()) for line in text.splitlines()]
    names = [name for name in names if name]
    if not MIN_TEAMS <= len(names) <= MAX_TEAMS:
        raise BadTeams("count")
    for name in names:
        if len(name) > TEAM_NAME_MAX:
            raise BadTeams("long")
        if not name.isprintable():
            raise BadTeams("characters")
    if len({name.casefold() for name in names}) != len(names):
        raise BadTeams("repeated")
    return names


def smallest_team(sizes: Mapping[int, int], order: Sequence[int]) -> int:
    """Where a new player goes in an auto room: the team with the fewest members, the first in `order` on a tie.
    `sizes` maps team id -> members now; `order` lists the team ids in their order."""
    return min(order, key=lambda team: (sizes.get(team, 0), order.index(team)))


@dataclass(frozen=True)
class TeamScore:
    team: int
    size: int  # members counted (those still in the room)
    per_question: dict[int, float]  # question index -> the mean of the members' points on it
    total: float  # sum of per_question
    rank: int = 0  # competition ranking ("1224") of the totals in whole points


def team_scores(
    *,
    members: Mapping[int, Sequence[int]],
    questions: Iterable[int],
    points: Mapping[tuple[int, int], int],
) -> list[TeamScore]:
    """Each team's score, in the order `members` gives the teams. `members`: team id -> player ids; `questions`:
    the questions that count (closed, not voided); `points`: (player id, question index) -> the answer's points
    (an answer not there, or no answer, is 0). An empty team scores 0."""
    counted = list(questions)
    scores = []
    for team, players in members.items():
        per_question = {
            index: (sum(points.get((player, index), 0) for player in players) / len(players) if players else 0.0)
            for index in counted
        }
        scores.append(
            TeamScore(team=team, size=len(players), per_question=per_question, total=sum(per_question.values()))
        )
    # Ranked on the totals as every screen shows them (whole points): two teams shown with the same score share
    # their place, and a float's last digits never split them.
    ranks = rank([(score.team, round(score.total)) for score in scores])
    return [TeamScore(s.team, s.size, s.per_question, s.total, ranks[s.team]) for s in scores]


def places_in_team(*, members: Mapping[int, Sequence[int]], scores: Mapping[int, int]) -> dict[int, int]:
    """Each player's place within their own team (ties share it): player id -> place, from their scores."""
    places: dict[int, int] = {}
    for players in members.values():
        places.update(rank([(player, scores.get(player, 0)) for player in players]))
    return places
