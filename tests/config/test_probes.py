"""/healthz, /readyz and /metrics (config/probes.py) as a load balancer and Prometheus meet them."""

import json

import pytest
from asgiref.sync import sync_to_async
from django.test import AsyncClient
from prometheus_client.parser import text_string_to_metric_families

from config import probes
from tests.fakes.fixtures import *  # noqa: F403
from tests.fakes.model_server import ModelServer
from tests.support.communicator import Client
from verifier.breaker import breaker_for
from verifier.gate import Gate, GateItem

TOKEN = "scrape-token-for-tests"
# A balancer probes the process's own address over plain http, with no cookie and a Host of its own.
BALANCER = {"Host": "10.20.30.40:8000", "X-Forwarded-Proto": "http"}
OPERATOR = {**BALANCER, "Authorization": f"Bearer {TOKEN}"}


@pytest.fixture
def production_like(settings):
    """What `make serve` runs with: debug off, https enforced, only the site's own host allowed."""
    settings.DEBUG = False
    settings.SECURE_SSL_REDIRECT = True
    settings.ALLOWED_HOSTS = ["quiz.example.org"]


def scrape(client, token: str = TOKEN) -> dict[str, float]:
    response = client.get("/metrics", headers={**BALANCER, "Authorization": f"Bearer {token}"})
    assert response.status_code == 200, response.content
    return samples(response.content.decode())


def samples(text: str) -> dict[str, float]:
    """Each sample as `name{label="value",…}` (labels sorted) -> its value."""
    found = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            labels = ",".join(f'{key}="{value}"' for key, value in sorted(sample.labels.items()))
            found[f"{sample.name}{{{labels}}}" if labels else sample.name] = sample.value
    return found


def grew(before: dict[str, float], after: dict[str, float], name: str) -> float:
    return after.get(name, 0.0) - before.get(name, 0.0)


@pytest.mark.django_db
def test_healthz_answers_a_balancer_on_any_host_over_plain_http(client, production_like):
    response = client.get("/healthz", headers=BALANCER)
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}
    assert response["Cache-Control"] == "no-store"
    # Every other page still gets the https redirect and the host check.
    assert client.get("/", headers=BALANCER).status_code == 400
    assert client.get("/", headers={"Host": "quiz.example.org"}).status_code == 301


@pytest.mark.django_db
def test_readyz_is_ready_on_the_embedded_default(client, settings, production_like):
    # As `make run` has it, whatever this run's settings: the in-memory layer, Celery in-process.
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    settings.CELERY_BROKER_URL = "memory://"
    settings.CELERY_TASK_ALWAYS_EAGER = True
    settings.METRICS_TOKEN = TOKEN
    response = client.get("/readyz", headers=OPERATOR)
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["status"] == "ok" and body["failed"] == []
    assert set(body["parts"]) == {"database", "channel_layer", "broker"}
    assert all(part["ok"] for part in body["parts"].values())
    assert body["parts"]["channel_layer"]["detail"] == "InMemoryChannelLayer"
    assert body["parts"]["broker"]["detail"] == "in-process (eager)"
    assert body["checker_breaker"] is None  # the gate is off


@pytest.mark.django_db
def test_an_open_checker_breaker_is_reported_and_does_not_fail_readiness(client, settings, production_like):
    settings.VERIFIER_BACKEND, settings.VERIFIER_MODEL = "systemone", "jev-1.13.0"
    settings.VERIFIER_BASE_URL = "http://127.0.0.1:9"
    breaker = breaker_for(backend="systemone", model_id="jev-1.13.0")
    breaker.cache.set(breaker._k("opened_at"), breaker.clock(), timeout=None)  # noqa: SLF001
    settings.METRICS_TOKEN = TOKEN
    response = client.get("/readyz", headers=OPERATOR)
    assert response.status_code == 200
    checker = response.json()["checker_breaker"]
    assert (checker["backend"], checker["model"], checker["state"]) == ("systemone", "jev-1.13.0", "open")


@pytest.fixture
def embedded(settings):
    """As `make run` has it: the in-memory layer, Celery in-process; and a process that has not yet been ready."""
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    settings.CELERY_BROKER_URL = "memory://"
    settings.CELERY_TASK_ALWAYS_EAGER = True
    probes.started.ready = False
    yield settings
    probes.started.ready = False


@pytest.mark.django_db
def test_livez_answers_a_balancer_on_any_host_over_plain_http(client, production_like, embedded):
    response = client.get("/livez", headers=BALANCER)
    assert response.status_code == 200, response.content
    assert response.json() == {"status": "ok"}
    assert response["Cache-Control"] == "no-store"


@pytest.mark.django_db
def test_livez_keeps_a_host_with_a_dead_broker_out_until_ready_and_in_through_a_shared_outage(
    client, production_like, embedded
):
    embedded.CELERY_BROKER_URL = "redis://127.0.0.1:9/0"  # nothing listens: the broker is down at start
    embedded.CELERY_TASK_ALWAYS_EAGER = False
    embedded.READYZ_TIMEOUT = 0.5
    for _ in range(2):  # asked again on each check while starting
        starting = client.get("/livez", headers=BALANCER)
        assert (starting.status_code, starting.json()) == (503, {"status": "starting"})
    embedded.CELERY_BROKER_URL = "memory://"  # the broker is back
    assert client.get("/livez", headers=BALANCER).status_code == 200
    # Once serving, a shared part's outage is no reason to leave the pool: readiness says so, liveness does not.
    embedded.CELERY_BROKER_URL = "redis://127.0.0.1:9/0"
    assert client.get("/readyz", headers=BALANCER).status_code == 503
    assert client.get("/livez", headers=BALANCER).status_code == 200


@pytest.mark.django_db
def test_readyz_shows_its_details_to_the_operator_and_the_status_alone_to_everyone_else(
    client, production_like, embedded
):
    embedded.METRICS_TOKEN = TOKEN
    embedded.VERIFIER_BACKEND, embedded.VERIFIER_MODEL = "systemone", "jev-1.13.0"
    embedded.VERIFIER_BASE_URL = "http://127.0.0.1:9"
    public = client.get("/readyz", headers=BALANCER)
    assert (public.status_code, public.json()) == (200, {"status": "ok"})
    assert "jev-1.13.0" not in public.content.decode()
    wrong = client.get("/readyz", headers={**BALANCER, "Authorization": "Bearer wrong"})
    assert wrong.json() == {"status": "ok"}
    operator = client.get("/readyz", headers=OPERATOR).json()
    assert operator["checker_breaker"]["model"] == "jev-1.13.0" and set(operator["parts"]) == {
        "database",
        "channel_layer",
        "broker",
    }
    # The balancer's own address (the test client's 127.0.0.1), asking for itself.
    embedded.READYZ_DETAILS_FROM = ["127.0.0.1"]
    assert "parts" in client.get("/readyz", headers=BALANCER).json()
    # The same address forwarding somebody else's request (the public, through the balancer): the status alone.
    forwarded = client.get("/readyz", headers={**BALANCER, "X-Forwarded-For": "203.0.113.9"})
    assert forwarded.json() == {"status": "ok"}
    # Without a token configured, an empty bearer is nobody's.
    embedded.METRICS_TOKEN, embedded.READYZ_DETAILS_FROM = "", []
    assert client.get("/readyz", headers={**BALANCER, "Authorization": "Bearer "}).json() == {"status": "ok"}


@pytest.mark.django_db
def test_metrics_are_off_without_a_token_and_refused_without_the_right_one(client, settings):
    settings.METRICS_TOKEN = ""
    assert client.get("/metrics").status_code == 404
    assert client.get("/metrics", headers={"Authorization": "Bearer "}).status_code == 404
    settings.METRICS_TOKEN = TOKEN
    assert client.get("/metrics").status_code == 403
    assert client.get("/metrics", headers={"Authorization": "Bearer wrong"}).status_code == 403
    assert client.get("/metrics", headers={"Authorization": TOKEN}).status_code == 403  # the scheme is part of it
    response = client.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/plain")
    assert "quizgate_answers_stored_total" in response.content.decode()


@pytest.mark.django_db(transaction=True)
async def test_metrics_count_a_played_games_answers_sockets_and_latencies(room, sockets, settings):
    settings.METRICS_TOKEN = TOKEN
    http = AsyncClient()

    async def ascrape():
        response = await http.get("/metrics", headers={**BALANCER, "Authorization": f"Bearer {TOKEN}"})
        assert response.status_code == 200
        return samples(response.content.decode())

    before = await ascrape()
    created = await room()
    code = created.room.code
    async with Client(code) as host:
        await host.send(type="host", token=created.host_token)
        await host.state(phase="lobby")
        ann, _ = await sockets.join(code, "Ann")
        ben, _ = await sockets.join(code, "Ben")
        playing = await ascrape()
        assert grew(before, playing, "quizgate_sockets_open") == 3
        assert playing["quizgate_rooms_open"] >= 1
        await host.send(type="start")
        await ann.state(phase="question")
        await ben.state(phase="question")
        for player in (ann, ben):
            await player.send(type="answer", question=0, option=1)
            await player.until(lambda m: m["type"] == "answered")
        await ann.state(phase="reveal")  # everyone answered: the question closes
        after = await ascrape()
        await ann.__aexit__()
        await ben.__aexit__()
    assert grew(before, after, "quizgate_answers_stored_total") == 2
    assert grew(before, after, "quizgate_answer_ack_seconds_count") == 2
    # The question and the reveal, at least, to each of the three sockets.
    assert grew(before, after, "quizgate_fanout_seconds_count") >= 6
    assert grew(before, after, 'quizgate_fanout_seconds_bucket{le="+Inf"}') >= 6
    assert grew(before, await ascrape(), "quizgate_sockets_open") == 0  # all closed again


@pytest.fixture
def checker(settings, model_server: ModelServer) -> ModelServer:
    settings.VERIFIER_BACKEND = "systemone"
    settings.VERIFIER_BASE_URL = model_server.url
    settings.VERIFIER_API_KEY = "test-key"
    settings.VERIFIER_MODEL = "jev-1.13.0"
    settings.VERIFIER_TIMEOUT = 10.0  # roomy: the checker answers at once; its deadline is not the subject here
    settings.VERIFIER_BLIND = False  # one call per question: the counts below are the questions'
    settings.METRICS_TOKEN = TOKEN
    return model_server


def _item(n: int) -> GateItem:
    return GateItem(
        key=f"q{n}", text=f"Question {n}: which is right?", options=("Right", "Wrong"), correct_index=0, explanation=""
    )


@pytest.mark.django_db(transaction=True)
async def test_metrics_count_a_gated_rounds_calls_outcomes_fail_opens_and_breaker(checker):
    http = AsyncClient()

    async def ascrape():
        response = await http.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
        assert response.status_code == 200
        return samples(response.content.decode())

    checker.script.probabilities = {"Question 2:": 0.1}  # dropped
    checker.script.faults = {"Question 3:": "500", "Question 4:": "non_json"}  # both pass unverified
    before = await ascrape()
    gate = Gate.from_settings(threshold=0.6)
    async with gate:
        decisions = await gate.check_all([_item(n) for n in range(1, 5)])
    assert [d.outcome for d in decisions] == ["passed", "dropped", "unverified", "unverified"]
    after = await ascrape()
    calls = 'quizgate_gate_calls_total{backend="systemone",result="%s"}'
    # A reply that is not JSON is still an answer (as the breaker sees it): the call ended ok, the question failed.
    assert grew(before, after, calls % "ok") == 3
    assert grew(before, after, calls % "http_status") == 1
    questions = 'quizgate_gate_questions_total{backend="systemone",outcome="%s"}'
    assert [grew(before, after, questions % o) for o in ("passed", "dropped", "unverified")] == [1, 1, 2]
    fail_open = 'quizgate_gate_fail_open_total{backend="systemone",reason="%s"}'
    assert grew(before, after, fail_open % "http_status") == 1
    assert grew(before, after, fail_open % "bad_json") == 1
    state = 'quizgate_gate_breaker_state{backend="systemone",model="jev-1.13.0",state="%s"}'
    assert (after[state % "closed"], after[state % "open"]) == (1, 0)
    assert 'quizgate_gate_breaker_failures{backend="systemone",model="jev-1.13.0"}' in after

    # The checker keeps failing: the breaker opens, and the next round's call is not sent.
    breaker = breaker_for(backend="systemone", model_id="jev-1.13.0")
    await sync_to_async(breaker.cache.set)(breaker._k("opened_at"), breaker.clock(), timeout=None)  # noqa: SLF001
    gate = Gate.from_settings(threshold=0.6)
    async with gate:
        (decision,) = await gate.check_all([_item(5)])
    assert (decision.outcome, decision.reason) == ("unverified", "checker_unavailable")
    opened = await ascrape()
    assert grew(after, opened, calls % "breaker_open") == 1
    assert grew(after, opened, fail_open % "checker_unavailable") == 1
    assert (opened[state % "closed"], opened[state % "open"]) == (0, 1)


def test_the_metrics_view_answers_json_when_refused(client, settings):
    settings.METRICS_TOKEN = TOKEN
    response = client.get("/metrics")
    assert response.status_code == 403
    assert "Bearer" in json.loads(response.content)["error"]
