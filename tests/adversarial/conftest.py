import pytest

from tests.browser.conftest import browser, live_url  # noqa: F401

from .fuzzing import FIGURES
from .helpers import Client


@pytest.fixture
def host_socket(sockets):
    """The suite's `host_socket` (tests/conftest.py) with this folder's Client: its own address, raw frames."""

    async def connect(created, *, token: str | None = None, **expected) -> Client:
        return await sockets.host(created.room.code, token or created.host_token, kind=Client, **expected)

    return connect


def pytest_terminal_summary(terminalreporter):
    if not FIGURES:
        return
    terminalreporter.section("WebSocket fuzz figures")
    total_cases = sum(f["cases"] for f in FIGURES.values())
    for kind, figures in sorted(FIGURES.items()):
        terminalreporter.write_line(
            f"{kind:>10}: {figures['cases']:4d} cases, {len(figures['distinct']):4d} distinct inputs, "
            f"replies: {dict(sorted(figures['replies'].items()))}"
        )
    terminalreporter.write_line(f"{'total':>10}: {total_cases:4d} cases")
