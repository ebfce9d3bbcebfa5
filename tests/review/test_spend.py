"""The review side's last 30 days: what each model cost by role, and what the check caught for it (dropped
questions a reviewer later labelled defective)."""

from datetime import timedelta

import pytest
from django.utils import timezone

from review.services import review_label
from review.spend import review_spend
from tests.factories import GenerationJobFactory, VerdictFactory
from tests.review.test_admin import SWEEP, staff, staff_client  # noqa: F401
from verifier.models import Verdict, VerdictOutcome

pytestmark = pytest.mark.django_db


def _usage(model: str, input_tokens: int, output_tokens: int, *, estimated: bool = False) -> dict:
    return {
        "model": model,
        "calls": 1,
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "estimated": estimated,
    }


def _checked(outcome: str, *, days_ago: int = 1, blind: bool = True) -> Verdict:
    usage = {"checker": _usage("jev-1.13.0", 1_000, 10)}
    if blind:
        usage["blind"] = _usage("jev-1.13.0", 500, 2, estimated=True)
    verdict = VerdictFactory(outcome=outcome, details={"usage": usage})
    Verdict.objects.filter(pk=verdict.pk).update(created_at=timezone.now() - timedelta(days=days_ago))
    return verdict


@pytest.fixture
def month(settings):
    settings.MODEL_PRICES = "jev-1.13.0=0.042/0.5,writer-2025-01-01=0.15/0.6"
    caught = _checked(VerdictOutcome.DROPPED)
    good = _checked(VerdictOutcome.DROPPED)
    _checked(VerdictOutcome.DROPPED)  # not labelled yet
    _checked(VerdictOutcome.PASSED, blind=False)
    _checked(VerdictOutcome.DROPPED, days_ago=31)  # before the window: neither cost nor caught
    review_label(question=caught.question, label="defective", note="wrong answer marked")
    review_label(question=good.question, label="correct")
    GenerationJobFactory(cost={"roles": {"writer": _usage("writer-2025-01-01", 2_000, 5_000)}})
    GenerationJobFactory(cost={"roles": {"writer": _usage("local-model", 100, 100)}})


def test_the_last_30_days_cost_by_model_and_role_and_what_was_caught(month):
    spend = review_spend()
    rows = {(row.model, row.role): row for row in spend.rows}
    assert set(rows) == {
        ("jev-1.13.0", "checker"),
        ("jev-1.13.0", "blind"),
        ("writer-2025-01-01", "writer"),
        ("local-model", "writer"),
    }
    checker, blind = rows["jev-1.13.0", "checker"], rows["jev-1.13.0", "blind"]
    assert (checker.calls, checker.input_tokens, checker.output_tokens) == (4, 4_000, 40)
    assert checker.amount == pytest.approx((4_000 * 0.042 + 40 * 0.5) / 1e6) and not checker.estimated
    assert blind.estimated and blind.amount == pytest.approx((1_500 * 0.042 + 6 * 0.5) / 1e6)
    assert rows["local-model", "writer"].amount is None
    writer = (2_000 * 0.15 + 5_000 * 0.6) / 1e6
    assert spend.total == pytest.approx(writer + checker.amount + blind.amount)
    assert (spend.dropped, spend.caught, spend.good_dropped, spend.unlabelled) == (3, 1, 1, 1)
    assert spend.per_caught == pytest.approx(checker.amount + blind.amount)


def test_the_sweep_page_shows_the_months_cost_and_catch(month, staff_client):  # noqa: F811
    body = staff_client.get(SWEEP).content.decode()
    assert 'data-model="jev-1.13.0" data-role="checker"' in body
    assert 'data-model="local-model" data-role="writer"' in body and "no price" in body
    assert "reviewers labelled\n    1 defective (caught) and 1 correct (good questions dropped)" in body
