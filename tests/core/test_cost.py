"""Prices, token counts and a round's cost (core/cost.py): what the operator sets, what servers report (or fail
to), and the arithmetic the exports and the metrics rely on."""

import os
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import pytest

from core import cost
from core.cost import Price, PriceSettingError, Usage

ROOT = Path(__file__).resolve().parents[2]


def test_prices_parse_the_documented_example():
    prices = cost.prices_parse("jev-1.13.0=0.042/0, gpt-4o-mini-2024-07-18=0.15/0.60")
    assert prices == {
        "jev-1.13.0": Price(input=Decimal("0.042"), output=Decimal("0")),
        "gpt-4o-mini-2024-07-18": Price(input=Decimal("0.15"), output=Decimal("0.60")),
    }
    assert cost.prices_parse("") == {} and cost.prices_parse(" , ") == {}


@pytest.mark.parametrize(
    ("setting", "named"),
    [
        ("gpt-4o-mini=0.15", "'gpt-4o-mini'"),
        ("gpt-4o-mini=cheap/0.6", "'gpt-4o-mini'"),
        ("gpt-4o-mini=0.15/-1", "'gpt-4o-mini'"),
        ("gpt-4o-mini=0.15/NaN", "'gpt-4o-mini'"),
        ("jev-1.13.0=0.042/0,jev-1.13.0=1/1", "'jev-1.13.0'"),
        ("jev-1.13.0 0.042/0", "'jev-1.13.0 0.042/0'"),
        ("=0.1/0.2", "'=0.1/0.2'"),
    ],
)
def test_a_price_that_does_not_parse_is_refused_naming_it(setting, named):
    with pytest.raises(PriceSettingError) as refused:
        cost.prices_parse(setting)
    assert named in str(refused.value) and "MODEL_PRICES" in str(refused.value)


def test_the_server_does_not_start_with_a_price_that_does_not_parse():
    env = {**os.environ, "DJANGO_DEBUG": "1", "MODEL_PRICES": "jev-1.13.0=0.042/0,gpt-4o-mini=cheap/0.6"}
    env["DJANGO_SETTINGS_MODULE"] = "config.settings"
    code = "import django; django.setup()"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True)
    assert done.returncode != 0
    assert "ImproperlyConfigured" in done.stderr and "'gpt-4o-mini'" in done.stderr and "cheap" in done.stderr


@pytest.mark.parametrize(
    ("reported", "counted"),
    [
        (120, 120),
        (0, 0),
        ("37", 37),
        (12.0, 12),
        (12.2, 13),  # a fraction: never fewer tokens than the server said
        (-5, None),
        (True, None),
        (None, None),
        ("lots", None),
        (float("nan"), None),
        (float("inf"), None),
        (10**15, None),  # past any reply's size: a broken counter
        ([3], None),
    ],
)
def test_a_reported_count_is_read_sanely(reported, counted):
    assert cost.reported_tokens(reported) == counted


def test_a_count_the_server_did_not_report_is_estimated_and_marked():
    usage = cost.call_usage(model="m", input_tokens=None, output_tokens=7, input_chars=401, output_chars=0)
    assert (usage.input_tokens, usage.output_tokens, usage.estimated) == (101, 7, True)
    reported = cost.call_usage(model="m", input_tokens=100, output_tokens=7, input_chars=401)
    assert (reported.input_tokens, reported.estimated) == (100, False)
    # Nonsense counts are estimated too, and never negative.
    nonsense = cost.call_usage(model="m", input_tokens=-400, output_tokens=1e30, input_chars=40, output_chars=8)
    assert (nonsense.input_tokens, nonsense.output_tokens, nonsense.estimated) == (10, 2, True)


def test_a_rounds_cost_is_tokens_times_price_by_role():
    prices = cost.prices_parse("jev-1.13.0=0.042/0,gpt-4o-mini-2024-07-18=0.15/0.60")
    writer = Usage(model="gpt-4o-mini-2024-07-18", calls=2, input_tokens=1_500, output_tokens=4_000)
    checks = [Usage(model="jev-1.13.0", calls=1, input_tokens=300, output_tokens=4) for _ in range(8)]
    usages = [("writer", writer)] + [("checker", usage) for usage in checks]
    usages.append(("blind", Usage(model="jev-1.13.0", calls=2, input_tokens=250, output_tokens=2, estimated=True)))
    found = cost.round_cost(usages, prices)
    writer_amount = (1_500 * 0.15 + 4_000 * 0.60) / 1e6
    checker_amount = 8 * 300 * 0.042 / 1e6
    blind_amount = 250 * 0.042 / 1e6
    assert list(found["roles"]) == ["writer", "checker", "blind"]
    assert found["roles"]["writer"]["amount"] == pytest.approx(writer_amount)
    assert found["roles"]["checker"] == {
        "model": "jev-1.13.0",
        "calls": 8,
        "input_tokens": 2_400,
        "output_tokens": 32,
        "estimated": False,
        "amount": pytest.approx(checker_amount),
    }
    assert found["roles"]["blind"]["estimated"] and found["estimated"]
    assert found["total"] == pytest.approx(writer_amount + checker_amount + blind_amount)
    assert found["no_price"] == []


def test_a_model_with_no_price_counts_its_tokens_and_says_so():
    prices = cost.prices_parse("jev-1.13.0=0.042/0")
    usages = [("writer", Usage(model="local-llama", calls=1, input_tokens=900, output_tokens=2_000))]
    usages.append(("checker", Usage(model="jev-1.13.0", calls=1, input_tokens=1_000, output_tokens=2)))
    found = cost.round_cost(usages, prices)
    assert found["roles"]["writer"]["amount"] is None and found["roles"]["writer"]["output_tokens"] == 2_000
    assert found["total"] == pytest.approx(0.000042) and found["no_price"] == ["local-llama"]
    assert cost.round_cost([("writer", usages[0][1])], prices)["total"] is None


def test_a_stored_usage_read_back_never_goes_negative():
    assert cost.Usage.from_dict({"model": "m", "calls": -3, "input_tokens": -100, "output_tokens": "x"}) == Usage(
        model="m"
    )
    assert cost.Usage.from_dict("nonsense") is None
    assert cost.amount(Usage(input_tokens=10**7, output_tokens=10**7), Price(Decimal(0), Decimal(0))) == 0


@pytest.mark.parametrize(
    ("amount", "text"),
    [(0.004, "$0.004"), (0.00112, "$0.0011"), (0.0000421, "$0.000042"), (1.256, "$1.26"), (0, "$0"), (-1, "$0")],
)
def test_dollars_read_as_a_person_writes_them(amount, text):
    assert cost.dollars_text(amount) == text
