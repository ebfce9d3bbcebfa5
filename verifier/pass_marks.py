"""A round's pass marks: the pinned model's (stored, calibrated, or the default), the stored ones of the other
models a server may say it served, and the second opinion's. The bar for the model a server served is the pure
rule `verifier.policy.served_pass_mark`."""

from collections.abc import Mapping
from dataclasses import dataclass

from verifier import conf
from verifier.registry import gate_enabled
from verifier.selectors import stored_thresholds, threshold_for


@dataclass(frozen=True)
class PassMarks:
    threshold: float
    calibrated: bool
    # Stored, per model id of the backend: a served model's own, applied when it is the stricter.
    thresholds: Mapping[str, float] | None
    second: tuple[float, bool] | None


def round_pass_marks(config: conf.GateConfig, *, threshold: float | None) -> PassMarks:
    """Sync: unless `threshold` is given, the stored thresholds from the database."""
    thresholds: dict[str, float] | None = None
    if threshold is not None:
        value, calibrated = threshold, False
    elif gate_enabled(config.backend):
        value, calibrated = threshold_for(backend=config.backend, model_id=config.model_id)
        thresholds = stored_thresholds(backend=config.backend)
    else:
        value, calibrated = config.default_threshold, False
    # A given pass mark is the bar for the second opinion too; otherwise its model's stored one.
    second_threshold = (value, False) if threshold is not None else None
    if config.second_opinion is not None and threshold is None:
        second_threshold = threshold_for(backend=config.second_opinion.backend, model_id=config.second_opinion.model_id)
    return PassMarks(threshold=value, calibrated=calibrated, thresholds=thresholds, second=second_threshold)
