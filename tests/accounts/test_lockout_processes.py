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


def _browser(server) -> tuple[httpx.Client, str]:
    browser = httpx.Client(base_url=f"http://127.0.0.1:{server.port}", timeout=60)
    page = browser.get("/accounts/sign-in/")
    return browser, re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)


def test_a_burst_of_parallel_guesses_at_two_processes_gets_no_more_checked_than_the_limit(servers, settings):
    """40 guesses sent at once, split over two processes: no more are compared with the password than the
    lockout allows, because the checks in flight count too (accounts.lockout.password_check_slot). They are
    counted in the cache: Redis, shared by the processes, with REDIS_URL; without it each process counts its
    own (`make run` is one process)."""
    from concurrent.futures import ThreadPoolExecutor

    from axes.models import AccessAttempt

    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.PBKDF2PasswordHasher"]
    HostUserFactory(username="mara", password=PASSWORD)
    first, second = servers("asgi-1"), servers("asgi-2")
    browsers = [_browser(first), _browser(second)]

    def guess(n: int) -> httpx.Response:
        browser, token = browsers[n % 2]
        data = {"csrfmiddlewaretoken": token, "username": "mara", "password": f"guess {n}"}
        return browser.post("/accounts/sign-in/", data=data)

    with ThreadPoolExecutor(max_workers=40) as pool:
        replies = list(pool.map(guess, range(40)))
    # A guess refused before its check is not recorded (AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT off): the
    # count is the guesses compared with the password.
    checked = sum(AccessAttempt.objects.filter(username="mara").values_list("failures_since_start", flat=True))
    refused = [reply for reply in replies if reply.status_code == 429]
    print(f"40 parallel guesses over 2 processes: {checked} checked, {len(refused)} answered 429")
    assert all(reply.status_code in (200, 429) for reply in replies) and len(refused) > 30
    assert all("locked here" in reply.text or "at once" in reply.text for reply in refused)
    assert 5 <= checked <= (5 if settings.REDIS_URL else 5 * 2)
    assert _sign_in(first, "mara", PASSWORD).status_code == 429
    for browser, _token in browsers:
        browser.close()
