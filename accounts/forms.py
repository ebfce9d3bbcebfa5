from django.contrib.auth.forms import AuthenticationForm, BaseUserCreationForm
from django.utils.translation import gettext_lazy


class SignUpForm(BaseUserCreationForm):
    """A username and a password twice (checked by AUTH_PASSWORD_VALIDATORS); no e-mail. Not saved by the form:
    the view hands the cleaned data to accounts.services.host_sign_up."""


class SignInForm(AuthenticationForm):
    error_messages = {
        **AuthenticationForm.error_messages,
        "invalid_login": gettext_lazy("That username and password do not match an account. Both are case-sensitive."),
    }
