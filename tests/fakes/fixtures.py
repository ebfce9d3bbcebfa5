"""Pytest fixtures for the fakes. Use with `from tests.fakes.fixtures import *` in a conftest."""

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes.model_server import ModelServer

__all__ = ["fault_server", "model_server"]

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def model_server() -> Iterator[ModelServer]:
    """A scripted model API on 127.0.0.1 (free port). A request that breaks the published schema fails the test."""
    server = ModelServer().start()
    try:
        yield server
    finally:
        server.stop()
    assert not server.schema_errors, "requests broke the published schema:\n" + "\n".join(server.schema_errors)


@pytest.fixture(scope="module")
def fault_server() -> Iterator[str]:
    """The base URL of `tests.fakes.process`: every hostile reply, served from another process."""
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.fakes.process"], cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    assert process.stdin is not None and process.stdout is not None
    try:
        port = int(process.stdout.readline() or 0)
        assert port, "the fault server did not start"
        yield f"http://127.0.0.1:{port}"
    finally:
        process.stdin.close()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
