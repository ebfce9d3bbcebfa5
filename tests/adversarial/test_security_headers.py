"""Every page says what the browser may load: a Content-Security-Policy without inline script, no framing,
and a Referrer-Policy. The admin alone may add inline <style>."""

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db


def policy(response) -> dict[str, list[str]]:
    directives = [part.strip().split() for part in response["Content-Security-Policy"].split(";") if part.strip()]
    return {name: values for name, *values in directives}


APP_POLICY = {
    "default-src": ["'self'"],
    "script-src": ["'self'"],
    "style-src": ["'self'"],
    "img-src": ["'self'"],
    "connect-src": ["'self'"],
    "object-src": ["'none'"],
    "base-uri": ["'none'"],
    "form-action": ["'self'"],
    "frame-ancestors": ["'none'"],
}


def assert_app_headers(response) -> None:
    assert response.status_code == 200
    assert policy(response) == APP_POLICY
    assert response["Referrer-Policy"] == "same-origin"
    assert response["X-Frame-Options"] == "DENY"
    assert response["X-Content-Type-Options"] == "nosniff"


def test_the_home_page_generate_page_and_a_player_page_send_the_policy(make_room):
    browser = Client()
    assert_app_headers(browser.get("/"))
    assert_app_headers(browser.get("/rounds/generate/"))
    assert_app_headers(browser.get(f"/play/{make_room().room.code}/"))


def test_a_host_page_sends_the_policy(make_room):
    created = make_room()
    browser = Client()
    session = browser.session
    session["host_tokens"] = {created.room.code: created.host_token}
    session.save()
    response = browser.get(f"/host/{created.room.code}/")
    assert_app_headers(response)
    assert "<svg" in response.content.decode()  # the QR code is inline markup: no image source to allow


def test_the_admin_may_add_inline_style_but_never_inline_script(admin_client):
    for url in ["/admin/", "/admin/review/reviewitem/", "/admin/lobby/room/", "/admin/login/"]:
        response = admin_client.get(url, follow=True)
        assert response.status_code == 200, url
        directives = policy(response)
        assert directives["style-src"] == ["'self'", "'unsafe-inline'"], url
        assert directives["script-src"] == ["'self'"] and directives["frame-ancestors"] == ["'none'"], url
        assert response["Referrer-Policy"] == "same-origin"
