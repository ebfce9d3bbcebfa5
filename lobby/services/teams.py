"""Teams: a room's teams made with it, where a joining player goes, and a player's switch in the lobby."""

from django.db import transaction
from django.utils.translation import gettext as _

from core.wordfilter import blocked
from lobby.exceptions import NotNow
from lobby.models import Player, Room, Team
from lobby.rules import teams, ways
from lobby.rules.machine import Phase
from lobby.rules.teams import BadTeams, TeamsMode
from lobby.services.common import bump


def _bad_names_message(reason: str) -> str:
    if reason == "count":
        return _("Name %(min)s to %(max)s teams, one a line.") % {"min": teams.MIN_TEAMS, "max": teams.MAX_TEAMS}
    if reason == "long":
        return _("A team name can have at most %(max)s characters.") % {"max": teams.TEAM_NAME_MAX}
    if reason == "characters":
        return _("A team name cannot hold control or invisible characters.")
    if reason == "repeated":
        return _("Two teams cannot have the same name.")
    return _("Type the team names, one a line.")


def teams_settings_clean(
    *, teams_mode: object, team_names: object = "", team_count: object = 0, team_talk_seconds: object = 0
) -> tuple[str, list[str], int]:
    """The room's team settings as given on the home page: (mode, the names of its teams, team talk seconds).
    Auto teams have no names, only a count (their colours name them). Raises NotNow with what to fix."""
    if teams_mode not in set(TeamsMode):
        raise NotNow(_("Choose how to play: each for themselves, automatic teams or named teams."))
    team_talk_seconds = ways.team_talk_clean(team_talk_seconds)
    if teams_mode == TeamsMode.OFF:
        return TeamsMode.OFF, [], 0
    if teams_mode == TeamsMode.AUTO:
        if not isinstance(team_count, int) or isinstance(team_count, bool):
            team_count = 0
        if not teams.MIN_TEAMS <= team_count <= teams.MAX_TEAMS:
            raise NotNow(_("Choose %(min)s to %(max)s teams.") % {"min": teams.MIN_TEAMS, "max": teams.MAX_TEAMS})
        return TeamsMode.AUTO, [""] * team_count, team_talk_seconds
    try:
        names = teams.team_names_parse(team_names)
    except BadTeams as error:
        raise NotNow(_bad_names_message(str(error))) from None
    if any(blocked(name) for name in names):
        raise NotNow(_("A team name has a word that cannot go on the big screen. Choose another."))
    return TeamsMode.NAMED, names, team_talk_seconds


def teams_create(*, room: Room, names: list[str]) -> None:
    """The room's teams, in the order given (an auto team's name is empty: its order gives its colour)."""
    Team.objects.bulk_create([Team(room=room, name=name, order=order) for order, name in enumerate(names)])


class TeamChooser:
    """Where each player of one batch of joins goes, for one room whose row is locked: an auto room's smallest
    team (counting the ones this batch has already put there), a named room's pick (which must be its own)."""

    def __init__(self, room: Room):
        self.mode = room.teams_mode
        self.order: list[int] = []
        self.sizes: dict[int, int] = {}
        if self.mode == TeamsMode.OFF:
            return
        self.order = list(Team.objects.filter(room=room).order_by("order").values_list("pk", flat=True))
        self.sizes = dict.fromkeys(self.order, 0)
        for team_id in Player.objects.filter(room=room, removed=False, team__in=self.order).values_list(
            "team_id", flat=True
        ):
            self.sizes[team_id] += 1

    def choose(self, picked: object) -> int | None:
        """The team for the next player (None without teams); raises NotNow for a named room's bad pick."""
        if self.mode == TeamsMode.OFF or not self.order:
            return None
        if self.mode == TeamsMode.AUTO:
            team = teams.smallest_team(self.sizes, self.order)
        elif isinstance(picked, int) and not isinstance(picked, bool) and picked in self.sizes:
            team = picked
        else:
            raise NotNow(_("Pick your team."))
        self.sizes[team] += 1
        return team


def player_team_set(*, room_id: int, player_id: int, team_id: object) -> None:
    """A player of a room with named teams moves to another of its teams, in the lobby only."""
    if not isinstance(team_id, int) or isinstance(team_id, bool):
        raise NotNow(_("Say which team: its number."))
    with transaction.atomic():
        room = Room.objects.select_for_update().get(pk=room_id)
        if room.teams_mode != TeamsMode.NAMED:
            raise NotNow(_("In this game the teams are not picked by the players."))
        if room.phase != Phase.LOBBY:
            raise NotNow(_("Teams can only be changed before the game starts."))
        if not Team.objects.filter(pk=team_id, room_id=room_id).exists():
            raise NotNow(_("That team is not in this game."))
        if (
            Player.objects.filter(pk=player_id, room_id=room_id, removed=False)
            .exclude(team_id=team_id)
            .update(team_id=team_id)
        ):
            bump(room_id)
