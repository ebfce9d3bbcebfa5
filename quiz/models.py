from django.db import models
from django.utils.translation import gettext_lazy as _

from quiz.check_labels import check_note
from quiz.cost_line import cost_line
from quiz.kinds import DEFAULT, kind_of
from quiz.pictures.images import MAX_ALT, QuestionImage
from quiz.validation import MAX_EXPLANATION, MAX_SOURCE, MAX_TEXT, QuestionData


class Provenance(models.TextChoices):
    PACK = "pack", _("Sample pack")
    HOST = "host", _("Host's own")
    MODEL = "model", _("Written by a model")


class CheckStatus(models.TextChoices):
    # How the questions of a round were checked; shown on the host's page.
    HAND_CHECKED = "hand_checked", _("Hand-checked sample pack")
    UNCHECKED = "unchecked", _("Not checked")
    CHECKED = "checked", _("Checked by the gate")
    PARTLY_UNVERIFIED = "partly_unverified", _("Checked, some questions could not be verified")
    UNVERIFIED = "unverified", _("Could not be verified")
    # The checker answered for every question and rejected each one; the round is played all the same.
    REJECTED = "rejected", _("Rejected by the checker")
    # A host's own questions checked on request: the gate found some doubtful, and the host kept them.
    DOUBTFUL_KEPT = "doubtful_kept", _("Checked, doubtful questions kept by the host")


class Pack(models.Model):
    slug = models.SlugField(unique=True)
    title = models.CharField(max_length=100)
    description = models.CharField(max_length=300, blank=True)
    # The language its questions are written in (one of settings.LANGUAGES).
    language = models.CharField(max_length=10, default="en")

    class Meta:
        ordering = ["title"]

    def __str__(self) -> str:
        return self.title


class Question(models.Model):
    # Its kind (quiz/kinds): how `options`, `correct_index` and `key` are read.
    kind = models.CharField(max_length=12, default=DEFAULT)
    text = models.CharField(max_length=MAX_TEXT)
    options = models.JSONField()
    correct_index = models.PositiveSmallIntegerField()
    # What else its kind keeps: the right options of a `multi`, the accepted answers of a `typed`, … Secret
    # until the reveal, as `correct_index` is.
    key = models.JSONField(default=dict, blank=True)
    explanation = models.TextField(max_length=MAX_EXPLANATION, blank=True)
    source = models.CharField(max_length=MAX_SOURCE, blank=True)
    provenance = models.CharField(max_length=10, choices=Provenance.choices)
    pack = models.ForeignKey(Pack, null=True, blank=True, on_delete=models.SET_NULL, related_name="questions")
    # The writer model asked for (QUIZ_WRITER_MODEL), and the one the server said wrote it (its stream's `model`).
    model_id = models.CharField(max_length=200, blank=True)
    served_model_id = models.CharField(max_length=200, blank=True)
    # Its picture: the file's name in STORAGES["question_images"] (quiz/pictures/images.py) and what it shows, in words.
    image_name = models.CharField(max_length=80, blank=True)
    image_alt = models.CharField(max_length=MAX_ALT, blank=True)
    # Its own time in seconds (a Kahoot! or Quizizz file's time limit); null: the room's timer.
    seconds = models.PositiveSmallIntegerField(null=True, blank=True)
    # The file it was imported from, as "format: file name" (quiz/importers), for its audit; "" otherwise.
    imported_from = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return self.text[:80]

    @property
    def model_mismatch(self) -> bool:
        return bool(self.served_model_id) and self.served_model_id != self.model_id

    @property
    def shown_options(self) -> list[tuple[str, bool]]:
        """Its options as a page lists them, each with whether it is marked right (none for a kind without)."""
        kind = kind_of(self)
        marked = kind.marked(self)
        return [(text, index in marked) for index, text in enumerate(kind.option_texts(self))]

    @property
    def answer_words(self) -> str:
        return kind_of(self).answer_text(self)

    def as_data(self) -> QuestionData:
        return QuestionData(
            text=self.text,
            options=tuple(self.options),
            correct_index=self.correct_index,
            explanation=self.explanation,
            source=self.source,
            image=QuestionImage(name=self.image_name, alt=self.image_alt) if self.image_name else None,
            kind=self.kind,
            key=dict(self.key or {}),
            seconds=self.seconds,
        )


class Round(models.Model):
    title = models.CharField(max_length=200)
    provenance = models.CharField(max_length=10, choices=Provenance.choices)
    check_status = models.CharField(max_length=20, choices=CheckStatus.choices, default=CheckStatus.UNCHECKED)
    pack = models.ForeignKey(Pack, null=True, blank=True, on_delete=models.SET_NULL, related_name="rounds")
    # The language its questions are in: the pack's, the one the writer was asked for, or the host's page's. The
    # gate is told it.
    language = models.CharField(max_length=10, default="en")
    # The browser session that made a host round; only it may edit or export it.
    owner_key = models.CharField(max_length=64, blank=True, db_index=True)
    # What the last "check my questions" found (quiz.checking.rounds.round_check_summary): counts of its questions by
    # mark, {"total", "doubtful", "unverified", "unchecked"}; empty when the round was never checked that way. The
    # words ("checked: 2 doubtful kept by the host") are made from them in the reader's language (check_label).
    check_counts = models.JSONField(default=dict, blank=True)
    # A model-written round is created at its first question that passes the gate, and its questions are added
    # in the writer's order as they pass: `writing` while more may come (a game may already play the ready ones),
    # `expected_count` the number asked for (None: not written that way).
    writing = models.BooleanField(default=False)
    expected_count = models.PositiveSmallIntegerField(null=True, blank=True)
    # What writing and checking it cost (core.cost.round_cost): tokens and dollars by role, and the total, at the
    # prices of the day it was written. Empty for a round no model wrote.
    cost = models.JSONField(default=dict, blank=True)
    questions = models.ManyToManyField(Question, through="RoundQuestion", related_name="rounds")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return self.title

    @property
    def check_label(self) -> str:
        """What the host's screens say about how the round was checked, in the active language."""
        return check_note(self.check_counts) or str(self.get_check_status_display())

    @property
    def cost_label(self) -> str:
        """What writing and checking it cost, in one line ("written for $0.004, checked for $0.0011"), or ""."""
        return cost_line(self.cost)


class RoundQuestion(models.Model):
    round = models.ForeignKey(Round, on_delete=models.CASCADE, related_name="entries")
    question = models.ForeignKey(Question, on_delete=models.PROTECT, related_name="entries")
    position = models.PositiveSmallIntegerField()

    class Meta:
        ordering = ["position"]
        constraints = [models.UniqueConstraint(fields=["round", "position"], name="round_position_unique")]

    def __str__(self) -> str:
        return f"{self.round} #{self.position + 1}"


class GenerationStatus(models.TextChoices):
    QUEUED = "queued", _("Queued")
    RUNNING = "running", _("Writing")
    DONE = "done", _("Done")
    FAILED = "failed", _("Failed")
    CANCELLED = "cancelled", _("Cancelled")


class JobKind(models.TextChoices):
    WRITE = "write", "Write a round"
    # Send an existing round's questions through the gate (quiz.checking.rounds); `round` is set from the start.
    CHECK = "check", "Check a round"


def default_kinds() -> list[str]:
    """A generation job's kinds of question unless the host ticks others: the default kind alone."""
    return [DEFAULT]


class GenerationJob(models.Model):
    """One request for a model-written round, or for a check of an existing round's questions; its progress is
    stored so a reloaded page can show it."""

    kind = models.CharField(max_length=5, choices=JobKind.choices, default=JobKind.WRITE)
    topic = models.CharField(max_length=200, blank=True)
    count = models.PositiveSmallIntegerField()
    difficulty = models.CharField(max_length=10, default="medium")
    language = models.CharField(max_length=10, default="en")
    source_text = models.TextField(blank=True)
    source_name = models.CharField(max_length=200, blank=True)
    # The kinds of question the writer writes (quiz/kinds names, in the registry's order), as the host ticked them.
    kinds = models.JSONField(default=default_kinds)
    status = models.CharField(
        max_length=10, choices=GenerationStatus.choices, default=GenerationStatus.QUEUED, db_index=True
    )
    # Progress: questions asked for (all attempts), written, checked, dropped by the gate, invalid, repeats of an
    # earlier question, attempt number.
    asked = models.PositiveIntegerField(default=0)
    written = models.PositiveIntegerField(default=0)
    checked = models.PositiveIntegerField(default=0)
    dropped = models.PositiveIntegerField(default=0)
    invalid = models.PositiveIntegerField(default=0)
    duplicates = models.PositiveIntegerField(default=0)
    attempt = models.PositiveSmallIntegerField(default=0)
    # How many times a worker died while running it and another took it over (the host's page says so).
    takeovers = models.PositiveSmallIntegerField(default=0)
    # Bumped on every stored change, so a page can ignore a snapshot older than the one it shows.
    revision = models.PositiveIntegerField(default=0)
    message = models.CharField(max_length=500, blank=True)
    # Why items were not used (invalid, duplicate), capped.
    problems = models.JSONField(default=list, blank=True)
    # question id -> how it was checked as shown to the host: passed / unverified / unchecked.
    question_marks = models.JSONField(default=dict, blank=True)
    model_id = models.CharField(max_length=200, blank=True)
    # The checker's pinned model id (VERIFIER_MODEL) when the gate was on: the drop rate is kept per writer and checker.
    checker_model_id = models.CharField(max_length=200, blank=True)
    # The over-ask the job wrote with (1.5 unless set from the data), and what it cost (as Round.cost).
    over_ask = models.FloatField(null=True, blank=True)
    cost = models.JSONField(default=dict, blank=True)
    # Whether the gate was on for this job (the page shows "checked k of M" only then).
    gated = models.BooleanField(default=False)
    round = models.ForeignKey(Round, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    # The browser session that asked for it (request.session["owner_key"]); the round gets the same key.
    owner_key = models.CharField(max_length=64, blank=True, db_index=True)
    # The network that asked for it (core.client_ip.client_network): generation is limited per network.
    client_network = models.CharField(max_length=64, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        # quiz/generation/limits.py counts recent jobs per network and site-wide on every request to start one.
        indexes = [
            models.Index(fields=["client_network", "created_at"], name="generation_network_recent"),
            models.Index(fields=["created_at"], name="generation_recent"),
        ]

    def __str__(self) -> str:
        return f"generation {self.pk}: {self.topic[:60] or self.source_name} ({self.status})"

    @property
    def cost_label(self) -> str:
        return cost_line(self.cost)

    @property
    def finished(self) -> bool:
        return self.status in (GenerationStatus.DONE, GenerationStatus.FAILED, GenerationStatus.CANCELLED)
