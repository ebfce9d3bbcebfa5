"""Pytest fixtures for the fakes. Use with `from tests.fakes.fixtures import *` in a conftest."""

from collections.abc import Iterator

import pytest

from tests.fakes.model_server import ModelServer

__all__ = ["model_server"]


@pytest.fixture
def model_server() -> Iterator[ModelServer]:
    """A scripted model API on 127.0.0.1 (free port). A request that breaks the published schema fails the test."""
    server = ModelServer().start()
    try:
        yield server
    finally:
        server.stop()
    assert not server.schema_errors, "requests broke the published schema:\n" + "\n".join(server.schema_errors)
