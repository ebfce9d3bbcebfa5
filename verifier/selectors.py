"""Reads of the gate's own records: the stored pass marks, and whether the checker has lately been too slow."""

from dataclasses import dataclass

from verifier import causes, conf
from verifier.breaker import UNAVAILABLE
from verifier.models import Threshold, Verdict
from verifier.registry import gate_enabled


def threshold_for(*, backend: str, model_id: str) -> tuple[float, bool]:
    """(pass mark, calibrated). A model id nobody has calibrated uses the default and says so."""
    value = Threshold.objects.filter(backend=backend, model_id=model_id).values_list("value", flat=True).first()
    if value is None:
        return conf.default_threshold(), False
    return float(value), True


def stored_thresholds(*, backend: str) -> dict[str, float]:
    """model id -> its stored pass mark, for one backend (the gate applies a served model's when it is stricter)."""
    return {
        model_id: float(value)
        for model_id, value in Threshold.objects.filter(backend=backend).values_list("model_id", "value")
    }


# How many of the configured checker's latest verdicts the slow-checker warning looks at, and the fewest it needs.
RECENT_CHECKS = 20
RECENT_CHECKS_MIN = 5


@dataclass(frozen=True)
class SlowChecker:
    """Most of the configured checker's latest checks ran out of time."""

    timed_out: int
    of: int
    timeout: float  # VERIFIER_TIMEOUT now
    backend: str
    model_id: str


def slow_checker(*, last: int = RECENT_CHECKS) -> SlowChecker | None:
    """The figures when more than half of the configured checker's last `last` verdicts timed out (a call cut at
    VERIFIER_TIMEOUT, or the round's budget spent); None otherwise, or with the gate off."""
    backend, model = conf.backend_name(), conf.model_id()
    if not gate_enabled(backend) or not model:
        return None
    reasons = list(
        Verdict.objects.filter(backend=backend, requested_model_id=model)
        .exclude(reason__in=("imported", UNAVAILABLE))
        .order_by("-created_at", "-id")
        .values_list("reason", flat=True)[:last]
    )
    timed_out = sum(1 for reason in reasons if reason in causes.TOO_SLOW_REASONS)
    if len(reasons) < RECENT_CHECKS_MIN or timed_out * 2 <= len(reasons):
        return None
    return SlowChecker(timed_out=timed_out, of=len(reasons), timeout=conf.timeout(), backend=backend, model_id=model)
