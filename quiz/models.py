from django.db import models

from quiz.validation import MAX_EXPLANATION, MAX_SOURCE, MAX_TEXT, QuestionData


class Provenance(models.TextChoices):
    PACK = "pack", "Sample pack"
    HOST = "host", "Host's own"
    MODEL = "model", "Written by a model"


class CheckStatus(models.TextChoices):
    # How the questions of a round were checked; shown on the host's page.
    HAND_CHECKED = "hand_checked", "Hand-checked sample pack"
    UNCHECKED = "unchecked", "Not checked"
    CHECKED = "checked", "Checked by the gate"
    PARTLY_UNVERIFIED = "partly_unverified", "Checked, some questions could not be verified"
    UNVERIFIED = "unverified", "Could not be verified"


class Pack(models.Model):
    slug = models.SlugField(unique=True)
    title = models.CharField(max_length=100)
    description = models.CharField(max_length=300, blank=True)

    class Meta:
        ordering = ["title"]

    def __str__(self) -> str:
        return self.title


class Question(models.Model):
    text = models.CharField(max_length=MAX_TEXT)
    options = models.JSONField()
    correct_index = models.PositiveSmallIntegerField()
    explanation = models.TextField(max_length=MAX_EXPLANATION, blank=True)
    source = models.CharField(max_length=MAX_SOURCE, blank=True)
    provenance = models.CharField(max_length=10, choices=Provenance.choices)
    pack = models.ForeignKey(Pack, null=True, blank=True, on_delete=models.SET_NULL, related_name="questions")
    model_id = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return self.text[:80]

    def as_data(self) -> QuestionData:
        return QuestionData(
            text=self.text,
            options=tuple(self.options),
            correct_index=self.correct_index,
            explanation=self.explanation,
            source=self.source,
        )


class Round(models.Model):
    title = models.CharField(max_length=200)
    provenance = models.CharField(max_length=10, choices=Provenance.choices)
    check_status = models.CharField(max_length=20, choices=CheckStatus.choices, default=CheckStatus.UNCHECKED)
    pack = models.ForeignKey(Pack, null=True, blank=True, on_delete=models.SET_NULL, related_name="rounds")
    # The browser session that made a host round; only it may edit or export it.
    owner_key = models.CharField(max_length=64, blank=True, db_index=True)
    questions = models.ManyToManyField(Question, through="RoundQuestion", related_name="rounds")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return self.title


class RoundQuestion(models.Model):
    round = models.ForeignKey(Round, on_delete=models.CASCADE, related_name="entries")
    question = models.ForeignKey(Question, on_delete=models.PROTECT, related_name="entries")
    position = models.PositiveSmallIntegerField()

    class Meta:
        ordering = ["position"]
        constraints = [models.UniqueConstraint(fields=["round", "position"], name="round_position_unique")]

    def __str__(self) -> str:
        return f"{self.round} #{self.position + 1}"
