import functools
import json
from urllib.parse import urlencode

import segno
from django.conf import settings
from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import translation
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from core.lan import shareable_url
from core.owner_keys import session_owner_key
from lobby import services
from lobby.exceptions import BadToken, GameError, RoomNotFound
from lobby.models import Room
from lobby.pages import results as results_selectors
from lobby.pages.audit import room_audit
from lobby.pages.forms import JoinForm, RoomCreateForm
from lobby.reads import team_board
from lobby.reads.host_view import players_page
from lobby.reads.selectors import results_csv
from lobby.realtime import ratelimit
from lobby.rules.machine import Phase
from lobby.rules.teams import MAX_TEAM_TALK, TeamsMode
from lobby.tokens import HOST_TOKENS
from quiz.exceptions import QuizError
from quiz.models import Pack, Round
from quiz.selectors import host_round_list, pack_list
from quiz.services import round_create_from_pack


def _host_token(request: HttpRequest, code: str) -> str | None:
    return request.session.get(HOST_TOKENS, {}).get(code)


def _keep_host_token(request: HttpRequest, code: str, token: str | None) -> None:
    tokens = request.session.get(HOST_TOKENS, {})
    if token is None:
        tokens.pop(code, None)
    else:
        tokens[code] = token
    request.session[HOST_TOKENS] = tokens


def _is_host(request: HttpRequest, room: Room) -> bool:
    """Does this browser hold a host token for the room that still counts (a co-host's may have been replaced)?
    The browser of the host who owns the room (signed in to their account) gets the creator's token here."""
    token = _host_token(request, room.code)
    if token is not None:
        try:
            services.host_resume(token=token, code=room.code)
        except BadToken:
            _keep_host_token(request, room.code, None)
        else:
            return True
    try:
        token = services.host_token_for_owner(room=room, owner_key=session_owner_key(request.session))
    except BadToken:
        return False
    _keep_host_token(request, room.code, token)
    return True


def _not_the_host(request: HttpRequest, room: Room, *, reason: str = "") -> HttpResponse:
    """A readable page for a browser without the host's role: how to get it back (the co-host link)."""
    return render(request, "lobby/host_denied.html", {"room": room, "reason": reason}, status=403)


def _room_guess(request: HttpRequest, code: str) -> Room:
    """The room for a code in a URL or a form, under the code-guess limit. Raises RateLimited or RoomNotFound."""
    ip = ratelimit.client_ip_from_request(request)
    return ratelimit.code_guess(ip=ip, lookup=lambda: services.room_by_code(code))


def _too_many(error: ratelimit.RateLimited) -> HttpResponse:
    return HttpResponse(str(error), status=429, content_type="text/plain; charset=utf-8", headers={"Retry-After": "60"})


# The host screen's choices for a moment to read: every whole second the create form takes.
READING_CHOICES = tuple(range(settings.ROOM_MAX_READING + 1))
# ... and for team talk, in steps of 5 seconds (any whole second from 0 to 30 on the home page).
TEAM_TALK_CHOICES = tuple(range(0, MAX_TEAM_TALK + 1, 5))


def _selected_source(request, choices: list[dict]) -> str:
    """The pack or round the form shows picked: the one posted, else `?round=` from a round's link, else the first."""
    wanted = request.GET.get("round", "")
    selected = request.POST.get("source") or (f"round:{wanted}" if wanted.isdigit() else "")
    if choices and selected not in {choice["value"] for choice in choices}:
        selected = choices[0]["value"]
    return selected


def _source_choices(request: HttpRequest) -> list[dict]:
    """The packs and this host's rounds a game (or homework) can be made of, as the forms' radio buttons."""
    page_language = translation.get_language() or settings.LANGUAGE_CODE
    choices = [
        {
            "value": f"pack:{pack.pk}",
            "title": pack.title,
            "note": pack.description,
            "lang": pack.language,
            # In the page's language: "Fragen auf Englisch", "preguntas en alemán".
            "language": _("questions in %(language)s")
            % {"language": translation.get_language_info(pack.language)["name_translated"]},
        }
        for pack in pack_list(language_first=translation.get_language_info(page_language)["code"])
    ]
    choices += [
        {
            "value": f"round:{r.pk}",
            "title": r.title,
            "note": _("your questions · %(check)s") % {"check": r.check_label},
        }
        for r in host_round_list(owner_key=session_owner_key(request.session))
    ]
    return choices


@require_http_methods(["GET", "POST"])
def home(request: HttpRequest) -> HttpResponse:
    form = RoomCreateForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        kind, object_id = form.cleaned_data["source"]
        try:
            if kind == "pack":
                round_ = round_create_from_pack(pack=Pack.objects.get(pk=object_id))
            else:
                round_ = Round.objects.get(pk=object_id, owner_key=session_owner_key(request.session) or "-")
            created = services.room_create(
                round_id=round_.pk,
                timer_seconds=form.cleaned_data["timer_seconds"],
                owner_key=session_owner_key(request.session, create=True),
                no_speed_bonus=form.cleaned_data["no_speed_bonus"],
                reading_seconds=form.cleaned_data["reading_seconds"] or 0,
                teams_mode=form.cleaned_data["teams_mode"] or "off",
                team_count=form.cleaned_data["team_count"] or 0,
                team_names=form.cleaned_data["team_names"],
                team_talk_seconds=form.cleaned_data["team_talk_seconds"] or 0,
                friendly_names=form.cleaned_data["friendly_names"],
            )
        except (Pack.DoesNotExist, Round.DoesNotExist):
            form.add_error("source", _("That pack or round no longer exists."))
        except (QuizError, GameError) as error:
            form.add_error(None, str(error))
        else:
            _keep_host_token(request, created.room.code, created.host_token)
            return redirect("lobby:host", code=created.room.code)
    choices = _source_choices(request)
    selected = _selected_source(request, choices)
    context = {"form": form, "choices": choices, "selected": selected, "join_form": JoinForm()}
    return render(request, "lobby/home.html", context)


@require_GET
def join(request: HttpRequest) -> HttpResponse:
    if "code" not in request.GET:  # a player's way back after a game: the code form alone, no host form
        return render(request, "lobby/join.html")
    code = services.normalize_code(request.GET.get("code", ""))
    try:
        _room_guess(request, code)
    except (RoomNotFound, ratelimit.RateLimited) as error:
        messages.error(request, str(error))
        return redirect("lobby:home")
    return redirect("lobby:play", code=code)


@require_GET
def play(request: HttpRequest, code: str) -> HttpResponse:
    try:
        room = _room_guess(request, code)
    except ratelimit.RateLimited as error:
        return _too_many(error)
    except RoomNotFound:
        return render(request, "lobby/room_missing.html", {"code": code}, status=404)
    # Named teams: the join form offers them (a player may switch in the lobby). Auto teams: the server chooses.
    teams = (
        [{"id": team.pk, "name": team_board.team_name(team.name, team.order)} for team in room.teams.all()]
        if room.teams_mode == TeamsMode.NAMED
        else []
    )
    context = {"room": room, "finished": room.phase == Phase.FINISHED, "teams": teams}
    return render(request, "lobby/play.html", context)


def qr_svg(url: str, *, title: str) -> str:
    """A QR code as inline SVG without a fixed size: the page's `.qr` rule sizes it (projector or phone)."""
    return segno.make(url, error="m").svg_inline(dark="#111", light="#fff", title=title, omitsize=True)


def _host_only(*, missing_page: bool = False):
    """A view of one room for its host only: the room is found under the code-guess limit (429 past it), a
    missing one is a 404 (the "no such game" page with `missing_page`), and a browser without the host's role
    gets the readable 403. The view is called with the room."""

    def decorate(view):
        @functools.wraps(view)
        def wrapped(request: HttpRequest, code: str) -> HttpResponse:
            try:
                room = _room_guess(request, code)
            except ratelimit.RateLimited as error:
                return _too_many(error)
            except RoomNotFound:
                if missing_page:
                    return render(request, "lobby/room_missing.html", {"code": code}, status=404)
                raise Http404 from None
            if not _is_host(request, room):
                return _not_the_host(request, room)
            return view(request, room)

        return wrapped

    return decorate


@require_GET
def host(request: HttpRequest, code: str) -> HttpResponse:
    try:
        room = _room_guess(request, code)
    except ratelimit.RateLimited as error:
        return _too_many(error)
    except RoomNotFound:
        return render(request, "lobby/room_missing.html", {"code": code}, status=404)
    if "key" in request.GET:
        # The co-host link. A browser already hosting keeps what it holds (the creator's token is never revoked).
        if not _is_host(request, room):
            try:
                token = services.cohost_join(key=request.GET["key"], code=room.code)
            except BadToken as error:
                return _not_the_host(request, room, reason=str(error))
            _keep_host_token(request, room.code, token)
        # Off the address bar and out of the history: the key has done its work.
        return redirect("lobby:host", code=room.code)
    if not _is_host(request, room):
        return _not_the_host(request, room)
    join_url = shareable_url(request, reverse("lobby:play", kwargs={"code": room.code}))
    join_qr = qr_svg(join_url, title=_("QR code to join game %(code)s") % {"code": room.code})
    context = {
        "room": room,
        "host_token": _host_token(request, room.code),
        "join_url": join_url,
        "qr_svg": join_qr,
        "reading_choices": READING_CHOICES,
        "team_talk_choices": sorted({*TEAM_TALK_CHOICES, room.team_talk_seconds}),
    }
    return render(request, "lobby/host.html", context)


@require_GET
@_host_only(missing_page=True)
def cohost(request: HttpRequest, room: Room) -> HttpResponse:
    """The co-host link and its QR code, for the host's eyes: a page of its own, off the projected screen."""
    link = shareable_url(request, reverse("lobby:host", kwargs={"code": room.code}))
    link += "?" + urlencode({"key": services.cohost_link_key(room=room)})
    context = {
        "room": room,
        "cohost_url": link,
        "qr_svg": qr_svg(link, title=_("QR code to co-host game %(code)s") % {"code": room.code}),
    }
    response = render(request, "lobby/cohost.html", context)
    response["Cache-Control"] = "no-store"  # a secret: not for a shared machine's cache
    return response


@require_POST
@_host_only()
def cohost_replace(request: HttpRequest, room: Room) -> HttpResponse:
    token = services.cohost_link_replace(room_id=room.pk, token=_host_token(request, room.code))
    _keep_host_token(request, room.code, token)
    messages.success(request, _("A new co-host link: the old one no longer works."))
    return redirect("lobby:cohost", code=room.code)


@require_GET
@_host_only(missing_page=True)
def game_results(request: HttpRequest, room: Room) -> HttpResponse:
    """The game as its host reads it afterwards: standings, each question's answers, flags and reports."""
    team_lines = team_board.room_board(room) if room.teams_mode != TeamsMode.OFF else []
    context = {
        "results": results_selectors.game_results(room=room),
        "team_lines": sorted(team_lines, key=lambda line: (line.rank, line.order)),
        **_downloads(room),
    }
    return render(request, "lobby/game_results.html", context)


def _downloads(room: Room) -> dict:
    """The files a game's results page links to. The one place to add another (the room's audit trail)."""
    return {
        "downloads": [
            {"label": _("results (CSV)"), "url": reverse("lobby:results", kwargs={"code": room.code})},
            {"label": _("audit trail (JSON)"), "url": reverse("lobby:audit", kwargs={"code": room.code})},
        ]
        + (
            [{"label": _("team results (CSV)"), "url": reverse("lobby:teams_csv", kwargs={"code": room.code})}]
            if room.teams_mode != TeamsMode.OFF
            else []
        )
    }


@require_GET
def past_games(request: HttpRequest) -> HttpResponse:
    """An account's games (signed in), or this browser's, newest first."""
    games = results_selectors.past_games(
        owner_key=session_owner_key(request.session), host_tokens=request.session.get(HOST_TOKENS, {})
    )
    return render(request, "lobby/past_games.html", {"games": games})


@require_GET
@_host_only()
def audit(request: HttpRequest, room: Room) -> HttpResponse:
    """Everything needed to see why each question of this game was played (lobby/pages/audit.py), for its host."""
    content = json.dumps(room_audit(room), ensure_ascii=False, indent=2) + "\n"
    response = HttpResponse(content, content_type="application/json; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="quizgate-{room.code}-audit.json"'
    response["Cache-Control"] = "no-store"
    return response


@require_GET
@_host_only()
def results(request: HttpRequest, room: Room) -> HttpResponse:
    response = HttpResponse(results_csv(room=room), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="quizgate-{room.code}.csv"'
    return response


@require_GET
@_host_only()
def teams_csv(request: HttpRequest, room: Room) -> HttpResponse:
    """Per team: rank, name, members, total and each question's mean of its members' points."""
    if room.teams_mode == TeamsMode.OFF:
        raise Http404("This game has no teams.")
    response = HttpResponse(team_board.teams_csv(room=room), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="quizgate-{room.code}-teams.csv"'
    return response


@require_http_methods(["GET", "POST"])
@_host_only(missing_page=True)
def host_players(request: HttpRequest, room: Room) -> HttpResponse:
    """Every player of the room, a page at a time (the host's screen names only those it draws): remove one,
    give or take back extra time, answer a request for more time."""
    if request.method == "POST":
        try:
            player_id = int(request.POST.get("player", ""))
            action = request.POST.get("action")
            if action == "remove":
                services.player_remove(room_id=room.pk, player_id=player_id)
            elif action == "decline":
                services.player_time_request_decline(room_id=room.pk, player_id=player_id)
            else:
                services.player_time_set(room_id=room.pk, player_id=player_id, time_percent=int(action or ""))
        except ValueError:
            messages.error(request, _("Choose a player and what to do."))
        except GameError as error:
            messages.error(request, str(error))
        page = urlencode({"page": request.GET.get("page", "1")})
        return redirect(reverse("lobby:host_players", kwargs={"code": room.code}) + "?" + page)
    page = players_page(room_id=room.pk, number=request.GET.get("page"))
    response = render(request, "lobby/host_players.html", {"room": room, "page": page})
    response["Cache-Control"] = "no-store"
    return response
