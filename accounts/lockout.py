"""Wrong passwords: django-axes counts them in the database per account and address (settings, AXES_*), at the
hosts' sign-in and the admin's login alike; this module gives axes the client's address and says, in the page's
language, that an account is locked and how long it waits."""

import ipaddress
import math
from datetime import timedelta

from axes.helpers import get_cool_off
from axes.models import AccessAttempt
from django.core.exceptions import ValidationError
from django.db.models import Max
from django.http import HttpRequest
from django.utils import timezone
from django.utils.translation import ngettext

from core.client_ip import IPV6_NETWORK_PREFIX, client_ip_from_request


def client_address(request: HttpRequest) -> str | None:
    """The address a lockout is kept under: the one the rate limits use (TRUST_X_FORWARDED_FOR), and for IPv6
    the first address of its /64, since one subscriber may pick any address in it. None when there is none."""
    try:
        address = ipaddress.ip_address(client_ip_from_request(request))
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.IPv6Network((address, IPV6_NETWORK_PREFIX), strict=False).network_address)
    return str(address)


def is_locked_out(request: HttpRequest) -> bool:
    """This request's sign-in was refused for the lockout (axes marks the request while authenticating)."""
    return bool(getattr(request, "axes_locked_out", False))


def lockout_time_left(*, request: HttpRequest, username: str) -> timedelta:
    """How long `username` still waits from this request's address: the cool-off from its latest wrong password
    (a try while locked does not count, AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT). At least one second."""
    cool_off = get_cool_off(request) or timedelta(0)
    latest = AccessAttempt.objects.filter(username=username, ip_address=client_address(request)).aggregate(
        latest=Max("attempt_time")
    )["latest"]
    left = (latest + cool_off - timezone.now()) if latest else cool_off
    return max(left, timedelta(seconds=1))


def lockout_message(wait: timedelta) -> str:
    minutes = max(1, math.ceil(wait.total_seconds() / 60))
    return ngettext(
        "Too many wrong passwords for this account from your network: it is locked here for %(minutes)s more "
        "minute. Other accounts can still sign in.",
        "Too many wrong passwords for this account from your network: it is locked here for %(minutes)s more "
        "minutes. Other accounts can still sign in.",
        minutes,
    ) % {"minutes": minutes}


class LockoutFormMixin:
    """For an AuthenticationForm: a locked account is told so and how long it waits, instead of "wrong
    password". `lockout_wait` is set when it is (the view answers 429 with Retry-After)."""

    lockout_wait: timedelta | None = None

    def get_invalid_login_error(self) -> ValidationError:
        if is_locked_out(self.request):
            self.lockout_wait = lockout_time_left(
                request=self.request, username=self.cleaned_data.get("username") or ""
            )
            return ValidationError(lockout_message(self.lockout_wait), code="locked_out")
        return super().get_invalid_login_error()


def retry_after(wait: timedelta) -> str:
    return str(math.ceil(wait.total_seconds()))
