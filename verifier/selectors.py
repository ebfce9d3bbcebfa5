"""Reads of the gate's own records: the stored pass marks."""

from verifier import conf
from verifier.models import Threshold


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
