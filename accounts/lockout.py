"""Wrong passwords: django-axes counts them in the database per account and address (settings, AXES_*), at the
hosts' sign-in and the admin's login alike; this module gives axes the client's address, counts the password
checks in flight so that guesses sent at once are no more than the limit, and says, in the page's language, that
an account is locked and how long it waits."""

import hashlib
import ipaddress
import logging
import math
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from datetime import timedelta

from axes.handlers.proxy import AxesProxyHandler
from axes.helpers import get_cool_off, get_failure_limit
from axes.models import AccessAttempt
from django.conf import settings
from django.core.cache import cache
from django.core.exceptions import ValidationError
from django.db.models import Max
from django.http import HttpRequest
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from core.client_ip import IPV6_NETWORK_PREFIX, client_ip_from_request

logger = logging.getLogger(__name__)

# A password check outlives this only if something is wrong; the count of checks in flight then frees itself.
CHECK_SECONDS = 60


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


@contextmanager
def password_check_slot(*, request: HttpRequest, username: str) -> Iterator[bool]:
    """Whether this sign-in's password may be checked now. axes counts a wrong password once it has been
    checked, so guesses sent at once would all pass its test before the first was counted: 40 at once were 40
    guesses. The checks in flight for the account and address are counted too (in the cache, so in Redis for
    every process when REDIS_URL is set), and a check is let through only while the wrong passwords so far and
    the checks in flight stay under the limit. A cache outage lets the check through (axes still counts)."""
    address = client_address(request) or "none"
    digest = hashlib.sha256(f"{username}\0{address}".encode()).hexdigest()[:32]
    key = f"{settings.RATELIMIT_KEY_PREFIX}:signin-checks:{digest}"
    try:
        cache.add(key, 0, timeout=CHECK_SECONDS)
        try:
            in_flight = cache.incr(key)
        except ValueError:  # expired between add and incr
            cache.add(key, 1, timeout=CHECK_SECONDS)
            in_flight = 1
    except Exception:
        logger.warning("sign-in check counter unavailable; checking the password", exc_info=True)
        yield True
        return
    try:
        credentials = {"username": username}
        failures = AxesProxyHandler.get_failures(request, credentials)
        yield failures + in_flight <= get_failure_limit(request, credentials)
    finally:
        # Expired, or the cache is gone: the count frees itself within CHECK_SECONDS.
        with suppress(Exception):
            cache.decr(key)


def busy_message() -> str:
    return _("Too many sign-ins for this account at once from your network. Wait a moment and try again.")


class LockoutFormMixin:
    """For an AuthenticationForm: a locked account is told so and how long it waits, instead of "wrong
    password"; guesses sent at once are checked no more than the lockout allows. `lockout_wait` is set when a
    sign-in is refused for either (the view answers 429 with Retry-After)."""

    lockout_wait: timedelta | None = None

    def clean(self):
        username, password = self.cleaned_data.get("username"), self.cleaned_data.get("password")
        if username is None or not password:
            return super().clean()
        with password_check_slot(request=self.request, username=username) as may_check:
            if not may_check:
                if AxesProxyHandler.is_locked(self.request, {"username": username}):
                    self.request.axes_locked_out = True
                    raise self.get_invalid_login_error()
                self.lockout_wait = timedelta(seconds=5)
                raise ValidationError(busy_message(), code="busy")
            return super().clean()

    def get_invalid_login_error(self) -> ValidationError:
        if is_locked_out(self.request):
            self.lockout_wait = lockout_time_left(
                request=self.request, username=self.cleaned_data.get("username") or ""
            )
            return ValidationError(lockout_message(self.lockout_wait), code="locked_out")
        return super().get_invalid_login_error()


def retry_after(wait: timedelta) -> str:
    return str(math.ceil(wait.total_seconds()))
