"""What checker_eval says of money and of position: the run's tokens and dollars, the cost per 1,000 questions
and per caught defect at the recommended threshold (checked against the scripted checker's own usage), the
second opinion's share, and the position bias of a checker whose blind re-answer is always "A"."""

import json

import pytest

from core import cost
from review.checker_eval import EvalItem, EvalResult
from review.checker_eval.spend import eval_cost, position_bias
from review.thresholds.sweep import DEFECTIVE, GOOD
from tests.review.test_checker_eval import answering, knows_the_answers, run, small_set, write_set  # noqa: F401

PRICE = "jev-1.13.0=0.042/0.5"


def _spent(server) -> tuple[int, int]:
    return (
        sum(usage["input_tokens"] for _, usage in server.script.usage_sent),
        sum(usage["output_tokens"] for _, usage in server.script.usage_sent),
    )


@pytest.mark.django_db(transaction=True)
def test_an_oracle_checkers_cost_per_caught_defect_is_its_arithmetic(answering, settings, tmp_path):  # noqa: F811
    settings.MODEL_PRICES = PRICE
    items = small_set()
    knows_the_answers(answering, items)
    path = write_set(tmp_path, items)
    report = json.loads(run("--set", str(path), "--json")[0])
    spent = report["cost"]
    input_tokens, output_tokens = _spent(answering)
    amount = (input_tokens * 0.042 + output_tokens * 0.5) / 1e6
    assert (spent["input_tokens"], spent["output_tokens"]) == (input_tokens, output_tokens) and input_tokens > 0
    assert not spent["estimated"] and spent["no_price"] == []
    assert spent["amount"] == pytest.approx(amount)
    # Twelve questions checked; the recommended threshold (0.95) catches all 8 defects.
    assert (spent["threshold"], spent["caught"]) == (0.95, 8)
    assert spent["per_thousand"] == pytest.approx(amount * 1000 / 12)
    assert spent["per_caught"] == pytest.approx(amount / 8)
    assert report["position_bias"]["biased"] is False and "position bias" not in report["verdict"]

    out, _ = run("--set", str(path))
    assert f"{input_tokens:,} input and {output_tokens:,} output tokens, {cost.dollars_text(amount)} in all" in out
    assert f"{cost.dollars_text(amount / 8)} per caught defect at the recommended threshold 0.95 (8 caught)" in out


@pytest.mark.django_db(transaction=True)
def test_an_always_a_checkers_report_names_its_position_bias(answering, tmp_path):  # noqa: F811
    answering.script.default_probability = 0.7
    answering.script.default_choice = "A"  # the blind answer: always A, whatever A is
    out, _ = run("--set", str(write_set(tmp_path, small_set())))
    verdict = out.split("VERDICT: ", 1)[1]
    assert verdict.startswith("this checker does not separate good from bad questions: do not gate on it.")
    assert "position bias" in verdict and "named the option at the same place in 12 of 12" in verdict
    assert "100% of its answers were the option shown as 'A'" in verdict
    # Without MODEL_PRICES it still counts the tokens, and says there is no price.
    assert "no price for: jev-1.13.0 (set MODEL_PRICES)" in out


def _result(label: str, outcome: str, *, second: dict | None = None, usages=()) -> EvalResult:
    item = EvalItem("Q?", ("a", "b", "c"), 0, "", label)
    return EvalResult(item, outcome, 0.5, {}, "", "", 0.1, 1, "systemone", "m", usages=usages, second=second)


def test_the_cascade_says_what_the_second_opinion_settled_and_what_it_cost():
    prices = cost.prices_parse("cheap=1/0,strong=10/0")
    cheap = (("checker", cost.Usage(model="cheap", calls=1, input_tokens=1_000)),)
    strong = cheap + (("second_opinion", cost.Usage(model="strong", calls=1, input_tokens=1_000)),)
    settled = {"outcome": "dropped", "changed": True}
    results = [
        _result(GOOD, "passed", usages=cheap),
        _result(DEFECTIVE, "dropped", usages=strong, second=settled),
        _result(DEFECTIVE, "passed", usages=strong, second={"outcome": "failed"}),
        _result(GOOD, "passed", usages=cheap, second={"outcome": "skipped"}),
    ]
    found = eval_cost(results, prices=prices, threshold=0.6, caught=1)
    assert found["first_amount"] == pytest.approx(0.004) and found["per_caught"] == pytest.approx(0.004)
    second = found["second_opinion"]
    assert (second["asked"], second["settled"], second["changed"], second["cascade_caught"]) == (2, 1, 1, 1)
    assert second["amount"] == pytest.approx(0.02) and second["cascade_per_caught"] == pytest.approx(0.024)
    assert second["cascade_per_thousand"] == pytest.approx(0.024 * 1000 / 4)


def test_a_blind_answer_that_follows_the_content_is_not_called_biased():
    def blind(*picks: tuple[str, int]) -> dict:
        return {"orders": [{"picked_shown": shown, "picked": picked} for shown, picked in picks]}

    content = [blind(("B", 1), ("C", 1)), blind(("A", 0), ("B", 0)), blind(("C", 2), ("A", 2))]
    assert position_bias(content)["biased"] is False
    by_place = [blind(("A", 1), ("A", 2)), blind(("A", 0), ("A", 1)), blind(("B", 2), ("C", 2))]
    assert position_bias(by_place) | {"top_share": 0} == {
        "answers": 6,
        "compared": 3,
        "follows_order": 2,
        "follows_content": 1,
        "top_letter": "A",
        "top_share": 0,
        "biased": True,
    }
    # One order only: the picks' places tell it, once there are enough of them.
    assert position_bias([blind(("A", i % 3)) for i in range(10)])["biased"] is True
    assert position_bias([blind(("ABC"[i % 3], 0)) for i in range(10)])["biased"] is False
    assert position_bias([None, {"orders": "x"}]) is None
