"""The language of a WebSocket connection, chosen the way Django's LocaleMiddleware chooses a page's: the language
switch's cookie first, then the browser's Accept-Language, then LANGUAGE_CODE. A player's phone speaks its own
language whatever the host's screen speaks."""

from django.conf import settings
from django.http.cookie import parse_cookie
from django.utils import translation
from django.utils.translation.trans_real import parse_accept_lang_header


def _supported(code: str) -> str | None:
    try:
        return translation.get_supported_language_variant(code)
    except LookupError:
        return None


def language_from_scope(scope) -> str:
    headers = dict(scope.get("headers") or [])
    cookies = scope.get("cookies") or parse_cookie(headers.get(b"cookie", b"").decode("latin-1"))
    chosen = cookies.get(settings.LANGUAGE_COOKIE_NAME)
    if chosen and (found := _supported(chosen)):
        return found
    accept = headers.get(b"accept-language", b"").decode("latin-1")
    for code, _quality in parse_accept_lang_header(accept):
        if code != "*" and (found := _supported(code)):
            return found
    return settings.LANGUAGE_CODE
