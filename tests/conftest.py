import pytest

from quiz.models import CheckStatus, Provenance
from quiz.services import question_create, round_create
from quiz.validation import QuestionData
from tests.support.communicator import server_lifespan

SAMPLE = [
    QuestionData(
        text="What is 2 + 2?", options=("3", "4", "5", "22"), correct_index=1, explanation="Two and two make four."
    ),
    QuestionData(
        text="Which planet is closest to the Sun?",
        options=("Venus", "Earth", "Mercury", "Mars"),
        correct_index=2,
        explanation="Mercury orbits nearest the Sun.",
    ),
    QuestionData(
        text="What is H2O commonly called?",
        options=("Water", "Salt", "Air"),
        correct_index=0,
        explanation="H2O is the formula of water.",
    ),
]


@pytest.fixture
def make_round():
    def make(questions: list[QuestionData] | None = None, title: str = "Test round"):
        created = [question_create(data=q, provenance=Provenance.HOST) for q in (questions or SAMPLE)]
        return round_create(
            title=title, questions=created, provenance=Provenance.HOST, check_status=CheckStatus.UNCHECKED
        )

    return make


@pytest.fixture
def make_room(make_round):
    from lobby.services import room_create

    def make(timer_seconds: int = 20, questions: list[QuestionData] | None = None):
        return room_create(round_id=make_round(questions).pk, timer_seconds=timer_seconds)

    return make


@pytest.fixture(autouse=True)
def _forget_cached_questions():
    """Test databases roll back and reuse ids: a round id must not bring another test's questions back."""
    from quiz import selectors

    with selectors._facts_lock:
        selectors._facts.clear()


@pytest.fixture(autouse=True)
def _closed_breakers():
    """The checker's circuit breakers live in the cache, which outlives a test: each test starts them closed."""
    from django.core.cache import caches
    from django.core.cache.backends.locmem import LocMemCache
    from django.core.cache.backends.redis import RedisCache

    from verifier.breaker import KEY_PREFIX

    cache = caches["default"]
    if isinstance(cache, LocMemCache):
        cache.clear()
    elif isinstance(cache, RedisCache):
        client = cache._cache.get_client(write=True)
        keys = list(client.scan_iter(match=f"*{KEY_PREFIX}:*"))
        if keys:
            client.delete(*keys)


@pytest.fixture
async def game_clock():
    """The server's ASGI lifespan, and with it the game clock, for a test that lets a question's deadline pass
    (Channels' communicators run no lifespan)."""
    async with server_lifespan():
        yield
