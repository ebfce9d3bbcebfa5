"""Sign up, sign in, sign out, change password: Django's auth views and forms, plus what a host's sign-in
does here (the browser's anonymous rounds and games move into the account)."""

from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth import views as auth_views
from django.contrib.auth.models import AbstractBaseUser
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse_lazy
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.decorators.http import require_http_methods

from accounts import services
from accounts.forms import SignInForm, SignUpForm
from accounts.lockout import retry_after
from core.owner_keys import OWNER_KEY, session_owner_key
from lobby.tokens import HOST_TOKENS


def _take_browser(request: HttpRequest, user: AbstractBaseUser) -> None:
    """Right after `login`: Django kept the anonymous session's data (under a new session key)."""
    taken = services.account_take_browser(
        user=user,
        browser_key=session_owner_key(request.session),
        host_tokens=request.session.get(HOST_TOKENS, {}),
    )
    request.session[OWNER_KEY] = taken.owner_key
    if taken.rounds or taken.rooms:
        rounds = ngettext("%(count)s round", "%(count)s rounds", taken.rounds) % {"count": taken.rounds}
        games = ngettext("%(count)s game", "%(count)s games", taken.rooms) % {"count": taken.rooms}
        if taken.rounds and taken.rooms:
            text = _("This browser's %(rounds)s and %(games)s are now in your account.")
        elif taken.rounds:
            text = _("This browser's %(rounds)s are now in your account.")
        else:
            text = _("This browser's %(games)s are now in your account.")
        messages.success(request, text % {"rounds": rounds, "games": games})


def _next_url(request: HttpRequest) -> str:
    wanted = request.POST.get("next") or request.GET.get("next") or ""
    if wanted and url_has_allowed_host_and_scheme(wanted, allowed_hosts={request.get_host()}):
        return wanted
    return str(reverse_lazy("lobby:past_games"))


@require_http_methods(["GET", "POST"])
def sign_up(request: HttpRequest) -> HttpResponse:
    form = SignUpForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        user = services.host_sign_up(username=form.cleaned_data["username"], password=form.cleaned_data["password1"])
        login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        _take_browser(request, user)
        messages.success(
            request,
            _("Welcome, %(name)s: your rounds and games are kept in your account.") % {"name": user.get_username()},
        )
        return redirect(_next_url(request))
    return render(request, "accounts/sign_up.html", {"form": form, "next": _next_url(request)})


class SignInView(auth_views.LoginView):
    template_name = "accounts/sign_in.html"
    authentication_form = SignInForm
    redirect_authenticated_user = False

    def form_valid(self, form: SignInForm) -> HttpResponse:
        response = super().form_valid(form)  # login(): a new session key, the anonymous data kept
        _take_browser(self.request, form.get_user())
        return response

    def form_invalid(self, form: SignInForm) -> HttpResponse:
        response = super().form_invalid(form)
        if form.lockout_wait is not None:  # this account from this address (accounts/lockout.py)
            response.status_code = 429
            response["Retry-After"] = retry_after(form.lockout_wait)
        return response

    def get_default_redirect_url(self) -> str:
        return str(reverse_lazy("lobby:past_games"))


class SignOutView(auth_views.LogoutView):
    """POST only (Django's): the session is emptied, so this browser no longer holds the account's games."""

    next_page = reverse_lazy("lobby:home")


class PasswordChangeView(auth_views.PasswordChangeView):
    template_name = "accounts/password_change.html"
    success_url = reverse_lazy("lobby:past_games")

    def form_valid(self, form) -> HttpResponse:
        response = super().form_valid(form)  # keeps this browser signed in; other sessions' hashes go stale
        messages.success(self.request, _("Your password is changed."))
        return response
