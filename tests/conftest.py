import asyncio
import io
import os
import sys
import uuid

import pytest
from channels.db import database_sync_to_async

from lobby.services import CreatedRoom
from lobby.tokens import host_token
from quiz.validation import QuestionData
from tests.factories import RoomFactory, RoundFactory
from tests.support import communicator
from tests.support.communicator import server_lifespan

# Server processes a test starts read their settings from the environment: each run of the suite counts its own
# rate limits in Redis, not the ones an earlier run on the same Redis left for the same address (127.0.0.1).
os.environ.setdefault("RATELIMIT_KEY_PREFIX", f"ratelimit-run-{uuid.uuid4().hex}")


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup):
    """pytest-django's own, and before it drops the test databases, the connections of the one thread that runs
    every async test's `sync_to_async` call are closed: whole runs ended with "database ... is being accessed by
    other users" (an idle session of that thread's, in this process) and left the databases behind."""
    yield
    from asgiref.sync import SyncToAsync
    from django.db import connections

    SyncToAsync.single_thread_executor.submit(connections.close_all).result(timeout=30)


# How long the tasks an async test left behind get to finish once cancelled, before its loop is closed.
LEFTOVER_TASK_SECONDS = 10


@pytest.fixture(name="_function_scoped_runner")
def _runner_whose_leftover_tasks_cannot_hang_the_run(_function_scoped_runner, request):
    """pytest-asyncio's loop for an async test, closed with a bound: closing a loop cancels the tasks left on it
    and waits for them without a limit, so one task that never finishes once cancelled (seen once in a whole run,
    not reproduced alone) hung the suite. Here they get LEFTOVER_TASK_SECONDS; one still pending after that is
    reported with its stack as a warning on the test, and let go, so the loop closes and the run goes on."""
    runner = _function_scoped_runner
    yield runner
    loop = runner.get_loop()
    if loop.is_closed():
        return
    tasks = [task for task in asyncio.all_tasks(loop) if not task.done()]
    if not tasks:
        return
    for task in tasks:
        task.cancel()
    _, pending = loop.run_until_complete(asyncio.wait(tasks, timeout=LEFTOVER_TASK_SECONDS))
    for task in pending:
        stack = io.StringIO()
        task.print_stack(file=stack)
        message = f"a task ignored its cancellation for {LEFTOVER_TASK_SECONDS} s at the test's end: {stack.getvalue()}"
        print(f"\n{request.node.nodeid}: {message}", file=sys.stderr)
        request.node.warn(pytest.PytestWarning(message))
        asyncio.tasks._unregister_task(task)  # noqa: SLF001 - the loop's close would wait for it forever


@pytest.fixture(scope="session", autouse=True)
def translations_compiled():
    """The .mo catalogues are build outputs (not committed): build them as `make run` does."""
    from quiz.management.commands.compile_translations import compile_catalogues

    compile_catalogues()


@pytest.fixture
def make_round():
    """A host round of `questions` (tests/factories.py SAMPLE by default)."""

    def make(questions: list[QuestionData] | None = None, title: str = "Test round"):
        return RoundFactory(title=title, **({"questions": questions} if questions else {}))

    return make


@pytest.fixture
def make_room(make_round):
    """A room in the lobby and its host's token, on a round of `questions`; its options in the round's order
    unless an `option_seed` shuffles them."""

    def make(
        timer_seconds: int = 20, questions: list[QuestionData] | None = None, option_seed: str = ""
    ) -> CreatedRoom:
        room = RoomFactory(round=make_round(questions), timer_seconds=timer_seconds, option_seed=option_seed)
        return CreatedRoom(room=room, host_token=host_token(room_code=room.code))

    return make


@pytest.fixture
def room(make_room):
    """`make_room` for async tests: `created = await room(timer_seconds=10)`."""

    async def make(**kwargs) -> CreatedRoom:
        return await database_sync_to_async(make_room)(**kwargs)

    return make


@pytest.fixture
async def sockets():
    """Opens WebSocket clients that the test does not close itself; closes them all when the test ends."""
    opened = communicator.Sockets()
    yield opened
    await opened.close()


@pytest.fixture
def host_socket(sockets):
    """The room's host connected: `host = await host_socket(created)` opens a socket on `created`'s room, sends
    its host token (or `token=`, a co-host's) and reads the first snapshot (`host.snapshot`), the lobby's unless
    other fields are expected (`phase="question"`). Closed when the test ends."""

    async def connect(
        created, *, token: str | None = None, kind=communicator.Client, **expected
    ) -> communicator.Client:
        return await sockets.host(created.room.code, token or created.host_token, kind=kind, **expected)

    return connect


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    """A test that leaves a communicator open fails: its consumer would run on into the next test's database.
    Checked as the test returns, while its event loop still runs (the `sockets` fixture closes its own later)."""
    communicator.forget_connected()
    try:
        result = yield
        left = communicator.left_open()
    finally:
        for comm in communicator.left_open():
            comm.future.cancel()
        communicator.forget_connected()
    if left:
        paths = ", ".join(comm.scope["path"] for comm in left)
        pytest.fail(f"{len(left)} WebSocket communicator(s) left open ({paths}): use `async with` or `sockets`")
    return result


@pytest.fixture(autouse=True)
def fresh_rate_limits(settings):
    """Per-IP counters live in the cache, which outlives a test (and, with Redis, a test run). A fresh key prefix
    per test starts them at zero without flushing a cache that other runs may share: every test's sockets come
    from one address, and 20 rooms joined in 10 minutes (RATELIMIT_ROOMS_PER_10_MINUTES) is a few tests' worth."""
    settings.RATELIMIT_KEY_PREFIX = f"ratelimit-test-{uuid.uuid4().hex}"


@pytest.fixture(autouse=True)
def _no_socket_spreading(settings):
    """Spreading sockets over processes (lobby/realtime/rebalance.py) registers each event loop in the shared Redis: a
    test loop would meet other tests' stale entries there and close its sockets (4012). Tests about it turn it on."""
    settings.REBALANCE_INTERVAL_SECONDS = 0


@pytest.fixture(autouse=True)
def _no_beats_past_the_test():
    """A test's event loops end with it, and so must their beats (core/processes.py): a server process of a later
    test would take them for dead processes and give their rooms' open questions time back."""
    yield
    from django.conf import settings

    if not settings.REDIS_URL:
        return
    import os

    import redis

    from core import processes

    processes.halt_threads()  # first: a beat thread would write its field back
    with redis.Redis.from_url(settings.REDIS_URL) as client:
        mine = [name for name in client.hkeys(processes.hash_key()) if processes.pid_of(name.decode()) == os.getpid()]
        if mine:
            client.hdel(processes.hash_key(), *mine)


@pytest.fixture(autouse=True)
def _forget_cached_questions():
    """Test databases roll back and reuse ids: a round id must not bring another test's questions back."""
    from quiz import selectors

    selectors.round_question_facts_forget_all()


@pytest.fixture(autouse=True)
def _closed_breakers():
    """The checker's circuit breakers live in the cache, which outlives a test: each test starts them closed."""
    import redis
    from django.conf import settings
    from django.core.cache import caches
    from django.core.cache.backends.locmem import LocMemCache
    from django.core.cache.backends.redis import RedisCache

    from verifier.breaker import KEY_PREFIX

    cache = caches["default"]
    if isinstance(cache, LocMemCache):
        cache.clear()
    elif isinstance(cache, RedisCache):
        # Only the breakers' keys: the cache's Redis may be shared with other runs. Django has no public
        # "delete by pattern", so this asks the same server directly.
        with redis.Redis.from_url(settings.CACHES["default"]["LOCATION"]) as client:
            keys = list(client.scan_iter(match=f"*{KEY_PREFIX}:*"))
            if keys:
                client.delete(*keys)


@pytest.fixture
async def game_clock():
    """The server's ASGI lifespan, and with it the game clock, for a test that lets a question's deadline pass
    (Channels' communicators run no lifespan)."""
    async with server_lifespan():
        yield
