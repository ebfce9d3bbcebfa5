"""The co-host link: a second host screen on another device, a way back for a host who lost the cookie, and a
readable page for a browser that is not the host."""

import html
import re
import uuid

import pytest
from channels.db import database_sync_to_async
from django.core import signing
from django.test import Client as HttpClient

from lobby import services
from lobby.tokens import COHOST_SALT, cohost_key, host_token
from tests.factories import RoomFactory
from tests.support.communicator import Client

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def fresh_rate_limits(settings):
    settings.RATELIMIT_KEY_PREFIX = f"ratelimit-test-{uuid.uuid4().hex}"


def _host_browser(code: str, token: str) -> HttpClient:
    browser = HttpClient()
    session = browser.session
    session["host_tokens"] = {code: token}
    session.save()
    return browser


def _cohost_link(host: HttpClient, code: str) -> str:
    """The link as the host's co-host page shows it (a path and its query)."""
    page = host.get(f"/host/{code}/cohost/")
    assert page.status_code == 200 and page["Cache-Control"] == "no-store"
    url = html.unescape(
        re.search(r'id="cohost-url" type="text" readonly size="60" value="([^"]+)"', page.content.decode())[1]
    )
    assert url.startswith(f"http://testserver/host/{code}/?key=")
    return url.removeprefix("http://testserver")


def _page_token(page) -> str:
    return html.unescape(re.search(r'data-token="([^"]+)"', page.content.decode())[1])


def _denied(response, code: str) -> str:
    """A browser without the host's role: a 403 a person can read, that says how to get back in."""
    assert response.status_code == 403 and response["Content-Type"] == "text/html; charset=utf-8"
    text = response.content.decode()
    assert f"This browser is not hosting game {code}" in text and "ask the host for the co-host link" in text
    assert f'href="/play/{code}/"' in text  # and where a player goes instead
    return text


def test_a_browser_without_the_cookie_gets_a_readable_page_on_the_host_screen_and_the_results():
    room = RoomFactory()
    stranger = HttpClient()
    for url in (f"/host/{room.code}/", f"/host/{room.code}/results.csv", f"/host/{room.code}/cohost/"):
        _denied(stranger.get(url), room.code)
    _denied(stranger.post(f"/host/{room.code}/cohost/replace/"), room.code)


def test_the_cohost_link_makes_another_browser_a_host_of_the_room():
    room = RoomFactory()
    host = _host_browser(room.code, host_token(room_code=room.code))
    link = _cohost_link(host, room.code)
    assert "key=" not in host.get(f"/host/{room.code}/").content.decode()  # the projected screen links to it only

    other = HttpClient()
    opened = other.get(link)
    # The key leaves the address bar at once; the browser now hosts, results included.
    assert opened.status_code == 302 and opened["Location"] == f"/host/{room.code}/"
    page = other.get(f"/host/{room.code}/")
    assert page.status_code == 200 and f'data-code="{room.code}"' in page.content.decode()
    assert services.host_resume(token=_page_token(page), code=room.code) == room
    assert other.get(f"/host/{room.code}/results.csv").status_code == 200
    # The link works for more than one browser ("run by two", or three).
    assert HttpClient().get(link).status_code == 302


@pytest.mark.parametrize(
    "key",
    [
        "",
        "not-a-key",
        "forged",  # the room's own payload signed with another secret
        "host-token",  # a host token is not a co-host key (another salt)
        "other-room",  # a real key of another room
        "truncated",
        "old-generation",
    ],
)
def test_a_forged_or_foreign_key_is_refused_with_the_readable_page(key):
    room, other_room = RoomFactory(), RoomFactory()
    keys = {
        "forged": signing.dumps({"room": room.code, "gen": 0}, key="not-the-secret", salt=COHOST_SALT),
        "host-token": host_token(room_code=room.code),
        "other-room": cohost_key(room_code=other_room.code, generation=0),
        "truncated": cohost_key(room_code=room.code, generation=0)[:-3],
        "old-generation": cohost_key(room_code=room.code, generation=5),
    }
    browser = HttpClient()
    text = _denied(browser.get(f"/host/{room.code}/", {"key": keys.get(key, key)}), room.code)
    assert "co-host link" in text and ("not valid" in text or "replaced" in text)
    _denied(browser.get(f"/host/{room.code}/"), room.code)  # and the browser gained nothing


def test_replacing_the_link_shuts_out_the_old_link_and_its_browsers_but_not_the_creator():
    room = RoomFactory()
    creator = _host_browser(room.code, host_token(room_code=room.code))
    old_link = _cohost_link(creator, room.code)
    cohost, late = HttpClient(), HttpClient()
    cohost.get(old_link)
    assert cohost.get(f"/host/{room.code}/").status_code == 200

    replaced = creator.post(f"/host/{room.code}/cohost/replace/", follow=True)
    assert "the old one no longer works" in replaced.content.decode()
    assert "replaced by a newer one" in _denied(late.get(old_link), room.code)
    _denied(cohost.get(f"/host/{room.code}/"), room.code)
    assert creator.get(f"/host/{room.code}/").status_code == 200
    new_link = _cohost_link(creator, room.code)
    assert new_link != old_link and late.get(new_link).status_code == 302

    # A co-host who replaces the link keeps hosting; the browsers of the link before are out.
    late.post(f"/host/{room.code}/cohost/replace/")
    assert late.get(f"/host/{room.code}/").status_code == 200
    assert creator.get(f"/host/{room.code}/").status_code == 200


async def test_two_host_sockets_both_move_the_game_and_a_replaced_link_closes_the_cohosts(room, sockets, host_socket):
    created = await room()
    code = created.room.code
    key = cohost_key(room_code=code, generation=0)
    cohost_token = await database_sync_to_async(services.cohost_join)(key=key, code=code)
    first = await host_socket(created)
    second = await host_socket(created, token=cohost_token)
    # The co-host link's key is not a host token: it hosts nothing on its own.
    async with Client(code) as keyed:
        await keyed.send(type="host", token=key)
        assert (await keyed.error())["code"] == "bad_token"

    player, _ = await sockets.join(code, "Ann")
    await second.send(type="start")
    await first.state(phase="question")
    await first.send(type="close")
    await second.state(phase="reveal")
    await second.send(type="next", phase="reveal", index=0)
    await first.state(phase="leaderboard")

    await database_sync_to_async(services.cohost_link_replace)(room_id=created.room.pk, token=created.host_token)
    refused = await second.until(lambda m: m["type"] in ("error", "closed"))
    assert refused["code"] == "bad_token" and "replaced the co-host link" in refused["message"]
    assert (await second.until(lambda m: m["type"] == "closed"))["type"] == "closed"
    async with Client(code) as again:
        await again.send(type="host", token=cohost_token)
        assert (await again.error())["code"] == "bad_token"
    await first.send(type="next", phase="leaderboard", index=0)  # the creator still hosts
    await first.state(phase="question", question_index=1)
    await player.state(phase="question", question_index=1)
