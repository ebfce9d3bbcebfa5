import logging

import pytest
from asgiref.sync import async_to_sync

from quiz.models import Question
from tests.factories import QuestionFactory, ThresholdFactory
from tests.verifier.helpers import item, items
from verifier import conf as gate_conf
from verifier.gate import Gate, GateDecision, gate_check
from verifier.models import Threshold, Verdict
from verifier.selectors import threshold_for
from verifier.services import verdict_record


def _question() -> Question:
    return QuestionFactory(text="Which is right?", options=("Right", "Wrong"), correct_index=0, written=True)


@pytest.mark.django_db
def test_threshold_defaults_to_uncalibrated_point_six():
    assert threshold_for(backend="systemone", model_id="jev-1.13.0") == (0.6, False)


@pytest.mark.django_db
def test_threshold_stored_per_backend_and_model():
    ThresholdFactory(backend="systemone", model_id="jev-1.13.0", value=0.55)
    assert threshold_for(backend="systemone", model_id="jev-1.13.0") == (0.55, True)
    assert threshold_for(backend="systemone", model_id="jev-1.14.0") == (0.6, False)
    assert threshold_for(backend="llm", model_id="jev-1.13.0") == (0.6, False)


@pytest.mark.django_db
def test_default_threshold_is_a_setting(settings):
    settings.VERIFIER_DEFAULT_THRESHOLD = 0.7
    assert threshold_for(backend="llm", model_id="x-1") == (0.7, False)


@pytest.mark.django_db
def test_verdict_record_keeps_everything():
    question = _question()
    decision = GateDecision(
        key="q1",
        outcome="dropped",
        score=0.45,
        threshold=0.6,
        probabilities={"answer_correct": 0.77, "explanation_true": 0.45},
        reason="below_threshold",
        message="score 0.45 < threshold 0.60",
        latency_ms=212,
        backend="systemone",
        model_id="jev-1.13.0",
        input_tokens=437,
        output_tokens=4,
    )
    verdict = verdict_record(question_id=question.id, decision=decision)
    verdict.refresh_from_db()
    assert (verdict.outcome, verdict.score, verdict.threshold, verdict.reason) == (
        "dropped",
        0.45,
        0.6,
        "below_threshold",
    )
    assert verdict.probabilities == {"answer_correct": 0.77, "explanation_true": 0.45}
    assert (verdict.latency_ms, verdict.input_tokens, verdict.output_tokens) == (212, 437, 4)
    assert question.verdicts.get() == verdict


@pytest.mark.django_db(transaction=True)
async def test_gate_check_uses_the_stored_threshold(systemone):
    await Threshold.objects.acreate(backend="systemone", model_id="jev-1.13.0", value=0.95)
    decisions = await gate_check(items=items(2))
    assert [(d.outcome, d.threshold, d.calibrated) for d in decisions] == [("dropped", 0.95, True)] * 2


async def test_off_backend_labels_everything_unchecked(settings, model_server):
    settings.VERIFIER_BACKEND = "off"
    decisions = await gate_check(items=items(3))
    assert [(d.outcome, d.score, d.backend) for d in decisions] == [("unchecked", None, "off")] * 3
    assert all(d.playable for d in decisions)
    assert model_server.requests == []


async def test_one_info_line_per_round(systemone, caplog):
    systemone.script.faults = {"Question number 2": "500"}
    systemone.script.probabilities = {"Question number 3": 0.2}
    with caplog.at_level(logging.INFO, logger="verifier"):
        async with Gate.from_settings(threshold=0.6) as gate:
            await gate.check_all(items(4))
    infos = [r.getMessage() for r in caplog.records if r.name == "verifier" and r.levelno == logging.INFO]
    assert len(infos) == 1
    assert "checked=4 passed=2 dropped=1 unverified=1" in infos[0]
    assert "wall_ms=" in infos[0]
    warnings = [r.getMessage() for r in caplog.records if r.name == "verifier" and r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "q2" in warnings[0] and "http_status" in warnings[0]


async def test_unexpected_backend_error_fails_open(systemone):
    class Broken:
        name = "systemone"
        model_id = "jev-1.13.0"

        async def ask(self, **kwargs):
            raise ZeroDivisionError("boom")

        async def aclose(self):
            return None

    gate = Gate.from_settings(threshold=0.6)
    gate.backend = Broken()
    decision = await gate.check(item(1))
    assert (decision.outcome, decision.reason) == ("unverified", "unexpected_error")


def test_verdicts_cannot_be_deleted_from_the_admin(rf, admin_user):
    from django.contrib.admin.sites import site

    request = rf.get("/")
    request.user = admin_user
    assert site.get_model_admin(Verdict).has_delete_permission(request) is False
    assert site.get_model_admin(Threshold).has_change_permission(request) is True


# --- the model the server says it served -------------------------------------------------------------------------


def _run_round(count: int = 2) -> list[GateDecision]:
    gate = Gate.from_settings()  # sync: the stored thresholds are read here, never in the async part

    async def check() -> list[GateDecision]:
        async with gate:
            return await gate.check_all(items(count))

    return async_to_sync(check)()


@pytest.fixture
def fresh_mismatch_log():
    # "Once per process": a test that looks for the warning needs a process that has not logged it yet.
    gate_conf.model_mismatch_warnings_forget()
    yield
    gate_conf.model_mismatch_warnings_forget()


@pytest.mark.django_db(transaction=True)
def test_a_served_model_calibrated_lower_never_lowers_the_pinned_bar(systemone, caplog, fresh_mismatch_log):
    # A server that says it served jev-1.14.0 (stored 0.5) when jev-1.13.0 (stored 0.95) is pinned: the pinned bar.
    ThresholdFactory(backend="systemone", model_id="jev-1.13.0", value=0.95)
    ThresholdFactory(backend="systemone", model_id="jev-1.14.0", value=0.5)
    systemone.script.served_model = "jev-1.14.0"
    systemone.script.default_probability = 0.9  # below the pinned model's 0.95, above the served one's 0.5
    with caplog.at_level(logging.WARNING, logger="verifier"):
        decisions = _run_round()
        _run_round()
    assert [(d.outcome, d.model_id, d.requested_model_id, d.threshold, d.calibrated, d.reason) for d in decisions] == [
        ("dropped", "jev-1.14.0", "jev-1.13.0", 0.95, False, "model_changed")
    ] * 2
    verdict = verdict_record(question_id=_question().pk, decision=decisions[0])
    verdict.refresh_from_db()
    assert (verdict.model_id, verdict.requested_model_id, verdict.threshold, verdict.reason) == (
        "jev-1.14.0",
        "jev-1.13.0",
        0.95,
        "model_changed",
    )
    assert verdict.model_mismatch
    mismatches = [r for r in caplog.records if "served 'jev-1.14.0'" in r.getMessage()]
    assert len(mismatches) == 1 and mismatches[0].levelno == logging.WARNING
    assert "stricter" in mismatches[0].getMessage()


@pytest.mark.django_db(transaction=True)
def test_a_served_model_nobody_calibrated_gets_the_pinned_bar_not_the_default(systemone, fresh_mismatch_log):
    ThresholdFactory(backend="systemone", model_id="jev-1.13.0", value=0.95)
    systemone.script.served_model = "jev-2.0.0"
    systemone.script.default_probability = 0.9
    decisions = _run_round(1)
    assert [(d.outcome, d.model_id, d.threshold, d.calibrated, d.reason) for d in decisions] == [
        ("dropped", "jev-2.0.0", 0.95, False, "model_changed")
    ]


@pytest.mark.django_db(transaction=True)
def test_a_served_model_calibrated_stricter_is_judged_by_its_own_bar(systemone, fresh_mismatch_log):
    ThresholdFactory(backend="systemone", model_id="jev-1.13.0", value=0.6)
    ThresholdFactory(backend="systemone", model_id="jev-1.14.0", value=0.92)
    systemone.script.served_model = "jev-1.14.0"
    systemone.script.default_probability = 0.9
    decisions = _run_round(1)
    assert [(d.outcome, d.threshold, d.calibrated, d.reason) for d in decisions] == [
        ("dropped", 0.92, True, "model_changed")
    ]
    # The same answers from the pinned model pass at its own bar, with no reason.
    systemone.script.served_model = None
    decisions = _run_round(1)
    assert [(d.outcome, d.threshold, d.calibrated, d.reason) for d in decisions] == [("passed", 0.6, True, "")]


@pytest.mark.django_db(transaction=True)
def test_the_pinned_model_served_keeps_its_threshold(systemone):
    ThresholdFactory(backend="systemone", model_id="jev-1.13.0", value=0.95)
    decisions = _run_round(1)
    assert [(d.outcome, d.model_id, d.requested_model_id, d.threshold) for d in decisions] == [
        ("dropped", "jev-1.13.0", "jev-1.13.0", 0.95)
    ]


@pytest.mark.django_db(transaction=True)
def test_llm_records_the_chat_completions_model(llm, fresh_mismatch_log):
    # A local OpenAI-compatible server answers any model name with its own id.
    llm.script.served_model = "qwen2.5-0.5b-instruct"
    decisions = _run_round(1)
    assert (decisions[0].model_id, decisions[0].requested_model_id) == ("qwen2.5-0.5b-instruct", "checker-8b-2025-01")
