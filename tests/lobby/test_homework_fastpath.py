"""Homework's opening and answering are answered in front of Django's request stack (config/homework_fastpath.py):
the same checks and the same replies as the endpoints in Django. Exercised through the whole ASGI app
(config/asgi.py) in this process, against PostgreSQL; the handlers run on the homework threads, so the database
is committed (transaction=True)."""

import json
import re
from datetime import timedelta

import httpx
import pytest
from django.utils import timezone

from config.homework_fastpath import HomeworkFastPath
from lobby.homework import services as homework
from lobby.homework.views import MAX_BODY
from lobby.models import Answer, HomeworkProgress, Player

pytestmark = pytest.mark.django_db(transaction=True)


class Django:
    """Django's app as config/asgi.py puts it behind the fast path, noting the paths that reach it."""

    def __init__(self) -> None:
        from config.asgi import RequestBodyCap, django_asgi_app

        self.app, self.seen = RequestBodyCap(django_asgi_app), []

    async def __call__(self, scope, receive, send):
        self.seen.append(scope["path"].rsplit("/", 1)[-1])
        return await self.app(scope, receive, send)


# The headers Django's stack sets on a homework reply, which the fast path must set the same.
DJANGOS_HEADERS = (
    "content-type",
    "x-frame-options",
    "content-security-policy",
    "x-content-type-options",
    "referrer-policy",
    "cross-origin-opener-policy",
    "content-language",
    "vary",
)


@pytest.fixture
def django_app():
    return Django()


@pytest.fixture
def app(django_app):
    return HomeworkFastPath(django_app)


def _assignment(make_round) -> str:
    created = homework.assignment_create(
        round_id=make_round().pk, deadline=timezone.now() + timedelta(days=1), reveal="each", timer_seconds=120
    )
    return created.room.code


@pytest.fixture
def code(make_round):
    return _assignment(make_round)


@pytest.fixture
def other_code(make_round):
    return _assignment(make_round)


async def _joined(http: httpx.AsyncClient, code: str, nickname: str = "Ann") -> tuple[dict, str]:
    (await http.get(f"/hw/{code}/")).raise_for_status()
    headers = {"X-CSRFToken": http.cookies["csrftoken"]}
    joined = await http.post(f"/hw/{code}/api/join", json={"nickname": nickname}, headers=headers)
    assert joined.status_code == 200, joined.text
    return headers, joined.json()["token"]


def _client(app, **headers) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://testserver", headers=headers)


async def test_a_player_opens_and_answers_every_question_and_each_answer_is_stored(app, django_app, code):
    async with _client(app) as http:
        headers, token = await _joined(http, code)
        for index in range(3):
            opened = await http.post(f"/hw/{code}/api/start", json={"token": token, "question": index}, headers=headers)
            assert opened.status_code == 200, opened.text
            assert opened.json()["index"] == index and "correct" not in opened.text
            assert opened.headers["cache-control"] == "no-store"
            # Reopening it (a reload) keeps its clock: the same question, no new one.
            again = await http.post(f"/hw/{code}/api/start", json={"token": token, "question": index}, headers=headers)
            assert again.json()["index"] == index and again.json()["window_ms"] == opened.json()["window_ms"]
            answered = await http.post(
                f"/hw/{code}/api/answer", json={"token": token, "question": index, "option": 0}, headers=headers
            )
            assert answered.status_code == 200, answered.text
            assert answered.json()["next"] == index + 1 and "verdict" in answered.json()
            # The same answer again is refused, and changes nothing.
            twice = await http.post(
                f"/hw/{code}/api/answer", json={"token": token, "question": index, "option": 1}, headers=headers
            )
            assert twice.status_code == 400 and twice.json()["code"] == "already_answered"
        state = await http.post(f"/hw/{code}/api/state", json={"token": token}, headers=headers)
    assert django_app.seen == []  # the page too: Django's stack, run on a homework thread
    player = await Player.objects.aget(room__code=code, nickname="Ann")
    stored = [a async for a in Answer.objects.filter(player=player).order_by("question_index")]
    assert [answer.question_index for answer in stored] == [0, 1, 2]  # one each, the second try refused
    assert sum(answer.points for answer in stored) == player.score
    assert state.json()["finished"] is True and state.json()["score"] == player.score
    progress = await HomeworkProgress.objects.aget(player=player)
    assert progress.finished_at is not None and progress.opened_at is None


async def test_its_replies_carry_the_headers_djangos_do(app, code):
    async with _client(app, **{"Accept-Language": "de"}) as http:
        headers, token = await _joined(http, code)
        opened = await http.post(f"/hw/{code}/api/start", json={"token": token, "question": 0}, headers=headers)
        state = await http.post(f"/hw/{code}/api/state", json={"token": token}, headers=headers)  # Django's
    assert opened.status_code == 200
    for name in (*DJANGOS_HEADERS, "cache-control"):
        assert opened.headers.get(name) == state.headers.get(name), name
    assert opened.headers["content-language"] == "de"
    assert int(opened.headers["content-length"]) == len(opened.content)


@pytest.mark.parametrize("language", ["en", "de", "es"])
async def test_the_page_is_djangos_own_page_with_its_headers_and_cookie_in_the_players_language(
    app, django_app, code, language
):
    """The page goes through Django's whole stack on a homework thread: the same page, headers and CSRF cookie
    as from Django's ASGI handler, in the browser's language; an unknown code gets the same 404 page."""
    async with (
        _client(app, **{"Accept-Language": language}) as fast,
        _client(django_app, **{"Accept-Language": language}) as slow,
    ):
        served, django = await fast.get(f"/hw/{code}/"), await slow.get(f"/hw/{code}/")
        missing, django_missing = await fast.get("/hw/NOSUCH/"), await slow.get("/hw/NOSUCH/")
        assert "csrftoken" in fast.cookies and "csrftoken" in slow.cookies
    assert django_app.seen == ["", ""]  # only the direct requests reached Django's handler
    assert served.status_code == django.status_code == 200
    assert missing.status_code == django_missing.status_code == 404
    # The same page but for the CSRF token, which Django masks afresh on every request.
    unmasked = re.compile(r'(name="csrfmiddlewaretoken" value=")[^"]+"')
    assert unmasked.sub(r'\1T"', served.text) == unmasked.sub(r'\1T"', django.text)
    assert unmasked.sub(r'\1T"', missing.text) == unmasked.sub(r'\1T"', django_missing.text)
    assert f'lang="{language}"' in served.text and code in served.text
    for name in (*DJANGOS_HEADERS, "content-length"):
        assert served.headers.get(name) == django.headers.get(name), name
    assert served.headers["content-language"] == language


async def test_a_post_without_the_csrf_token_or_with_a_wrong_one_or_from_another_site_is_refused(app, django_app, code):
    async with _client(app) as http:
        headers, token = await _joined(http, code)
        body = {"token": token, "question": 0}
        missing = await http.post(f"/hw/{code}/api/start", json=body)
        wrong = await http.post(f"/hw/{code}/api/start", json=body, headers={"X-CSRFToken": "x" * 32})
        foreign = await http.post(
            f"/hw/{code}/api/start", json=body, headers={**headers, "Origin": "https://elsewhere.example"}
        )
        answer = await http.post(f"/hw/{code}/api/answer", json={**body, "option": 0})
        join = await http.post(f"/hw/{code}/api/join", json={"nickname": "Eve"})
    for refused in (missing, wrong, foreign, answer, join):
        assert refused.status_code == 403
        assert "CSRF" in refused.text  # Django's own refusal page
    assert django_app.seen == [
        "start",
        "start",
        "start",
        "answer",
        "join",
    ]  # each handed to Django (the page is served in front)
    player = await Player.objects.aget(room__code=code)
    assert (await HomeworkProgress.objects.aget(player=player)).opened_at is None  # nothing was opened
    assert not await Player.objects.filter(nickname="Eve").aexists()


async def test_bad_json_a_body_not_an_object_and_a_body_too_large_get_a_clear_error(app, code):
    async with _client(app) as http:
        headers, token = await _joined(http, code)
        headers = {**headers, "Content-Type": "application/json"}
        url = f"/hw/{code}/api/answer"
        unreadable = await http.post(url, content=b"{not json", headers=headers)
        a_list = await http.post(url, content=b"[1, 2]", headers=headers)
        not_utf8 = await http.post(url, content=b'{"token": "\xff"}', headers=headers)
        large = await http.post(url, content=json.dumps({"token": token, "pad": "x" * MAX_BODY}), headers=headers)
    for reply in (unreadable, a_list, not_utf8):
        assert reply.status_code == 400
        assert reply.json()["error"] == "That request could not be read."
    assert large.status_code == 400 and large.json()["error"] == "That request is too large."


async def test_a_token_that_names_no_player_here_is_refused_with_403(app, code, other_code):
    async with _client(app) as http:
        headers, token = await _joined(http, code)
        _other_headers, other_token = await _joined(http, other_code, nickname="Ben")
        forged = await http.post(f"/hw/{code}/api/start", json={"token": token + "x", "question": 0}, headers=headers)
        elsewhere = await http.post(
            f"/hw/{code}/api/answer", json={"token": other_token, "question": 0, "option": 0}, headers=headers
        )
        none = await http.post(f"/hw/{code}/api/start", json={"question": 0}, headers=headers)
    for reply in (forged, elsewhere, none):
        assert reply.status_code == 403 and reply.json()["code"] == "bad_token"


async def test_a_refusal_speaks_the_players_language_and_game_errors_are_400(app, code):
    async with _client(app, **{"Accept-Language": "es"}) as http:
        headers, token = await _joined(http, code)
        not_open = await http.post(
            f"/hw/{code}/api/answer", json={"token": token, "question": 0, "option": 0}, headers=headers
        )
        not_next = await http.post(f"/hw/{code}/api/start", json={"token": token, "question": 2}, headers=headers)
        flag = await http.post(f"/hw/{code}/api/start", json={"token": token, "question": True}, headers=headers)
    async with _client(app, **{"Accept-Language": "de"}) as http:
        headers_de, token_de = await _joined(http, code, nickname="Grete")
        not_open_de = await http.post(
            f"/hw/{code}/api/answer", json={"token": token_de, "question": 0, "option": 0}, headers=headers_de
        )
    for reply in (not_open, not_next, flag, not_open_de):
        assert reply.status_code == 400, reply.text
    assert not_open.headers["content-language"] == "es"
    assert not_open.json()["error"] == "Esa pregunta no está abierta."
    assert not_open_de.json()["error"] == "Diese Frage ist nicht offen."
    assert not_next.json()["code"] == "not_now"


async def test_a_removed_player_can_no_longer_answer(app, code):
    async with _client(app) as http:
        headers, token = await _joined(http, code)
        await Player.objects.filter(room__code=code).aupdate(removed=True)
        refused = await http.post(f"/hw/{code}/api/start", json={"token": token, "question": 0}, headers=headers)
    assert refused.status_code == 400 and refused.json()["code"] == "removed"


async def test_an_unexpected_failure_gets_djangos_server_error_page_and_is_logged(app, code, monkeypatch, caplog):
    def broken(**kwargs):
        raise RuntimeError("the database went away")

    monkeypatch.setattr(homework, "homework_open", broken)
    async with _client(app) as http:
        headers, token = await _joined(http, code)
        failed = await http.post(f"/hw/{code}/api/start", json={"token": token, "question": 0}, headers=headers)
    assert failed.status_code == 500
    assert "the database went away" not in failed.text  # no detail to the player
    assert any(record.name == "django.request" and record.levelname == "ERROR" for record in caplog.records)


async def test_a_page_that_fails_gets_djangos_server_error_page_without_details(app, code, monkeypatch, caplog):
    """A failure in the page's view is Django's 500 page, logged as Django logs it; so is one outside Django's
    stack (the homework thread's own work)."""
    from config import homework_fastpath
    from lobby.homework import views

    def broken(*args):
        raise RuntimeError("the database went away")

    monkeypatch.setattr(views, "_play_page", broken)
    async with _client(app) as http:
        in_view = await http.get(f"/hw/{code}/")
        monkeypatch.setattr(homework_fastpath._SyncDjango, "respond", lambda self, scope, request: broken())
        outside = await http.get(f"/hw/{code}/")
    for failed in (in_view, outside):
        assert failed.status_code == 500
        assert "the database went away" not in failed.text  # no detail to the player
    assert any(record.name == "django.request" and record.levelname == "ERROR" for record in caplog.records)
