"""The circuit breaker on its own (a fake clock over a real Django cache), then shared through Redis."""

import os

import pytest
from django.core.cache.backends.locmem import LocMemCache
from django.core.cache.backends.redis import RedisCache

from verifier.backends.base import GateFailure, status_failure
from verifier.breaker import Breaker, Permit, means_unavailable

COOLDOWN = 30.0


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


def make(cache, clock: Clock, *, model_id: str = "jev-1.13.0", failures: int = 3) -> Breaker:
    return Breaker(
        cache=cache,
        backend="systemone",
        model_id=model_id,
        failures=failures,
        cooldown=COOLDOWN,
        probe_timeout=1.0,
        clock=clock,
    )


@pytest.fixture
def cache():
    found = LocMemCache("breaker-tests", {})
    found.clear()
    return found


TIMEOUT = GateFailure("timeout", "no answer")


def fail(breaker: Breaker, times: int, failure: GateFailure = TIMEOUT) -> None:
    for _ in range(times):
        permit = breaker.allow()
        assert permit is not None
        breaker.record(permit, failure)


@pytest.mark.parametrize(
    ("failure", "unavailable"),
    [
        (GateFailure("timeout", ""), True),
        (GateFailure("connection_refused", ""), True),
        (GateFailure("connect_error", ""), True),
        (GateFailure("connection_closed", ""), True),
        (GateFailure("truncated_body", ""), True),
        (status_failure(500), True),
        (status_failure(503), True),
        (status_failure(429), True),
        (status_failure(401), False),
        (status_failure(404), False),
        (status_failure(302), False),
        (GateFailure("bad_json", ""), False),
        (GateFailure("bad_probability", ""), False),
        (GateFailure("missing_answers", ""), False),
        (GateFailure("body_too_large", ""), False),
    ],
    ids=lambda value: f"{value.reason}:{value.status}" if isinstance(value, GateFailure) else str(value),
)
def test_only_an_absent_checker_counts_as_unavailable(failure, unavailable):
    assert means_unavailable(failure) is unavailable


def test_a_run_of_failures_opens_it(cache, clock):
    breaker = make(cache, clock)
    fail(breaker, 2)
    assert breaker.state().state == "closed"
    assert breaker.state().failures == 2
    fail(breaker, 1)
    state = breaker.state()
    assert (state.state, state.failures, state.opened_at, state.last_reason) == ("open", 3, clock.now, "timeout")
    assert breaker.allow() is None


def test_an_answer_ends_the_run(cache, clock):
    breaker = make(cache, clock)
    fail(breaker, 2)
    breaker.record(breaker.allow(), None)
    fail(breaker, 2)
    assert breaker.state().state == "closed"


def test_a_bad_reply_is_an_answer_not_a_failure(cache, clock):
    breaker = make(cache, clock)
    fail(breaker, 2)
    fail(breaker, 5, GateFailure("bad_json", "body is not JSON"))
    fail(breaker, 5, status_failure(404))
    assert breaker.state().state == "closed"
    assert breaker.state().failures == 0


def test_after_the_cooldown_one_probe_goes_and_its_answer_closes_it(cache, clock):
    breaker = make(cache, clock)
    fail(breaker, 3)
    clock.now += COOLDOWN - 1
    assert breaker.allow() is None
    clock.now += 1
    assert breaker.state().state == "half-open"
    probe = breaker.allow()
    assert probe == Permit(probe=True)
    # Only one: everyone else is still refused while the probe is out.
    assert breaker.allow() is None
    assert breaker.state().probing
    breaker.record(probe, None)
    state = breaker.state()
    assert (state.state, state.failures, state.opened_at, state.probing) == ("closed", 0, None, False)
    assert breaker.allow() == Permit(probe=False)


def test_a_failed_probe_opens_it_for_another_cooldown(cache, clock):
    breaker = make(cache, clock)
    fail(breaker, 3)
    clock.now += COOLDOWN
    probe = breaker.allow()
    breaker.record(probe, status_failure(503))
    state = breaker.state()
    assert (state.state, state.opened_at, state.last_reason) == ("open", clock.now, "http_status")
    clock.now += COOLDOWN - 1
    assert breaker.allow() is None
    clock.now += 1
    assert breaker.allow() == Permit(probe=True)


def test_an_abandoned_probe_lets_the_next_caller_probe(cache, clock):
    breaker = make(cache, clock)
    fail(breaker, 3)
    clock.now += COOLDOWN
    breaker.release(breaker.allow())
    assert breaker.allow() == Permit(probe=True)


def test_each_backend_and_model_has_its_own(cache, clock):
    fail(make(cache, clock, model_id="jev-1.13.0"), 3)
    assert make(cache, clock, model_id="jev-1.13.0").state().state == "open"
    assert make(cache, clock, model_id="jev-1.14.0").state().state == "closed"


@pytest.mark.skipif(not os.environ.get("REDIS_URL"), reason="set REDIS_URL: the breaker is shared through Redis")
def test_two_processes_share_one_breaker_through_redis(clock):
    def process_cache() -> RedisCache:
        # Each a cache of its own, as two processes would build from the same settings.
        return RedisCache(os.environ["REDIS_URL"], {"KEY_PREFIX": "quizgate-breaker-test"})

    first, second = make(process_cache(), clock), make(process_cache(), clock)
    first.reset()
    try:
        fail(first, 2)
        fail(second, 1)  # the third failure in a row, counted across both
        assert first.state().state == second.state().state == "open"
        assert second.allow() is None
        clock.now += COOLDOWN
        probe = first.allow()
        assert probe == Permit(probe=True)
        assert second.allow() is None  # one probe between them
        first.record(probe, None)
        assert second.state().state == "closed"
    finally:
        first.reset()
