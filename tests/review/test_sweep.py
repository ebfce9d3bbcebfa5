"""The sweep on a hand-made labelled set whose table is known by hand, and the `sweep` command."""

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from review.models import Review
from review.selectors import labelled_scores, review_queue
from review.services import review_label
from review.thresholds.sweep import (
    GRID,
    LabelledScore,
    brier,
    calibration,
    reliability,
    sweep,
    sweep_row,
    thresholds_for,
    widest_safe,
)
from verifier import policy
from verifier.models import Verdict
from verifier.services import verdict_record

DATA = Path(__file__).parent / "data" / "labelled.json"
GOOD = [0.55, 0.62, 0.70, 0.81, 0.93]
DEFECTIVE = [0.12, 0.30, 0.55, 0.64]


def labelled(good=GOOD, defective=DEFECTIVE, *, backend="systemone", model_id="jev-1.13.0") -> list[LabelledScore]:
    items = []
    for label, scores in (("correct", good), ("defective", defective)):
        for score in scores:
            items.append(
                LabelledScore(
                    question_id=len(items) + 1,
                    backend=backend,
                    model_id=model_id,
                    score=score,
                    label=label,
                    probabilities={"answer_correct": score, "explanation_true": 0.99},
                )
            )
    return items


def test_thresholds_are_the_grid_plus_every_distinct_score():
    assert GRID[0] == 0.05 and GRID[-1] == 0.95 and len(GRID) == 19
    thresholds = thresholds_for(item.score for item in labelled())
    # 0.30, 0.55 and 0.70 are on the grid already; 0.12, 0.62, 0.64, 0.81, 0.93 are added.
    assert len(thresholds) == 24
    assert {0.12, 0.62, 0.64, 0.81, 0.93} <= set(thresholds)
    assert thresholds == sorted(thresholds)


def test_the_sweep_drops_exactly_what_the_gate_drops():
    # At every threshold, a labelled question counts as dropped when the gate's own judgement drops its score.
    items = labelled()
    for threshold in thresholds_for(item.score for item in items):
        gate_drops = [
            item
            for item in items
            if policy.closed_book_judgement(probabilities={"answer_correct": item.score}, has_explanation=False,
                                            threshold=threshold).outcome == policy.Outcome.DROPPED
        ]  # fmt: skip
        row = sweep_row(items, threshold)
        assert row.dropped == len(gate_drops)
        assert row.caught == sum(1 for item in gate_drops if item.label == "defective")


def test_the_sweep_asks_the_gate_for_its_pass_rule(monkeypatch):
    # The rule lives in one place: were the gate to drop a score equal to its threshold, so would the sweep.
    items = labelled()
    assert sweep_row(items, 0.55).dropped == 2  # 0.12 and 0.30; both 0.55s pass
    monkeypatch.setattr(policy, "passes", lambda *, score, threshold: score > threshold)
    assert sweep_row(items, 0.55).dropped == 4


def test_a_row_counts_catches_false_drops_and_shares_by_hand():
    items = labelled()
    row = sweep_row(items, 0.6)
    # Dropped (< 0.6): defective 0.12, 0.30, 0.55 and good 0.55.
    assert (row.caught, row.good_dropped, row.dropped, row.shown) == (3, 1, 4, 5)
    assert row.precision == pytest.approx(3 / 4)
    assert row.shown_share == pytest.approx(5 / 9)
    assert row.error_rate_shown == pytest.approx(1 / 5)  # defective 0.64 is shown
    assert row.catch_rate == pytest.approx(3 / 4)
    assert row.false_drop_rate == pytest.approx(1 / 5)


def test_a_score_equal_to_the_threshold_passes():
    row = sweep_row(labelled(), 0.55)
    # Both 0.55s (one good, one defective) are shown; only 0.12 and 0.30 drop.
    assert (row.caught, row.good_dropped, row.shown) == (2, 0, 7)
    assert row.error_rate_shown == pytest.approx(2 / 7)
    assert row.precision == 1.0


def test_nothing_dropped_has_no_precision_and_everything_dropped_has_no_error_rate():
    items = labelled()
    assert sweep_row(items, 0.05).precision is None
    everything = sweep_row(items, 0.99)
    assert everything.shown == 0 and everything.error_rate_shown is None and everything.shown_share == 0.0


def test_the_widest_safe_threshold_is_the_lowest_good_score():
    [result] = sweep(labelled())
    assert result.widest_safe is not None
    assert result.widest_safe.threshold == 0.55
    assert result.widest_safe.caught == 2 and result.widest_safe.catch_rate == pytest.approx(0.5)
    # Just above it (the next candidate, 0.6) a good question drops.
    assert sweep_row(labelled(), 0.6).good_dropped == 1
    assert widest_safe([sweep_row(labelled(), t) for t in (0.6, 0.7)]) is None


def test_too_few_labels_warns_and_enough_does_not():
    [few] = sweep(labelled())
    assert "Too few labels" in few.warning and "5 good and 4 defective" in few.warning
    many = labelled([0.6 + i * 0.03 for i in range(10)], [0.05 + i * 0.04 for i in range(10)])
    [enough] = sweep(many)
    assert enough.warning == ""
    assert enough.widest_safe.threshold == 0.6 and enough.widest_safe.caught == 10
    [no_good] = sweep(labelled([], [0.2, 0.4]))
    assert no_good.widest_safe is None and "0 good" in no_good.warning


def test_results_are_per_backend_and_model_id():
    items = labelled() + labelled([0.9], [0.1], backend="llm", model_id="checker-8b-2025-01")
    results = sweep(items)
    assert [(r.backend, r.model_id, r.good, r.defective) for r in results] == [
        ("llm", "checker-8b-2025-01", 1, 1),
        ("systemone", "jev-1.13.0", 5, 4),
    ]


def test_brier_score_and_reliability_bins_by_hand():
    pairs = [(0.9, 1), (0.8, 1), (0.7, 0), (0.2, 0), (0.25, 1)]
    assert brier(pairs) == pytest.approx((0.01 + 0.04 + 0.49 + 0.04 + 0.5625) / 5)
    assert brier([]) is None
    bins = reliability(pairs)
    assert len(bins) == 10
    by_low = {b.low: b for b in bins}
    assert by_low[0.2].count == 2 and by_low[0.2].observed_correct == 0.5
    assert by_low[0.2].mean_predicted == pytest.approx(0.225)
    assert by_low[0.7].count == 1 and by_low[0.7].observed_correct == 0.0  # 0.7 lands in 0.7-0.8
    assert by_low[0.9].count == 1 and by_low[0.9].observed_correct == 1.0
    assert by_low[0.0].count == 0 and by_low[0.0].observed_correct is None
    assert reliability([(1.0, 1)])[-1].count == 1  # 1.0 belongs to the last bin


def test_calibration_per_check_reads_defect_checks_inverted():
    checks = {c.check: c for c in calibration(labelled())}
    answer = checks["answer_correct"]
    expected = sum((1 - p) ** 2 for p in GOOD) + sum(p**2 for p in DEFECTIVE)
    assert answer.count == 9 and answer.brier == pytest.approx(expected / 9)
    assert checks["explanation_true"].bins[9].count == 9
    assert checks["explanation_true"].bins[9].observed_correct == pytest.approx(5 / 9)
    grounded = [
        LabelledScore(1, "llm", "m", 0.9, "correct", {"contradiction": 0.1}),
        LabelledScore(2, "llm", "m", 0.2, "defective", {"contradiction": 0.8}),
    ]
    [contradiction] = calibration(grounded)
    assert contradiction.inverted
    assert contradiction.brier == pytest.approx((0.1**2 + 0.2**2) / 2)


# -- the database side and the command ----------------------------------------------------------------------------


@pytest.mark.django_db
def test_import_then_sweep_prints_the_known_table_as_json():
    out, err = StringIO(), StringIO()
    call_command("sweep", "--import", str(DATA), "--json", stdout=out, stderr=err)
    assert "imported 9" in err.getvalue()
    [result] = json.loads(out.getvalue())
    assert (result["backend"], result["model_id"], result["good"], result["defective"]) == (
        "systemone",
        "jev-1.13.0",
        5,
        4,
    )
    assert result["widest_safe"]["threshold"] == 0.55 and result["widest_safe"]["caught"] == 2
    row = next(r for r in result["rows"] if r["threshold"] == 0.6)
    assert (row["caught"], row["good_dropped"]) == (3, 1)
    assert "Too few labels" in result["warning"]
    assert Verdict.objects.count() == 9 and Review.objects.count() == 9
    assert not review_queue().exists()  # a graded set is labelled already: it does not wait for review

    again = StringIO()
    call_command("sweep", "--import", str(DATA), stdout=StringIO(), stderr=again)
    assert "imported 0" in again.getvalue() and "skipped 9" in again.getvalue()


@pytest.mark.django_db
def test_text_output_names_the_widest_safe_threshold_and_warns(tmp_path):
    out = StringIO()
    call_command("sweep", "--import", str(DATA), stdout=out, stderr=StringIO())
    text = out.getvalue()
    assert "widest threshold that drops no labelled-good question: 0.55 (catches 2 of 4 defective, 50%)" in text
    assert "WARNING: Too few labels" in text
    assert "calibration of answer_correct: n=9, Brier" in text
    exported = tmp_path / "out.json"
    call_command("sweep", "--export", str(exported), stdout=StringIO(), stderr=StringIO())
    assert len(json.loads(exported.read_text())) == 9


@pytest.mark.django_db
def test_a_bad_labelled_set_is_refused_whole(tmp_path):
    bad = json.loads(DATA.read_text())
    bad[3]["label"] = "maybe"
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(bad))
    with pytest.raises(CommandError, match="item 4: label must be"):
        call_command("sweep", "--import", str(path), stdout=StringIO(), stderr=StringIO())
    assert Review.objects.count() == 0
    with pytest.raises(CommandError, match="cannot read"):
        call_command("sweep", "--import", str(tmp_path / "missing.json"), stdout=StringIO(), stderr=StringIO())


@pytest.mark.django_db
def test_the_selector_uses_the_latest_label_and_the_latest_scored_verdict(make_round):
    from tests.review.test_admin import decision

    question = make_round().entries.first().question
    verdict_record(question_id=question.pk, decision=decision(score=0.3))
    verdict_record(question_id=question.pk, decision=decision(score=0.8))
    verdict_record(question_id=question.pk, decision=decision(score=None, outcome="unverified"))
    assert labelled_scores() == []  # not labelled yet
    review_label(question=question, label="defective")
    review_label(question=question, label="correct")
    [item] = labelled_scores()
    assert (item.score, item.label) == (0.8, "correct")


def test_the_chart_steps_at_each_score_and_escapes_its_text():
    from review.thresholds.chart import _steps, sweep_chart

    assert _steps([(0.1, 0.0), (0.2, 0.5), (0.3, 0.5)]) == [(0.1, 0.0), (0.1, 0.5), (0.2, 0.5), (0.3, 0.5)]
    [result] = sweep(labelled(model_id='m"<x>'))
    svg = str(sweep_chart(result, stored_threshold=0.6))
    assert svg.startswith("<svg") and svg.endswith("</svg>")
    assert "m&quot;&lt;x&gt;" in svg and "<x>" not in svg
    assert "widest safe 0.55" in svg and "stored 0.6" in svg


def chart_cases():
    """The inputs whose charts tests/review/data/sweep_charts.json holds, as the f-string chart drew them."""
    [first] = sweep(labelled(model_id='m"<x>'))
    yield "escaped model, stored threshold", first, 0.6
    [second] = sweep(labelled(backend="llm", model_id="checker-8b-2025-01"))
    yield "llm, nothing stored", second, None
    [third] = sweep(labelled(defective=[], backend="<script>&'", model_id="jev-1.13.0"))
    yield "no defective labels, hostile backend", third, 0.35
    [fourth] = sweep(labelled(good=[], model_id="jev-1.14.0"))
    yield "no good labels", fourth, 1.0


def test_the_chart_from_its_template_is_the_chart_it_was():
    from review.thresholds.chart import sweep_chart

    expected = json.loads((DATA.parent / "sweep_charts.json").read_text())
    drawn = {name: str(sweep_chart(result, stored_threshold=stored)) for name, result, stored in chart_cases()}
    assert drawn.keys() == expected.keys()
    for name in expected:
        assert drawn[name] == expected[name], name
    assert "&lt;script&gt;&amp;&#x27;" in drawn["no defective labels, hostile backend"]
    assert "<script>" not in drawn["no defective labels, hostile backend"]
