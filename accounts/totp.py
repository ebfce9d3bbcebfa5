"""One-time codes for staff (TOTP, django-otp's otp_totp): enrolling an authenticator app, and checking the code
the admin's login asks for when ADMIN_REQUIRE_TOTP is on."""

from dataclasses import dataclass

import segno
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils.translation import gettext as _
from django_otp.plugins.otp_totp.models import TOTPDevice


class NotStaff(Exception):
    pass


@dataclass(frozen=True)
class Enrolled:
    device: TOTPDevice
    url: str  # otpauth://totp/...: what the app's QR code holds (the secret is in it)

    def qr_text(self) -> str:
        """The QR code drawn in text, for a terminal."""
        lines: list[str] = []
        segno.make(self.url, error="m").terminal(out=_Lines(lines), compact=True)
        return "".join(lines)


class _Lines:
    def __init__(self, lines: list[str]):
        self.lines = lines

    def write(self, text: str) -> None:
        self.lines.append(text)

    def flush(self) -> None:
        pass


def totp_enrol(*, user: AbstractBaseUser, name: str = "authenticator", replace: bool = False) -> Enrolled:
    """A new confirmed TOTP device for a staff account. With `replace`, the account's other TOTP devices go
    (a lost phone); without, they stay and any of them signs in."""
    if not user.is_staff:
        raise NotStaff(user.get_username())
    with transaction.atomic():
        if replace:
            TOTPDevice.objects.filter(user=user).delete()
        device = TOTPDevice.objects.create(user=user, name=name, confirmed=True)
    return Enrolled(device=device, url=device.config_url)


def totp_check(*, user: AbstractBaseUser, token: str) -> TOTPDevice:
    """The device whose current code `token` is, else a ValidationError saying what to do. A wrong code slows
    the next tries of that device (django-otp's throttling: 1 s, 2 s, 4 s, ...)."""
    devices = list(TOTPDevice.objects.filter(user=user, confirmed=True))
    if not devices:
        raise ValidationError(
            _(
                "The admin asks for a one-time code, and this account has no authenticator app enrolled. "
                "An operator enrols one with: manage.py totp_enrol %(name)s"
            )
            % {"name": user.get_username()},
            code="totp_not_enrolled",
        )
    token = "".join(token.split())
    if not token:
        raise ValidationError(_("Enter the one-time code your authenticator app shows."), code="totp_required")
    allowed = [device for device in devices if device.verify_is_allowed()[0]]
    if not allowed:
        raise ValidationError(
            _("Too many wrong one-time codes: wait a moment, then enter the code your app shows."),
            code="totp_throttled",
        )
    for device in allowed:
        if device.verify_token(token):
            return device
    raise ValidationError(
        _("That one-time code is not right or has expired. Enter the code your app shows now."),
        code="totp_invalid",
    )
