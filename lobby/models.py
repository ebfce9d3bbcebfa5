from django.conf import settings
from django.db import models
from django.db.models import Q

from lobby.rules.machine import TIME_PERCENTS, Phase, Position
from lobby.rules.nicknames import NICKNAME_MAX_CODE_POINTS
from lobby.rules.teams import TEAM_NAME_MAX, TeamsMode


class Room(models.Model):
    code = models.CharField(max_length=8, unique=True)
    round = models.ForeignKey("quiz.Round", on_delete=models.PROTECT, related_name="rooms")
    timer_seconds = models.PositiveSmallIntegerField(default=20)
    phase = models.CharField(max_length=12, choices=[(p.value, p.value) for p in Phase], default=Phase.LOBBY)
    question_index = models.SmallIntegerField(default=-1)
    question_count = models.PositiveSmallIntegerField()
    question_started_at = models.DateTimeField(null=True, blank=True)
    deadline = models.DateTimeField(null=True, blank=True, db_index=True)
    # Bumped by every change a client should see; clients drop snapshots older than the one they hold.
    seq = models.PositiveIntegerField(default=0)
    locked = models.BooleanField(default=False)
    # Drawn once per room (lobby.services.rooms.room_create): the order its options are shown in comes from it
    # (lobby.rules.machine.option_order). Empty for rooms from before shuffling: they show the round's order.
    option_seed = models.CharField(max_length=64, blank=True, default="")
    # The co-host link of this generation is the live one; replacing the link bumps it (lobby.tokens.HostGrant).
    cohost_generation = models.PositiveIntegerField(default=0)
    # The owner key (core/owner_keys.py) of the browser or account that created the room: its past games and
    # results page. Empty for rooms from before accounts: only their host tokens reach them.
    owner_key = models.CharField(max_length=64, blank=True, db_index=True)
    # Accessibility mode: a right answer scores the same at any moment (no points for speed).
    no_speed_bonus = models.BooleanField(default=False)
    # Accuracy only: a right answer scores the same at any moment, the room says so (lobby/rules/ways.py).
    accuracy_only = models.BooleanField(default=False)
    # A moment to read: seconds the question is shown alone before its options appear; the clock and the speed
    # bonus start with the options (question_started_at is then that moment, a little after the phase change).
    reading_seconds = models.PositiveSmallIntegerField(default=0)
    # Teams (lobby/rules/teams.py): off, auto (the server balances the players over colour teams) or named (the host
    # names the teams, each player picks one). Team talk: seconds after the options appear before the clock and
    # the speed bonus start (question_started_at is then later still), for teams to agree; only with teams.
    teams_mode = models.CharField(
        max_length=8, choices=[(mode.value, mode.value) for mode in TeamsMode], default=TeamsMode.OFF.value
    )
    team_talk_seconds = models.PositiveSmallIntegerField(default=0)
    # Opened on a round still being written (quiz Round.writing): `question_count` grows as questions pass the
    # gate. At a leaderboard whose next question is not ready yet the room waits since `waiting_since` (bounded,
    # ROOM_WRITING_WAIT_SECONDS); `end_note` says why such a game ended early: "short" (the writing ended with
    # fewer questions than asked) or "timeout" (the next one was not ready in time).
    written_live = models.BooleanField(default=False, db_index=True)
    waiting_since = models.DateTimeField(null=True, blank=True)
    end_note = models.CharField(max_length=10, blank=True, default="")
    # Words the host hid from an open question's word cloud: question index (as text) -> folded words
    # (quiz/kinds/open.py); a hidden word is in no later frame.
    hidden_words = models.JSONField(default=dict, blank=True)
    # Generated friendly names (lobby/rules/friendly_names.py): each player gets a random "adjective animal" in their
    # phone's language, unique in the room, instead of typing a nickname.
    friendly_names = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return self.code

    @property
    def position(self) -> Position:
        """Where the game stands, as the rules (lobby/rules/machine.py) take it."""
        return Position(Phase(self.phase), self.question_index)


class Team(models.Model):
    """One team of a room with teams. An auto team has no name: it is called by its colour (`order`), in the
    reader's language (lobby.rules.teams.COLOURS)."""

    room = models.ForeignKey(Room, on_delete=models.CASCADE, related_name="teams")
    name = models.CharField(max_length=TEAM_NAME_MAX, blank=True)
    order = models.PositiveSmallIntegerField()

    class Meta:
        ordering = ["room", "order"]
        constraints = [models.UniqueConstraint(fields=["room", "order"], name="team_order_unique_in_room")]

    def __str__(self) -> str:
        return self.name or f"team {self.order + 1}"


class Player(models.Model):
    room = models.ForeignKey(Room, on_delete=models.CASCADE, related_name="players")
    nickname = models.CharField(max_length=NICKNAME_MAX_CODE_POINTS)  # 20 characters as a person counts them
    nickname_key = models.CharField(max_length=20)
    score = models.IntegerField(default=0)
    streak = models.PositiveSmallIntegerField(default=0)
    removed = models.BooleanField(default=False)
    # Removed and blocked by the host: the phone that had this place cannot join the room again, under any name.
    blocked = models.BooleanField(default=False)
    # The player's time on each question, in percent of the room's timer (extra time: 150 or 200). Their own
    # deadline and scoring window follow it (lobby.rules.machine.time_window_ms).
    time_percent = models.PositiveSmallIntegerField(
        default=100, choices=[(percent, f"x{percent / 100:g}") for percent in TIME_PERCENTS]
    )
    # "I need more time" ticked when joining: shown to the host, who confirms (sets time_percent) or declines.
    asks_more_time = models.BooleanField(default=False)
    # In a room with teams: the player's team (auto: the smallest when they joined; named: their pick).
    team = models.ForeignKey(Team, null=True, blank=True, on_delete=models.SET_NULL, related_name="members")
    joined_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["joined_at", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["room", "nickname_key"], condition=Q(removed=False), name="player_nickname_unique_in_room"
            )
        ]

    def __str__(self) -> str:
        return self.nickname


class Answer(models.Model):
    room = models.ForeignKey(Room, on_delete=models.CASCADE, related_name="answers")
    player = models.ForeignKey(Player, on_delete=models.CASCADE, related_name="answers")
    question_index = models.PositiveSmallIntegerField()
    option = models.PositiveSmallIntegerField()
    elapsed_ms = models.PositiveIntegerField()
    correct = models.BooleanField()
    points = models.IntegerField(default=0)  # set when the question closes
    # Its kind's verdict (quiz/kinds): the share of full marks it earns, 0-1 (a multi, order or number answer
    # may be partly right), and what it was beyond one option (the typed text, the order, the value, the options
    # picked), in the round's terms. Null credit: as `correct` says (answers from before kinds).
    credit = models.FloatField(null=True, blank=True)
    response = models.JSONField(null=True, blank=True)
    # The player's own window for this question (their extra time included), so a recompute scores as play did.
    # Null for answers from before extra time: the room's timer.
    window_ms = models.PositiveIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["player", "question_index"], name="one_answer_per_player_per_question")
        ]
        # One question's answers in one room: the snapshot, the scoring and the count read exactly these. With
        # only the room's index a new database, without statistics yet, could scan every answer of the room.
        indexes = [models.Index(fields=["room", "question_index"], name="answer_room_question")]

    def __str__(self) -> str:
        return f"{self.player} Q{self.question_index + 1}: {'ABCDEF'[self.option]}"


class Report(models.Model):
    """A player's "this question is wrong"; kept for the review queue."""

    room = models.ForeignKey(Room, on_delete=models.CASCADE, related_name="reports")
    player = models.ForeignKey(Player, on_delete=models.CASCADE, related_name="reports")
    question = models.ForeignKey("quiz.Question", on_delete=models.CASCADE, related_name="reports")
    text = models.CharField(max_length=500, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["player", "question"], name="one_report_per_player_question")]

    def __str__(self) -> str:
        return f"Report by {self.player} on {self.question}"


class VoidedQuestion(models.Model):
    """A question taken out of one room's scores after review. Its answers stay as a record."""

    room = models.ForeignKey(Room, on_delete=models.CASCADE, related_name="voided_questions")
    question_index = models.PositiveSmallIntegerField()
    question = models.ForeignKey("quiz.Question", on_delete=models.PROTECT, related_name="+")
    # player id -> the points that answer had before it was voided.
    removed_points = models.JSONField(default=dict, blank=True)
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["room", "question_index"]
        constraints = [models.UniqueConstraint(fields=["room", "question_index"], name="void_once_per_room_question")]

    def __str__(self) -> str:
        return f"{self.room} Q{self.question_index + 1} voided"


class Assignment(models.Model):
    """Homework: a room played alone, each player on their own clock, until a deadline. The room itself is
    created already past its last question (phase finished), so the results page, CSV and audit export read it
    as a finished game and no live socket plays it (lobby/homework/services.py)."""

    REVEAL_EACH = "each"
    REVEAL_DEADLINE = "deadline"

    room = models.OneToOneField(Room, on_delete=models.CASCADE, related_name="assignment")
    deadline = models.DateTimeField()  # UTC: no one starts a question after it
    # "each": a player sees the right answer after each question; "deadline": only once the deadline is past.
    reveal = models.CharField(
        max_length=8, choices=[(REVEAL_EACH, REVEAL_EACH), (REVEAL_DEADLINE, REVEAL_DEADLINE)], default=REVEAL_EACH
    )
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"Homework {self.room.code}"


class HomeworkProgress(models.Model):
    """Where one player of an assignment stands: the question they are on, when they opened it and their own
    deadline for it (their timer, stretched by extra time, never past the assignment's)."""

    player = models.OneToOneField(Player, on_delete=models.CASCADE, related_name="homework")
    question_index = models.PositiveSmallIntegerField(default=0)
    opened_at = models.DateTimeField(null=True, blank=True)
    own_deadline = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"{self.player} at Q{self.question_index + 1}"
