"""What a round cost, end to end: a writer, a checker (with its blind re-answer) and a second opinion on scripted
servers that report known usage; the round's export carries tokens × price by role, the pages say it in one
line, and a server that reports nothing (or nonsense) is estimated and marked so."""

import csv
import io
import json
from collections.abc import Iterator

import pytest
from django.urls import reverse

from core import cost
from quiz.cost_line import cost_line
from quiz.generation.jobs import generation_job_create, generation_run
from quiz.models import GenerationJob, GenerationStatus
from tests.config.test_probes import BALANCER, grew, samples
from tests.fakes.model_server import ModelServer
from tests.quiz.generation import WRITER_MODEL, dropping

CHECKER_MODEL = "jev-1.13.0"
JUDGE_MODEL = "judge-7b-2025-03"
PRICES = f"{WRITER_MODEL}=0.15/0.60,{CHECKER_MODEL}=0.042/0.01,{JUDGE_MODEL}=2.5/10"


@pytest.fixture
def judge() -> Iterator[ModelServer]:
    server = ModelServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def priced(settings, gate_on, judge):
    settings.MODEL_PRICES = PRICES
    settings.VERIFIER_SECOND_OPINION_MODEL = JUDGE_MODEL
    settings.VERIFIER_SECOND_OPINION_BASE_URL = f"{judge.url}/v1"
    settings.VERIFIER_SECOND_OPINION_API_KEY = "judge-key"
    settings.VERIFIER_SECOND_OPINION_BAND = 0.1
    settings.VERIFIER_SECOND_OPINION_TIMEOUT = 10.0
    # One question the gate drops, one near the threshold (0.6) that the second opinion decides.
    gate_on.script.probabilities = {"DROPME": 0.1, "question 3:": 0.62}
    gate_on.writer.make_question = dropping("0.2")
    return gate_on


def _own_session(client) -> str:
    session = client.session
    session["owner_key"] = "cost-key"
    session.save()
    return "cost-key"


def _scrape(client) -> dict[str, float]:
    response = client.get("/metrics", headers={**BALANCER, "Authorization": "Bearer cost-scrape"})
    assert response.status_code == 200
    return samples(response.content.decode())


def _run(client, count: int = 5) -> GenerationJob:
    job = generation_job_create(owner_key=_own_session(client), count=count, topic="Birds")
    generation_run(job_id=job.pk)
    job.refresh_from_db()
    assert job.status == GenerationStatus.DONE, job.message
    return job


def _sent(usages, kind: str, fields: tuple[str, str]) -> tuple[int, int]:
    chosen = [usage for sent_kind, usage in usages if sent_kind == kind]
    return sum(usage[fields[0]] for usage in chosen), sum(usage[fields[1]] for usage in chosen)


def _price(model: str, tokens: tuple[int, int]) -> float:
    price = cost.prices_parse(PRICES)[model]
    return (tokens[0] * float(price.input) + tokens[1] * float(price.output)) / 1e6


@pytest.mark.django_db(transaction=True)
def test_a_rounds_export_totals_equal_the_reported_tokens_times_price_by_role(client, priced, judge, settings):
    settings.METRICS_TOKEN = "cost-scrape"
    before = _scrape(client)
    job = _run(client)
    after = _scrape(client)
    payload = json.loads(client.get(reverse("quiz:round_export_json", args=[job.round_id])).content)
    found = payload["round"]["cost"]
    roles = found["roles"]
    assert set(roles) == {"writer", "checker", "second_opinion", "blind"}

    writer_sent = priced.writer.usage_sent
    writer_tokens = (sum(u["prompt_tokens"] for u in writer_sent), sum(u["completion_tokens"] for u in writer_sent))
    checker_tokens = _sent(priced.script.usage_sent, "check", ("input_tokens", "output_tokens"))
    blind_tokens = _sent(priced.script.usage_sent, "blind", ("input_tokens", "output_tokens"))
    judge_tokens = _sent(judge.script.usage_sent, "check", ("prompt_tokens", "completion_tokens"))
    expected = {
        "writer": (WRITER_MODEL, len(writer_sent), writer_tokens),
        "checker": (CHECKER_MODEL, None, checker_tokens),
        "blind": (CHECKER_MODEL, None, blind_tokens),
        "second_opinion": (JUDGE_MODEL, None, judge_tokens),
    }
    for role, (model, calls, tokens) in expected.items():
        entry = roles[role]
        assert entry["model"] == model and not entry["estimated"], role
        assert (entry["input_tokens"], entry["output_tokens"]) == tokens and tokens[0] > 0, role
        assert entry["amount"] == pytest.approx(_price(model, tokens)), role
        if calls is not None:
            assert entry["calls"] == calls
    # Every question checked counts, the one the gate dropped too: 8 asked for 5, each checked once.
    assert roles["checker"]["calls"] == 8 == len([k for k, _ in priced.script.usage_sent if k == "check"])
    assert found["total"] == pytest.approx(sum(_price(m, t) for m, _, t in expected.values()))
    assert not found["estimated"] and found["no_price"] == []

    # /metrics counted the same tokens and dollars, by model and role.
    for role, (model, _, tokens) in expected.items():
        for kind, count in zip(("input", "output"), tokens, strict=True):
            name = f'quizgate_model_tokens_total{{kind="{kind}",model="{model}",role="{role}"}}'
            assert grew(before, after, name) == count, name
        name = f'quizgate_model_cost_dollars_total{{model="{model}",role="{role}"}}'
        assert grew(before, after, name) == pytest.approx(_price(model, tokens)), name

    # The host reads it in one line on the job's page, the round's page and the game's audit trail.
    line = payload["round"]["cost_line"]
    writer_text = cost.dollars_text(roles["writer"]["amount"])
    assert line.startswith(f"written for {writer_text}, checked for {cost.dollars_text(roles['checker']['amount'])}")
    for url in (reverse("quiz:generate_detail", args=[job.pk]), reverse("quiz:round_edit", args=[job.round_id])):
        page = client.get(url).content.decode()
        assert f'id="round-cost">{line}<' in page, url

    # The CSV: each question's checks in dollars; a question's two checkers' amounts add up to it.
    rows = list(
        csv.DictReader(io.StringIO(client.get(f"/rounds/{job.round_id}/export.csv").content.decode("utf-8-sig")))
    )
    assert len(rows) == 5
    for row in rows:
        checks = json.loads(row["checks"])
        assert float(row["check_cost_usd"]) == pytest.approx(sum(check["cost"]["total"] for check in checks))
        assert float(row["check_cost_usd"]) > 0


@pytest.mark.django_db(transaction=True)
def test_a_server_that_reports_no_usage_is_estimated_and_marked(client, priced, judge):
    priced.writer.report_usage = False
    priced.script.report_usage = False
    job = _run(client, count=3)
    roles = job.cost["roles"]
    assert roles["writer"]["estimated"] and roles["checker"]["estimated"] and roles["blind"]["estimated"]
    # The judge reported its own: only what was estimated says so.
    assert not roles["second_opinion"]["estimated"]
    for role in ("writer", "checker", "blind"):
        assert roles[role]["input_tokens"] > 0 and roles[role]["amount"] > 0, role
    assert job.cost["estimated"]
    page = client.get(reverse("quiz:generate_detail", args=[job.pk])).content.decode()
    assert "written for about $" in page and "some tokens estimated" in page


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    "nonsense",
    [
        {"prompt_tokens": -500, "completion_tokens": -2},
        {"prompt_tokens": 10**14, "completion_tokens": "many"},
        {"prompt_tokens": 12.5, "completion_tokens": None},
    ],
)
def test_nonsense_counts_are_counted_sanely_never_negative(client, priced, judge, nonsense):
    priced.writer.usage_override = nonsense
    judge.script.usage_override = nonsense
    job = _run(client, count=3)
    for role in ("writer", "second_opinion"):
        entry = job.cost["roles"][role]
        assert entry["estimated"] and 0 < entry["input_tokens"] < 100_000, role
        assert entry["amount"] > 0, role
    assert job.cost["total"] > 0


@pytest.mark.django_db(transaction=True)
def test_a_model_with_no_price_counts_tokens_and_says_no_price(client, priced, settings):
    settings.MODEL_PRICES = f"{CHECKER_MODEL}=0.042/0.01"
    job = _run(client, count=3)
    writer = job.cost["roles"]["writer"]
    assert (
        writer["amount"] is None
        and writer["input_tokens"] > 0
        and job.cost["no_price"] == sorted([JUDGE_MODEL, WRITER_MODEL])
    )
    assert "written: " in job.cost_label and "tokens, no price" in job.cost_label
    assert "checked for $" in job.cost_label


def test_the_line_lists_the_roles_in_their_order_whatever_order_they_are_stored_in():
    entry = {"model": "m", "calls": 1, "input_tokens": 10, "output_tokens": 1, "estimated": False}
    stored = {
        "roles": {
            "blind": {**entry, "amount": 0.0001},
            "second_opinion": {**entry, "amount": 0.0002},
            "writer": {**entry, "amount": 0.004},
            "checker": {**entry, "amount": 0.0011},
        }
    }
    assert cost_line(stored) == (
        "written for $0.004, checked for $0.0011, second opinion for $0.0002, blind re-answer for $0.0001"
    )
    assert cost_line({}) == cost_line(None) == cost_line({"roles": "x"}) == ""
