"""The web side: CSRF on every POST, a staff-only admin, a production configuration that passes
`check --deploy`, secure cookies and HSTS behind TLS, and no secret in the logs."""

import json
import logging
import os
import re
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client as HttpClient
from django.test import override_settings
from django.urls import URLPattern, URLResolver, get_resolver
from django.urls.resolvers import RoutePattern

from .helpers import Client, joined_client

pytestmark = pytest.mark.django_db(transaction=True)
BASE_DIR = Path(__file__).resolve().parents[2]
SAMPLE_ARGS = {"int": "1", "str": "AAAAAA", "path": "1", "slug": "a", "uuid": "00000000-0000-0000-0000-000000000000"}


def _routes(patterns, prefix=""):
    for pattern in patterns:
        if not isinstance(pattern.pattern, RoutePattern):
            continue  # a regex route (the admin's app index): covered by the explicit list below
        route = prefix + str(pattern.pattern)
        if isinstance(pattern, URLResolver):
            yield from _routes(pattern.url_patterns, route)
        elif isinstance(pattern, URLPattern):
            yield "/" + re.sub(r"<(\w+):\w+>", lambda m: SAMPLE_ARGS[m.group(1)], route)


ALL_URLS = sorted(set(_routes(get_resolver().url_patterns)) | {"/admin/lobby/", "/admin/auth/"})


def test_every_url_refuses_a_post_without_a_csrf_token(admin_user):
    """Every route of the project, forms or not, logged in as a superuser so no view is skipped for lack of rights:
    a POST without the token is refused before any view runs. A csrf_exempt view would fail here."""
    browser = HttpClient(enforce_csrf_checks=True)
    browser.force_login(admin_user)
    assert len(ALL_URLS) > 40  # the app's pages and the admin's
    refused = {url: browser.post(url, {"title": "x"}).status_code for url in ALL_URLS}
    assert {url: status for url, status in refused.items() if status != 403} == {}


def test_the_forms_work_with_their_token(make_round):
    browser = HttpClient(enforce_csrf_checks=True)
    page = browser.get("/rounds/new/")
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.content.decode()).group(1)
    response = browser.post("/rounds/new/", {"csrfmiddlewaretoken": token, "title": "Mine"})
    assert response.status_code != 403
    assert browser.post("/rounds/new/", {"csrfmiddlewaretoken": "forged" * 8, "title": "x"}).status_code == 403


def test_the_admin_is_for_staff_only():
    anonymous = HttpClient()
    for url in ["/admin/", "/admin/lobby/player/", "/admin/lobby/report/", "/admin/auth/user/"]:
        response = anonymous.get(url)
        assert response.status_code == 302 and response["Location"].startswith("/admin/login/"), url
    user_model = get_user_model()
    player = user_model.objects.create_user("someone", password="a-long-password-1")
    member = HttpClient()
    member.force_login(player)
    for url in ["/admin/", "/admin/lobby/player/"]:
        response = member.get(url)
        assert response.status_code == 302 and response["Location"].startswith("/admin/login/"), url
    login = member.post("/admin/login/", {"username": "someone", "password": "a-long-password-1"})
    assert login.status_code == 200 and b"not authorized" in login.content  # non-staff cannot log in
    staff = user_model.objects.create_user("helper", password="a-long-password-2", is_staff=True)
    helper = HttpClient()
    helper.force_login(staff)
    assert helper.get("/admin/lobby/player/").status_code == 403  # staff, but no permission on players


def _production_env(**extra: str) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", ""),
        "HOME": os.environ.get("HOME", ""),
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DJANGO_READ_DOT_ENV_FILE": "0",
        "DJANGO_DEBUG": "0",
        "DJANGO_SECRET_KEY": secrets.token_urlsafe(50),
        "DJANGO_ALLOWED_HOSTS": "quiz.example.com",
        "DJANGO_SECURE_SSL_REDIRECT": "1",
        **extra,
    }


def test_check_deploy_is_clean_with_production_settings():
    """The real settings module, configured by environment as in production (not the test settings)."""
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=BASE_DIR,
        env=_production_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    names = [
        "DEBUG",
        "SESSION_COOKIE_SECURE",
        "CSRF_COOKIE_SECURE",
        "SESSION_COOKIE_HTTPONLY",
        "SECURE_HSTS_SECONDS",
        "SECURE_HSTS_INCLUDE_SUBDOMAINS",
        "SECURE_SSL_REDIRECT",
        "X_FRAME_OPTIONS",
    ]
    probe = (
        "import django, json; django.setup(); from django.conf import settings as s; "
        f"print(json.dumps({{k: getattr(s, k) for k in {names!r}}}))"
    )
    values = subprocess.run(
        [sys.executable, "-c", probe], cwd=BASE_DIR, env=_production_env(), capture_output=True, text=True, timeout=60
    )
    assert json.loads(values.stdout) == {
        "DEBUG": False,
        "SESSION_COOKIE_SECURE": True,
        "CSRF_COOKIE_SECURE": True,
        "SESSION_COOKIE_HTTPONLY": True,
        "SECURE_HSTS_SECONDS": 31536000,
        "SECURE_HSTS_INCLUDE_SUBDOMAINS": True,
        "SECURE_SSL_REDIRECT": True,
        "X_FRAME_OPTIONS": "DENY",
    }


def test_production_refuses_to_start_without_a_secret_key():
    result = subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=BASE_DIR,
        env=_production_env(DJANGO_SECRET_KEY=""),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode != 0 and "DJANGO_SECRET_KEY is required" in result.stderr


PRODUCTION_LIKE = {
    "DEBUG": False,
    "SECRET_KEY": "x" * 20 + secrets.token_urlsafe(40),
    "SESSION_COOKIE_SECURE": True,
    "CSRF_COOKIE_SECURE": True,
    "SECURE_SSL_REDIRECT": True,
    "SECURE_HSTS_SECONDS": 31536000,
    "SECURE_HSTS_INCLUDE_SUBDOMAINS": True,
    "SECURE_HSTS_PRELOAD": True,
}


def test_check_deploy_in_process_with_production_like_overrides():
    with override_settings(**PRODUCTION_LIKE):
        call_command("check", deploy=True, fail_level="WARNING")


@override_settings(**PRODUCTION_LIKE)
def test_behind_tls_hsts_is_sent_plain_http_is_redirected_and_cookies_are_secure(admin_user):
    browser = HttpClient()
    plain = browser.get("/")
    assert plain.status_code == 301 and plain["Location"].startswith("https://")
    # The proxy terminates TLS and says so in X-Forwarded-Proto (SECURE_PROXY_SSL_HEADER).
    https = browser.get("/", headers={"x-forwarded-proto": "https"})
    assert https.status_code == 200
    assert https["Strict-Transport-Security"] == "max-age=31536000; includeSubDomains; preload"
    assert https["X-Frame-Options"] == "DENY" and https["X-Content-Type-Options"] == "nosniff"
    csrf_cookie = https.cookies["csrftoken"]
    assert csrf_cookie["secure"]
    login_page = browser.get("/admin/login/", headers={"x-forwarded-proto": "https"})
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', login_page.content.decode()).group(1)
    logged_in = browser.post(
        "/admin/login/",
        {"csrfmiddlewaretoken": token, "username": admin_user.username, "password": "password"},
        headers={"x-forwarded-proto": "https", "referer": "https://testserver/admin/login/"},
    )
    assert logged_in.status_code == 302
    session_cookie = logged_in.cookies["sessionid"]
    assert session_cookie["secure"] and session_cookie["httponly"] and session_cookie["samesite"] == "Lax"


async def test_no_token_or_secret_key_in_the_logs_of_a_whole_join_resume_host_flow(
    room, caplog, settings, sockets, host_socket
):
    caplog.set_level(logging.DEBUG)
    settings.WS_RATE_BURST = 3
    settings.WS_RATE_FLOOD = 2
    created = await room()
    code = created.room.code
    host = await host_socket(created)
    player, joined = await joined_client(sockets, code, "Ann")
    async with Client(code) as again:
        await again.send(type="resume", token=joined["token"])
        await again.until(lambda m: m["type"] == "joined")
        for _ in range(8):  # a flood, so the warning path logs too
            await again.send(type="resume", token=joined["token"])
        await again.until(lambda m: m["type"] == "closed")
    async with Client(code) as forger:
        await forger.send(type="host", token=created.host_token + "x")
        await forger.error()
    await player.__aexit__()
    await host.__aexit__()
    assert "closing a flooding connection" in caplog.text  # the capture did see the consumer's logs
    secrets_seen = [created.host_token, joined["token"], settings.SECRET_KEY]
    for secret in secrets_seen:
        assert secret not in caplog.text
        # a signed token's signature part alone must not show either
        assert secret.rsplit(":", 1)[-1] not in caplog.text
