"""The server's event loop, as sync code in the server's threads finds it: recorded by the ASGI lifespan."""

import asyncio
import os
import threading

import pytest
from asgiref.sync import sync_to_async

from core.server_loop import server_loop
from tests.support.communicator import server_lifespan

pytestmark = pytest.mark.django_db(transaction=True)


def _from_a_plain_thread():
    """What a thread the server did not start through sync_to_async sees (a thread pool of its own)."""
    seen = []
    thread = threading.Thread(target=lambda: seen.append(server_loop()))
    thread.start()
    thread.join(5)
    return seen[0]


def test_outside_a_server_there_is_no_server_loop():
    assert server_loop() is None
    assert _from_a_plain_thread() is None


async def test_while_the_lifespan_runs_every_thread_of_the_process_finds_its_loop_and_after_it_none():
    loop = asyncio.get_running_loop()
    async with server_lifespan():
        assert await asyncio.to_thread(_from_a_plain_thread) is loop
        assert server_loop() is loop
        async with server_lifespan():  # a second lifespan in the process leaves the first one's record
            pass
        assert await asyncio.to_thread(_from_a_plain_thread) is loop
    assert await asyncio.to_thread(_from_a_plain_thread) is None


async def test_a_forked_child_does_not_take_its_parents_loop_for_its_own():
    async with server_lifespan():
        pid = os.fork()
        if pid == 0:  # the child: the loop it inherited does not run in it
            os._exit(0 if server_loop() is None else 1)
        _, status = await asyncio.to_thread(os.waitpid, pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


async def test_without_a_lifespan_the_threads_of_sync_to_async_still_find_the_loop():
    """The documented fallback, for servers that run no lifespan (Channels' test communicators, daphne)."""
    loop = asyncio.get_running_loop()
    assert await sync_to_async(server_loop, thread_sensitive=False)() is loop
    assert await asyncio.to_thread(_from_a_plain_thread) is None  # only those threads
