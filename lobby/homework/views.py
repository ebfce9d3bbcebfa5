"""Homework's pages and its players' JSON endpoints (the rules are lobby/homework/services.py). Every POST
carries the CSRF token (the page's script sends it as X-CSRFToken from the csrftoken cookie)."""

import json
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor

from django.conf import settings
from django.db import close_old_connections, connection
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import translation
from django.utils.translation import gettext as _
from django.views.decorators.csrf import ensure_csrf_cookie
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from core.lan import shareable_url
from core.owner_keys import session_owner_key
from core.text import safe_payload
from lobby.exceptions import BadToken, GameError, RoomNotFound
from lobby.homework import rows
from lobby.homework import services as homework
from lobby.models import Assignment, Room
from lobby.pages.forms import HomeworkCreateForm
from lobby.pages.views import (
    _host_only,
    _keep_host_token,
    _selected_source,
    _source_choices,
    _too_many,
    qr_svg,
)
from lobby.realtime import ratelimit
from quiz.exceptions import QuizError
from quiz.models import Pack, Round
from quiz.services import round_create_from_pack

# A player's request body: a token, a question number and an answer (a typed answer is at most 100 characters).
MAX_BODY = 4096


@require_http_methods(["GET", "POST"])
@ensure_csrf_cookie
def homework_new(request: HttpRequest) -> HttpResponse:
    form = HomeworkCreateForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        kind, object_id = form.cleaned_data["source"]
        try:
            if kind == "pack":
                round_ = round_create_from_pack(pack=Pack.objects.get(pk=object_id))
            else:
                round_ = Round.objects.get(pk=object_id, owner_key=session_owner_key(request.session) or "-")
            created = homework.assignment_create(
                round_id=round_.pk,
                deadline=form.deadline_utc(),
                reveal=form.cleaned_data["reveal"],
                timer_seconds=form.cleaned_data["timer_seconds"],
                owner_key=session_owner_key(request.session, create=True),
                no_speed_bonus=form.cleaned_data["no_speed_bonus"],
            )
        except (Pack.DoesNotExist, Round.DoesNotExist):
            form.add_error("source", _("That pack or round no longer exists."))
        except (QuizError, GameError) as error:
            form.add_error(None, str(error))
        else:
            _keep_host_token(request, created.room.code, created.host_token)
            return redirect("lobby:homework_host", code=created.room.code)
    choices = _source_choices(request)
    selected = _selected_source(request, choices)
    return render(request, "lobby/homework_new.html", {"form": form, "choices": choices, "selected": selected})


def _assignment_or_404(room: Room) -> Assignment:
    try:
        return room.assignment
    except Assignment.DoesNotExist:
        raise Http404 from None


@require_GET
@_host_only(missing_page=True)
def homework_host(request: HttpRequest, room: Room) -> HttpResponse:
    assignment = _assignment_or_404(room)
    link = shareable_url(request, reverse("lobby:homework_play", kwargs={"code": room.code}))
    context = {
        "room": room,
        "assignment": assignment,
        "link": link,
        "qr_svg": qr_svg(link, title=_("QR code to open homework %(code)s") % {"code": room.code}),
        "overview": homework.homework_overview(room=room),
    }
    return render(request, "lobby/homework_host.html", context)


@require_GET
@_host_only()
def homework_status(request: HttpRequest, room: Room) -> HttpResponse:
    _assignment_or_404(room)
    response = JsonResponse(homework.homework_overview(room=room))
    response["Cache-Control"] = "no-store"
    return response


@require_GET
@ensure_csrf_cookie
def homework_play(request: HttpRequest, code: str) -> HttpResponse:
    # Opened by every player at once as the homework is handed out: on the kept connections, as their requests.
    return _on_kept_connection(_play_page, request, code)


def _homework_room(request: HttpRequest, code: str) -> Room:
    """The room for a code, under the code-guess limit (as lobby.pages.views._room_guess), with its assignment
    and round read in the same query. Raises RateLimited or RoomNotFound."""
    ip = ratelimit.client_ip_from_request(request)
    return ratelimit.code_guess(ip=ip, lookup=lambda: rows.room_for_page(code))


def _play_page(request: HttpRequest, code: str) -> HttpResponse:
    try:
        room = _homework_room(request, code)
    except ratelimit.RateLimited as error:
        return _too_many(error)
    except RoomNotFound:
        return render(request, "lobby/room_missing.html", {"code": code}, status=404)
    assignment = _assignment_or_404(room)
    context = {"room": room, "assignment": assignment, "open": homework.is_open(assignment)}
    return render(request, "lobby/homework_play.html", context)


def request_data(request: HttpRequest) -> dict:
    if len(request.body) > MAX_BODY:
        raise GameError(_("That request is too large."))
    try:
        data = json.loads(request.body or b"{}")
    except (ValueError, UnicodeDecodeError):
        data = None
    if not isinstance(data, dict):
        raise GameError(_("That request could not be read."))
    return safe_payload(data)  # every text in it storable (core/text.py), as the room's socket does


def _api(handler):
    """A player's JSON endpoint: the body read, the player found by their token (but for joining), a game error
    answered as {"error", "code"} with 400 (403 for a token that names no player)."""

    def view(request: HttpRequest, code: str) -> HttpResponse:
        try:
            data = request_data(request)
            reply = _on_kept_connection(handler, request, code, data)
        except GameError as error:
            return refused(error)
        return replied(reply)

    view.__name__ = handler.__name__
    view.handler = handler  # config/homework_fastpath.py calls it the same way, in front of Django's stack
    return require_POST(view)


def refused(error: GameError) -> JsonResponse:
    """A game error as the player's page reads it: 403 for a token that names no player, else 400."""
    status = 403 if isinstance(error, BadToken) else 400
    return JsonResponse({"error": str(error), "code": error.code}, status=status)


def replied(reply: dict) -> JsonResponse:
    response = JsonResponse(reply)
    response["Cache-Control"] = "no-store"
    return response


# Under ASGI each sync request runs on a thread of its own, and a persistent connection (CONN_MAX_AGE) stays open
# with its thread: 200 players answering at once held PostgreSQL's 100 connections and refused the rest. Closing
# it after each request instead opened a connection per request, the largest cost of an answer at 2,000 players
# (bench/homework_load.py). These endpoints are the many small requests of many players: their database work runs
# on a few threads of their own, each keeping its connection (HOMEWORK_DB_THREADS per process).
_threads = ThreadPoolExecutor(max_workers=settings.HOMEWORK_DB_THREADS, thread_name_prefix="quizgate-homework")


# A connection this thread used a moment ago is not checked again before its next request (CONN_HEALTH_CHECKS
# sends a query of its own for that: a round trip on every request, a tenth of the threads' time at 2,000
# players). One idle longer is checked; one that fails mid-request is closed after it (close_old_connections).
RECHECK_IDLE_SECONDS = 2.0
_used = threading.local()


def _kept(language: str | None, handler, *args):
    _used.kept = True  # this is a homework thread: _on_kept_connection runs its handler here
    close_old_connections()  # one past CONN_MAX_AGE, or broken, is replaced; a sound one is kept
    if connection.connection is not None and time.monotonic() - getattr(_used, "at", -1e9) < RECHECK_IDLE_SECONDS:
        connection.health_check_done = True
    try:
        with translation.override(language):  # a refusal speaks the player's page's language
            return handler(*args)
    finally:
        close_old_connections()
        _used.at = time.monotonic()


def run_kept(language: str | None, handler, *args) -> Future:
    """`handler(*args)` on one of the homework threads, in `language`: its future."""
    return _threads.submit(_kept, language, handler, *args)


def _on_kept_connection(handler, *args):
    """`handler(*args)` on one of the homework threads, which keep their database connections. Inside a test's
    transaction it runs here, on the request's own connection, which holds that transaction; on a homework thread
    (the page as config/homework_fastpath.py serves it) here too."""
    if connection.in_atomic_block or getattr(_used, "kept", False):
        return handler(*args)
    return run_kept(translation.get_language(), handler, *args).result()


def _player(code: str, data: dict):
    return homework.homework_player(code=code, token=data.get("token"))


@_api
def api_join(request: HttpRequest, code: str, data: dict) -> dict:
    try:
        room = _homework_room(request, code)
    except ratelimit.RateLimited as error:
        raise GameError(str(error)) from None
    player, token = homework.homework_join(code=code, nickname=data.get("nickname"), room=room)
    return {"token": token, "state": homework.homework_state(player_id=player.pk, joined=player)}


@_api
def api_state(request: HttpRequest, code: str, data: dict) -> dict:
    return homework.homework_state(player_id=_player(code, data).pk)


# Opening and answering are most of a player's requests: the player's place is read once with the token's check
# and passed on, so the common case is one read and one write (lobby/homework/services.py).
@_api
def api_start(request: HttpRequest, code: str, data: dict) -> dict:
    place = homework.homework_place(code=code, token=data.get("token"))
    return homework.homework_open(player_id=place.player_id, question_index=data.get("question"), place=place)


@_api
def api_answer(request: HttpRequest, code: str, data: dict) -> dict:
    place = homework.homework_place(code=code, token=data.get("token"))
    return homework.homework_answer(
        player_id=place.player_id, question_index=data.get("question"), given=data, place=place
    )
