"""A lockout is kept where every server process sees it: wrong passwords sent to one process lock the account
on another, and a restarted process still knows. Real uvicorn processes (config/serve.py) on the test's database
(PostgreSQL with DATABASE_URL) and Redis (with REDIS_URL), as `make serve` runs them."""

import re

import httpx
import pytest

from tests.factories import HostUserFactory
from tests.support.servers import start_asgi

pytestmark = pytest.mark.django_db(transaction=True)

PASSWORD = "correct horse battery"


@pytest.fixture
def servers(tmp_path):
    started = []

    def start(name: str):
        server = start_asgi(name, log_path=tmp_path / f"{name}.log")
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


def _sign_in(server, username: str, password: str) -> httpx.Response:
    """What a browser does: open the sign-in page (its CSRF cookie and token), post the form."""
    with httpx.Client(base_url=f"http://127.0.0.1:{server.port}", timeout=30) as browser:
        page = browser.get("/accounts/sign-in/")
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)
        return browser.post(
            "/accounts/sign-in/", data={"csrfmiddlewaretoken": token, "username": username, "password": password}
        )


def test_wrong_passwords_on_one_process_lock_the_account_on_another_and_after_a_restart(servers, settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.PBKDF2PasswordHasher"]  # what the servers check
    HostUserFactory(username="mara", password=PASSWORD)
    HostUserFactory(username="teacher", password=PASSWORD)
    first, second = servers("asgi-1"), servers("asgi-2")
    codes = [_sign_in(first, "mara", f"guess {n}").status_code for n in range(5)]
    assert codes == [200, 200, 200, 200, 429]

    refused = _sign_in(second, "mara", PASSWORD)  # the right password, at the other process
    assert refused.status_code == 429 and "locked here for 15 more minutes" in refused.text
    assert int(refused.headers["Retry-After"]) > 14 * 60
    assert _sign_in(second, "teacher", PASSWORD).status_code == 302  # the same address, another account

    first.stop()
    restarted = servers("asgi-1-restarted")
    assert _sign_in(restarted, "mara", PASSWORD).status_code == 429
