import segno
from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseForbidden
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods

from core.lan import shareable_url
from lobby import ratelimit, services
from lobby.exceptions import GameError, RoomNotFound
from lobby.forms import JoinForm, RoomCreateForm
from lobby.models import Room
from lobby.selectors import results_csv
from quiz.exceptions import QuizError
from quiz.models import Pack, Round
from quiz.selectors import host_round_list, pack_list
from quiz.services import round_create_from_pack

HOST_TOKENS = "host_tokens"


def _host_token(request: HttpRequest, code: str) -> str | None:
    return request.session.get(HOST_TOKENS, {}).get(code)


def _room_guess(request: HttpRequest, code: str) -> Room:
    """The room for a code in a URL or a form, under the code-guess limit. Raises RateLimited or RoomNotFound."""
    ip = ratelimit.client_ip_from_request(request)
    return ratelimit.code_guess(ip=ip, lookup=lambda: services.room_by_code(code))


def _too_many(error: ratelimit.RateLimited) -> HttpResponse:
    return HttpResponse(str(error), status=429, content_type="text/plain; charset=utf-8", headers={"Retry-After": "60"})


@require_http_methods(["GET", "POST"])
def home(request: HttpRequest) -> HttpResponse:
    form = RoomCreateForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        kind, object_id = form.cleaned_data["source"]
        try:
            if kind == "pack":
                round_ = round_create_from_pack(pack=Pack.objects.get(pk=object_id))
            else:
                round_ = Round.objects.get(pk=object_id, owner_key=request.session.get("owner_key") or "-")
            created = services.room_create(round_id=round_.pk, timer_seconds=form.cleaned_data["timer_seconds"])
        except (Pack.DoesNotExist, Round.DoesNotExist):
            form.add_error("source", "That pack or round no longer exists.")
        except (QuizError, GameError) as error:
            form.add_error(None, str(error))
        else:
            tokens = request.session.get(HOST_TOKENS, {})
            tokens[created.room.code] = created.host_token
            request.session[HOST_TOKENS] = tokens
            return redirect("lobby:host", code=created.room.code)
    choices = [{"value": f"pack:{pack.pk}", "title": pack.title, "note": pack.description} for pack in pack_list()]
    choices += [
        {"value": f"round:{r.pk}", "title": r.title, "note": f"your questions, {r.get_check_status_display().lower()}"}
        for r in host_round_list(owner_key=request.session.get("owner_key", ""))
    ]
    wanted = request.GET.get("round", "")
    selected = request.POST.get("source") or (f"round:{wanted}" if wanted.isdigit() else "")
    if choices and selected not in {choice["value"] for choice in choices}:
        selected = choices[0]["value"]
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
    return render(request, "lobby/play.html", {"room": room})


def join_qr_svg(url: str, *, code: str) -> str:
    return segno.make(url, error="m").svg_inline(dark="#111", light="#fff", title=f"Join {code}", omitsize=True)


@require_GET
def host(request: HttpRequest, code: str) -> HttpResponse:
    try:
        room = _room_guess(request, code)
    except ratelimit.RateLimited as error:
        return _too_many(error)
    except RoomNotFound:
        return render(request, "lobby/room_missing.html", {"code": code}, status=404)
    token = _host_token(request, room.code)
    if token is None:
        return HttpResponseForbidden("Only the browser that created this game can host it.")
    join_url = shareable_url(request, reverse("lobby:play", kwargs={"code": room.code}))
    qr_svg = join_qr_svg(join_url, code=room.code)
    return render(
        request, "lobby/host.html", {"room": room, "host_token": token, "join_url": join_url, "qr_svg": qr_svg}
    )


@require_GET
def results(request: HttpRequest, code: str) -> HttpResponse:
    try:
        room = _room_guess(request, code)
    except ratelimit.RateLimited as error:
        return _too_many(error)
    except RoomNotFound:
        raise Http404 from None
    if _host_token(request, room.code) is None:
        return HttpResponseForbidden("Only the host can download the results.")
    response = HttpResponse(results_csv(room=room), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="quizgate-{room.code}.csv"'
    return response
