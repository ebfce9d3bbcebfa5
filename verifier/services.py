"""Writes of the gate's own records: verdicts (what it decided) and thresholds (the pass mark per model)."""

from typing import Any

from verifier.decisions import GateDecision
from verifier.models import Threshold, Verdict


def verdict_record(*, question_id: int, decision: GateDecision) -> Verdict:
    return Verdict.objects.create(
        question_id=question_id,
        backend=decision.backend,
        model_id=decision.model_id,
        requested_model_id=decision.requested_model_id,
        probabilities=decision.probabilities,
        score=decision.score,
        threshold=decision.threshold,
        calibrated=decision.calibrated,
        outcome=decision.outcome,
        reason=decision.reason,
        message=decision.message[:500],
        latency_ms=decision.latency_ms,
        input_tokens=decision.input_tokens,
        output_tokens=decision.output_tokens,
        details=decision.details,
    )


def verdicts_record(*, decisions: dict[int, GateDecision]) -> list[Verdict]:
    """Many at once, keyed by question id (e.g. after a round is saved)."""
    return [verdict_record(question_id=question_id, decision=decision) for question_id, decision in decisions.items()]


def threshold_set(
    *, backend: str, model_id: str, value: float, user: Any = None, note: str = "", threshold_id: int | None = None
) -> Threshold:
    """Store the pass mark for one backend + model id. With `threshold_id`, that row is the one changed (the
    admin's edit form may rename its model id); otherwise the row for (backend, model id), made if missing."""
    value = float(value)
    if not 0.0 <= value <= 1.0:
        raise ValueError("a threshold is between 0 and 1")
    if not backend or not model_id:
        raise ValueError("a threshold belongs to one backend and one model id")
    fields = {"value": value, "note": note[:300], "updated_by": user}
    if threshold_id is not None:
        threshold = Threshold.objects.get(pk=threshold_id)
        for name, field_value in {"backend": backend, "model_id": model_id, **fields}.items():
            setattr(threshold, name, field_value)
        threshold.save()
        return threshold
    threshold, _ = Threshold.objects.update_or_create(backend=backend, model_id=model_id, defaults=fields)
    return threshold
