"""The team board read from the stored answers: the live board in a room's picture, the results page and the
per-team CSV all come from here, so they agree with each other and with Answer.points (lobby/rules/teams.py scores)."""

import io
from dataclasses import dataclass

from django.utils.translation import gettext_lazy as _

from core.spreadsheet import csv_writer
from lobby.models import Answer, Player, Room, Team, VoidedQuestion
from lobby.rules import machine, teams

# An auto team's name, by its colour (lobby.rules.teams.COLOURS), in the reader's language.
COLOUR_NAMES = {
    "red": _("Red team"),
    "blue": _("Blue team"),
    "green": _("Green team"),
    "yellow": _("Yellow team"),
    "purple": _("Purple team"),
    "orange": _("Orange team"),
    "pink": _("Pink team"),
    "teal": _("Teal team"),
}


def colour_of(order: int) -> str:
    return teams.COLOURS[order % len(teams.COLOURS)]


def team_name(name: str, order: int) -> str:
    """A named team's name, or an auto team's colour in the language active now."""
    return name or str(COLOUR_NAMES[colour_of(order)])


@dataclass(frozen=True)
class TeamLine:
    id: int
    name: str  # the host's; empty for an auto team (its colour names it)
    order: int
    colour: str
    size: int
    score: float
    rank: int
    per_question: dict[int, float]

    @property
    def display_name(self) -> str:
        return team_name(self.name, self.order)

    @property
    def shown_score(self) -> int:
        return round(self.score)


def counted_questions(*, position: machine.Position, voided: set[int]) -> list[int]:
    """The questions a team's score adds up: closed and not voided."""
    return [index for index in machine.closed_questions(position) if index not in voided]


def board(
    *, room_id: int, position: machine.Position, voided: set[int], members: dict[int, list[int]] | None = None
) -> list[TeamLine]:
    """The room's teams in their order with their scores and ranks. `members` (team id -> active player ids)
    when the caller has read the players already; otherwise read here."""
    rows = list(Team.objects.filter(room_id=room_id).order_by("order").values_list("pk", "name", "order"))
    if members is None:
        members = {}
        for player_id, team_id in (
            Player.objects.filter(room_id=room_id, removed=False, team__isnull=False)
            .order_by("pk")
            .values_list("pk", "team_id")
        ):
            members.setdefault(team_id, []).append(player_id)
    by_team = {team_id: members.get(team_id, []) for team_id, _name, _order in rows}
    counted = counted_questions(position=position, voided=voided)
    players = [player for team in by_team.values() for player in team]
    points = {}
    if counted and players:
        points = {
            (player_id, index): value
            for player_id, index, value in Answer.objects.filter(
                room_id=room_id, question_index__in=counted, player_id__in=players
            ).values_list("player_id", "question_index", "points")
        }
    scores = {score.team: score for score in teams.team_scores(members=by_team, questions=counted, points=points)}
    return [
        TeamLine(
            id=team_id,
            name=name,
            order=order,
            colour=colour_of(order),
            size=scores[team_id].size,
            score=scores[team_id].total,
            rank=scores[team_id].rank,
            per_question=scores[team_id].per_question,
        )
        for team_id, name, order in rows
    ]


def picture_part(room: dict, players: list[tuple], voided: list[int]) -> tuple[dict, dict[int, tuple[int, int]]]:
    """The teams entry's board in the room's picture (lobby/rules/ways.py): at most 8 teams, so the common part
    stays small (name, colour, size, score, rank), and each player's team and place within it. Nothing without
    teams. `room` is the picture's row, `players` its rows (id, nickname, score, percent, asks, team)."""
    if room["teams_mode"] == teams.TeamsMode.OFF:
        return {}, {}
    members: dict[int, list[int]] = {}
    scores: dict[int, int] = {}
    for player_id, _nickname, score, _percent, _asks, team_id in players:
        if team_id is not None:
            members.setdefault(team_id, []).append(player_id)
            scores[player_id] = score
    position = machine.Position(machine.Phase(room["phase"]), room["question_index"])
    lines = board(room_id=room["id"], position=position, voided=set(voided), members=members)
    places = teams.places_in_team(members=members, scores=scores)
    team_of = {player: team for team, players in members.items() for player in players}
    shown = [
        # An auto team's name is empty: each screen names it by its colour in its own language.
        {
            "id": line.id,
            "name": line.name,
            "colour": line.colour,
            "size": line.size,
            "score": line.shown_score,
            "rank": line.rank,
        }
        for line in lines
    ]
    return {"teams": shown}, {player: (team_of[player], place) for player, place in places.items()}


def team_names(room: Room) -> dict[int, str] | None:
    """A room's teams' names by id (an auto team's colour in the language active now); None without teams."""
    if room.teams_mode == teams.TeamsMode.OFF:
        return None
    return {team.pk: team_name(team.name, team.order) for team in room.teams.all()}


def room_board(room: Room) -> list[TeamLine]:
    """A room's board as it stands (the results page, the CSV)."""
    voided = set(VoidedQuestion.objects.filter(room=room).values_list("question_index", flat=True))
    return board(room_id=room.pk, position=room.position, voided=voided)


def teams_csv(*, room: Room) -> str:
    """One row per team, best first: its rank, name, members, total (the sum of its per-question means) and
    each question's mean of its members' points (empty for a question not counted: open, not played, voided)."""
    lines = sorted(room_board(room), key=lambda line: (line.rank, line.order))
    nicknames: dict[int, list[str]] = {}
    for team_id, nickname in (
        Player.objects.filter(room=room, removed=False, team__isnull=False)
        .order_by("pk")
        .values_list("team_id", "nickname")
    ):
        nicknames.setdefault(team_id, []).append(nickname)
    out = io.StringIO()
    writer = csv_writer(out)
    questions = range(room.question_count)
    writer.writerow(["rank", "team", "members", "players", "score", *[f"Q{index + 1}" for index in questions]])
    for line in lines:
        cells = [f"{line.per_question[index]:.1f}" if index in line.per_question else "" for index in questions]
        writer.writerow(
            [
                line.rank,
                line.display_name,
                line.size,
                " | ".join(nicknames.get(line.id, [])),
                f"{line.score:.1f}",
                *cells,
            ]
        )
    return out.getvalue()
