"""The guard on WebSocket communicators (tests/conftest.py): a test that leaves one open fails, and one opened
through the `sockets` fixture is closed even when its test fails. Run as a separate pytest, since a guarded
failure is the point."""

import os
from pathlib import Path

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[2]

INNER = """
from tests.support.communicator import Communicator

DISCONNECTED = []


async def app(scope, receive, send):
    await receive()
    await send({"type": "websocket.accept"})
    while (await receive())["type"] != "websocket.disconnect":
        pass
    DISCONNECTED.append(scope["path"])


async def test_leaves_one_open():
    comm = Communicator(app, "/ws/left-open/")
    assert (await comm.connect())[0]


async def test_closes_its_own():
    comm = Communicator(app, "/ws/closed/")
    assert (await comm.connect())[0]
    await comm.disconnect()


async def test_fails_holding_a_socket_of_the_fixture(sockets):
    comm = sockets.communicator(app, "/ws/fixture/")
    assert (await comm.connect())[0]
    assert False, "the test's own failure"


def test_the_fixture_closed_it():
    assert DISCONNECTED == ["/ws/closed/", "/ws/fixture/"]
"""


def test_a_communicator_left_open_fails_its_test_and_the_fixture_closes_its_own(pytester, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    pytester.makeini("[pytest]\nasyncio_mode = auto\nasyncio_default_fixture_loop_scope = function\n")
    pytester.makeconftest("from tests.conftest import pytest_runtest_call, sockets  # noqa: F401")
    pytester.makepyfile(test_inner=INNER)
    result = pytester.runpytest_subprocess("--ds=config.test_settings", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2, failed=2)
    result.stdout.fnmatch_lines(
        [
            "*_ test_leaves_one_open _*",
            "E * 1 WebSocket communicator(s) left open (/ws/left-open/)*",
            "*_ test_fails_holding_a_socket_of_the_fixture _*",
            "E * AssertionError: the test's own failure",
        ]
    )
    assert "/ws/fixture/): use" not in result.stdout.str()  # the fixture's socket is not the guard's business
