"""Django's admin site with the sign-in rules of this app: a locked account is told so and how long it waits
(429), and with ADMIN_REQUIRE_TOTP only a staff member signed in with a one-time code gets in (django-otp's
is_verified()). Installed as the default site by config.apps.AdminConfig, so every app's admin.py registers on it."""

from django.conf import settings
from django.contrib import admin
from django.http import HttpRequest, HttpResponse

from accounts.forms import AdminLoginForm
from accounts.lockout import retry_after


class AdminSite(admin.AdminSite):
    login_form = AdminLoginForm
    login_template = "admin/quizgate_login.html"

    def has_permission(self, request: HttpRequest) -> bool:
        if not super().has_permission(request):
            return False
        return not settings.ADMIN_REQUIRE_TOTP or request.user.is_verified()

    def login(self, request: HttpRequest, extra_context=None) -> HttpResponse:
        context = {"require_totp": settings.ADMIN_REQUIRE_TOTP, **(extra_context or {})}
        response = super().login(request, context)
        form = (getattr(response, "context_data", None) or {}).get("form")
        wait = getattr(form, "lockout_wait", None)
        if wait is not None:
            response.status_code = 429
            response["Retry-After"] = retry_after(wait)
        return response
