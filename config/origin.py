"""The WebSocket Origin check: scheme, host and port, not the host alone.

Channels' AllowedHostsOriginValidator accepts any port of an allowed host, so a page served from
`http://127.0.0.1:9999` (any local program) could open a player's socket. Here an Origin is accepted when it is
the request's own origin (the Host header, with `ws` meaning `http` and `wss` meaning `https`) and that host is in
ALLOWED_HOSTS, or when it is listed exactly in CSRF_TRUSTED_ORIGINS. No Origin at all is refused, as Channels does.
"""

import logging
from typing import NamedTuple
from urllib.parse import urlsplit

from channels.security.websocket import WebsocketDenier
from django.conf import settings
from django.http.request import split_domain_port, validate_host

logger = logging.getLogger(__name__)

DEFAULT_PORTS = {"http": 80, "https": 443}


class Origin(NamedTuple):
    scheme: str
    host: str
    port: int


def origin_parse(value: str) -> Origin | None:
    """`scheme://host[:port]` with the default port filled in; None for anything else (including "null")."""
    try:
        parts = urlsplit(value.strip())
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in DEFAULT_PORTS or not parts.hostname or parts.path not in ("", "/") or parts.query:
        return None
    return Origin(scheme, parts.hostname.lower(), port or DEFAULT_PORTS[scheme])


def _header(scope: dict, name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key.lower() == name:
            return value.decode("latin-1")
    return None


def _secure(scope: dict) -> bool:
    """As Django's `request.is_secure()`: TLS here, or a proxy's SECURE_PROXY_SSL_HEADER saying so."""
    if scope.get("scheme") == "wss":
        return True
    proxy_header = getattr(settings, "SECURE_PROXY_SSL_HEADER", None)
    if proxy_header:
        name, secure_value = proxy_header
        value = _header(scope, name.removeprefix("HTTP_").lower().replace("_", "-").encode())
        return value is not None and value.split(",", 1)[0].strip() == secure_value
    return False


def _allowed_hosts() -> list[str]:
    allowed = list(settings.ALLOWED_HOSTS)
    if settings.DEBUG and not allowed:  # what Django itself allows then
        allowed = [".localhost", "127.0.0.1", "[::1]"]
    return allowed


def own_origin(scope: dict) -> Origin | None:
    """The origin of the page the request claims to come from: its Host header, if that host is allowed."""
    host_header = _header(scope, b"host")
    if not host_header:
        return None
    domain, port = split_domain_port(host_header.lower())
    if not domain or not validate_host(domain, _allowed_hosts()):
        return None
    scheme = "https" if _secure(scope) else "http"
    try:
        return Origin(scheme, domain.strip("[]"), int(port or DEFAULT_PORTS[scheme]))
    except ValueError:
        return None


def origin_allowed(scope: dict) -> bool:
    value = _header(scope, b"origin")
    origin = origin_parse(value) if value else None
    if origin is None:
        return False
    if origin == own_origin(scope):
        return True
    trusted = {origin_parse(entry) for entry in settings.CSRF_TRUSTED_ORIGINS}
    return origin in trusted


class SameOriginValidator:
    """ASGI middleware for WebSocket routes: a refused Origin gets an HTTP 403 at the handshake."""

    def __init__(self, application):
        self.application = application

    async def __call__(self, scope, receive, send):
        if scope["type"] == "websocket" and not origin_allowed(scope):
            logger.info("refused a WebSocket from origin %r", (_header(scope, b"origin") or "")[:100])
            return await WebsocketDenier()(scope, receive, send)
        return await self.application(scope, receive, send)
