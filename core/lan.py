"""The address other devices on this network reach the machine at, so a game run from a laptop (`make run`)
shows phones a join link they can open."""

import ipaddress
import socket

from django.conf import settings
from django.http import HttpRequest
from django.http.request import split_domain_port

# Private addresses to "connect" a UDP socket to: connecting only picks the route and with it the source
# address; a UDP socket sends nothing until it is written to, and this one never is.
_ROUTE_PROBES = ("10.255.255.255", "192.168.255.255", "172.31.255.255")


def lan_address() -> str | None:
    """This machine's IPv4 address on its local network, or None (no network, or only loopback)."""
    for target in _ROUTE_PROBES:
        try:
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
                probe.connect((target, 9))
                address = probe.getsockname()[0]
        except OSError:
            continue
        parsed = ipaddress.ip_address(address)
        if not parsed.is_loopback and not parsed.is_unspecified:
            return address
    return None


def is_loopback_host(host: str) -> bool:
    """Is `host` (a Host header, or an address a server binds) this machine only?"""
    domain, _ = split_domain_port(host.lower())
    if domain in ("localhost", "") or domain.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(domain.strip("[]")).is_loopback
    except ValueError:
        return False


def shareable_url(request: HttpRequest, path: str) -> str:
    """A link to `path` that works on another device: QUIZ_PUBLIC_URL when set (a tunnel, a proxy), else the
    LAN address when the page was opened on this machine's loopback, else the address the page was opened at."""
    if settings.QUIZ_PUBLIC_URL:
        return settings.QUIZ_PUBLIC_URL.rstrip("/") + path
    if settings.QUIZ_LAN_ADDRESS and is_loopback_host(request.get_host()):
        port = request.get_port()
        default_port = "443" if request.is_secure() else "80"
        netloc = settings.QUIZ_LAN_ADDRESS if port == default_port else f"{settings.QUIZ_LAN_ADDRESS}:{port}"
        return f"{request.scheme}://{netloc}{path}"
    return request.build_absolute_uri(path)
