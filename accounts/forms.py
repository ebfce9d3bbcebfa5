from django import forms
from django.conf import settings
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth.forms import AuthenticationForm, BaseUserCreationForm
from django.utils.translation import gettext_lazy

from accounts.lockout import LockoutFormMixin
from accounts.totp import totp_check


class SignUpForm(BaseUserCreationForm):
    """A username and a password twice (checked by AUTH_PASSWORD_VALIDATORS); no e-mail. Not saved by the form:
    the view hands the cleaned data to accounts.services.host_sign_up."""


class SignInForm(LockoutFormMixin, AuthenticationForm):
    error_messages = {
        **AuthenticationForm.error_messages,
        "invalid_login": gettext_lazy("That username and password do not match an account. Both are case-sensitive."),
    }


class AdminLoginForm(LockoutFormMixin, AdminAuthenticationForm):
    """The admin's login: the lockout as at the hosts' sign-in, and with ADMIN_REQUIRE_TOTP the one-time code
    from the staff member's authenticator app (accounts/totp.py) after a right password."""

    otp_token = forms.CharField(
        label=gettext_lazy("One-time code"),
        required=False,
        max_length=16,
        widget=forms.TextInput(attrs={"autocomplete": "one-time-code", "inputmode": "numeric"}),
    )

    def clean(self):
        cleaned = super().clean()
        if settings.ADMIN_REQUIRE_TOTP:
            user = self.get_user()
            # Kept on the user: django-otp's sign-in hook puts the device in the session (is_verified()).
            user.otp_device = totp_check(user=user, token=cleaned.get("otp_token") or "")
        return cleaned
