"""A broadcast's fan-out latencies are written to the histogram at once: the same counts as one by one."""

import pytest

from core import metrics


def _counts() -> dict[str, float]:
    return {
        f"{sample.name}{sample.labels.get('le', '')}": sample.value
        for family in metrics.FANOUT.collect()
        for sample in family.samples
        if not sample.name.endswith("_created")
    }


def test_a_broadcasts_latencies_at_once_count_as_each_on_its_own():
    # On a bucket's bound, between bounds, past the last one, and a clock step backwards (counted as 0).
    latencies = [0.0, 0.005, 0.0051, 0.25, 0.3, 2.5, 42.0, -0.01, *[0.05] * 7]
    start = _counts()
    for value in latencies:
        metrics.fanout_observed(value)
    one_by_one = {key: value - start.get(key, 0) for key, value in _counts().items()}
    start = _counts()
    metrics.fanout_observed_many(latencies)
    at_once = {key: value - start.get(key, 0) for key, value in _counts().items()}
    assert at_once == pytest.approx(one_by_one)
    assert at_once["quizgate_fanout_seconds_count"] == len(latencies)
