from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models


class VerdictOutcome(models.TextChoices):
    PASSED = "passed", "Passed"
    DROPPED = "dropped", "Dropped"
    UNVERIFIED = "unverified", "Could not be verified"
    UNCHECKED = "unchecked", "Not checked"


class Verdict(models.Model):
    """One decision of the gate about one question. Kept for review and calibration; never deleted."""

    # PROTECT: a question the gate has judged stays, so the review queue and the sweep keep their evidence.
    question = models.ForeignKey("quiz.Question", on_delete=models.PROTECT, related_name="verdicts")
    backend = models.CharField(max_length=20)
    # The model id the server said it served (what the threshold and the sweep go by) ...
    model_id = models.CharField(max_length=200, blank=True)
    # ... and the one the gate asked for (VERIFIER_MODEL). They differ when the server moved under the pin.
    requested_model_id = models.CharField(max_length=200, blank=True)
    probabilities = models.JSONField(default=dict, blank=True)
    score = models.FloatField(null=True, blank=True)
    threshold = models.FloatField()
    calibrated = models.BooleanField(default=False)
    outcome = models.CharField(max_length=12, choices=VerdictOutcome.choices)
    reason = models.CharField(max_length=40, blank=True)
    message = models.CharField(max_length=500, blank=True)
    latency_ms = models.PositiveIntegerField(default=0)
    input_tokens = models.PositiveIntegerField(null=True, blank=True)
    output_tokens = models.PositiveIntegerField(null=True, blank=True)
    details = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [
            models.Index(fields=["outcome", "-created_at"], name="verdict_outcome_recent"),
            models.Index(fields=["backend", "model_id"], name="verdict_backend_model"),
        ]

    def __str__(self) -> str:
        return f"{self.outcome} q{self.question_id} ({self.backend} {self.model_id})"

    @property
    def model_mismatch(self) -> bool:
        return bool(self.requested_model_id) and self.model_id != self.requested_model_id


class Threshold(models.Model):
    """The calibrated pass mark for one backend + model version, set by staff from the sweep."""

    backend = models.CharField(max_length=20)
    model_id = models.CharField(max_length=200)
    value = models.FloatField(validators=[MinValueValidator(0.0), MaxValueValidator(1.0)])
    note = models.CharField(max_length=300, blank=True)
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["backend", "model_id"]
        constraints = [
            models.UniqueConstraint(fields=["backend", "model_id"], name="threshold_backend_model_unique"),
            models.CheckConstraint(
                condition=models.Q(value__gte=0.0, value__lte=1.0), name="threshold_value_between_0_and_1"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.backend} {self.model_id}: {self.value:g}"
