from django.conf import settings
from django.db import models

from quiz.models import Question


class ReviewLabel(models.TextChoices):
    CORRECT = "correct", "Correct"
    DEFECTIVE = "defective", "Defective"


class Review(models.Model):
    """A reviewer's label on one question. The latest one counts; earlier ones are kept as history."""

    question = models.ForeignKey("quiz.Question", on_delete=models.PROTECT, related_name="reviews")
    label = models.CharField(max_length=10, choices=ReviewLabel.choices)
    note = models.CharField(max_length=500, blank=True)
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # Set when this review fixed the question: the corrected copy (the original is kept as it was).
    fixed_as = models.ForeignKey(
        "quiz.Question", null=True, blank=True, on_delete=models.PROTECT, related_name="fixed_from"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        # Made by the verifier app before the review side moved here: the table keeps its name.
        db_table = "verifier_review"
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["question", "-created_at"], name="review_question_recent")]

    def __str__(self) -> str:
        return f"{self.label} q{self.question_id}"


class FlagKind(models.TextChoices):
    REPORTED = "reported", "Reported by a player"
    CROWD = "crowd", "The crowd disagrees"
    PREMISE = "premise", "Shares a premise with a defective question"


class Flag(models.Model):
    """A signal from the game that a question may be wrong: a player's report or the crowd's disagreement."""

    question = models.ForeignKey("quiz.Question", on_delete=models.CASCADE, related_name="flags")
    kind = models.CharField(max_length=10, choices=FlagKind.choices)
    room_code = models.CharField(max_length=8, blank=True, db_index=True)
    # reported: {"player", "text", "question_index", "report_id"}; crowd: {"answers", "option", "share", ...};
    # premise: {"premise_group", "origin", "shared"}.
    detail = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        # Made by the verifier app before the review side moved here: the table keeps its name.
        db_table = "verifier_flag"
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["question", "kind"], name="flag_question_kind")]

    def __str__(self) -> str:
        return f"{self.kind} q{self.question_id} in {self.room_code or '-'}"


class PremiseTrigger(models.TextChoices):
    DROPPED = "dropped", "Dropped by the gate"
    DEFECTIVE = "defective", "Labelled defective"


class PremiseGroup(models.Model):
    """A question found defective (dropped, or labelled so) and the questions of one round that share its key
    entities, dates or numbers: they may rest on the same wrong premise, so they are re-checked blind and
    shown to the reviewer together."""

    origin = models.ForeignKey("quiz.Question", on_delete=models.CASCADE, related_name="premise_groups")
    round = models.ForeignKey("quiz.Round", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    trigger = models.CharField(max_length=10, choices=PremiseTrigger.choices)
    # The origin's key terms, as written (for the reviewer).
    terms = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    checked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        # Made by the verifier app before the review side moved here: the table keeps its name.
        db_table = "verifier_premisegroup"
        ordering = ["-created_at", "-id"]
        constraints = [models.UniqueConstraint(fields=["origin", "round"], name="premise_group_origin_round")]

    def __str__(self) -> str:
        return f"premise group {self.pk}: q{self.origin_id} in round {self.round_id or '-'}"


class PremiseCheck(models.TextChoices):
    PENDING = "pending", "Waiting for the blind re-check"
    AGREES = "agrees", "The blind checker agrees"
    DOUBTFUL = "doubtful", "Below the threshold blind"
    DISAGREES = "disagrees", "The checker chose another option"
    UNVERIFIED = "unverified", "The blind re-check failed"
    UNCHECKED = "unchecked", "Not re-checked (no blind check)"


class PremiseMember(models.Model):
    group = models.ForeignKey(PremiseGroup, on_delete=models.CASCADE, related_name="members")
    question = models.ForeignKey("quiz.Question", on_delete=models.CASCADE, related_name="premise_memberships")
    # The key terms it shares with the origin, as written, heaviest first.
    shared = models.JSONField(default=list, blank=True)
    status = models.CharField(max_length=10, choices=PremiseCheck.choices, default=PremiseCheck.PENDING)
    # The blind re-check: probability per option letter, P(marked), the option the checker chose instead.
    blind_probabilities = models.JSONField(default=dict, blank=True)
    marked_probability = models.FloatField(null=True, blank=True)
    checker_chose = models.CharField(max_length=2, blank=True)
    threshold = models.FloatField(null=True, blank=True)
    reason = models.CharField(max_length=40, blank=True)
    message = models.CharField(max_length=300, blank=True)
    checked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        # Made by the verifier app before the review side moved here: the table keeps its name.
        db_table = "verifier_premisemember"
        ordering = ["group", "id"]
        constraints = [models.UniqueConstraint(fields=["group", "question"], name="premise_member_unique")]

    def __str__(self) -> str:
        return f"q{self.question_id} in premise group {self.group_id} ({self.status})"


class ReviewItem(Question):
    """The review queue's view of a question (its own admin list; no table of its own)."""

    class Meta:
        proxy = True
        verbose_name = "question to review"
        verbose_name_plural = "review queue"


class CheckerEvalRun(models.Model):
    """One `manage.py checker_eval` run: how well the configured checker told good questions from bad ones
    (review/checker_eval's report, as JSON, and as the text it printed)."""

    backend = models.CharField(max_length=20)
    model_id = models.CharField(max_length=200, blank=True)
    questions = models.PositiveIntegerField(default=0)
    auroc = models.FloatField(null=True, blank=True)  # of the gate's score
    verdict = models.CharField(max_length=500, blank=True)
    source = models.CharField(max_length=300, blank=True)  # "sample packs" or the file given
    report = models.JSONField(default=dict, blank=True)
    text = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name = "checker evaluation"
        verbose_name_plural = "checker evaluations"

    def __str__(self) -> str:
        return f"checker_eval {self.backend} {self.model_id or '-'} ({self.questions} questions)"
