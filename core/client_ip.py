"""The client's address as the server saw it (or as our proxy says, when told to trust it), for per-IP limits
in the lobby and the round writer alike."""

import ipaddress
import re

from django.conf import settings

UNKNOWN_IP = "unknown"
_NOT_IN_AN_ADDRESS = re.compile(r"[^0-9A-Za-z.:_-]")
# One IPv6 subscriber gets a whole /64 and may pick any address in it: a limit per address would not hold.
IPV6_NETWORK_PREFIX = 64


def _pick_ip(remote: str | None, forwarded: str | None) -> str:
    if getattr(settings, "TRUST_X_FORWARDED_FOR", False) and forwarded:
        # Our proxy appends the address it saw; entries left of it are whatever the client claimed.
        last = _NOT_IN_AN_ADDRESS.sub("", forwarded.split(",")[-1])[:64]
        if last:
            return last
    return _NOT_IN_AN_ADDRESS.sub("", remote or "")[:64] or UNKNOWN_IP


def client_ip_from_scope(scope: dict) -> str:
    client = scope.get("client")
    remote = str(client[0]) if client else None
    forwarded = None
    for name, value in scope.get("headers", []):
        if name.lower() == b"x-forwarded-for":
            forwarded = value.decode("latin-1")
    return _pick_ip(remote, forwarded)


def client_ip_from_request(request) -> str:
    return _pick_ip(request.META.get("REMOTE_ADDR"), request.META.get("HTTP_X_FORWARDED_FOR"))


def client_network(ip: str) -> str:
    """The key a per-client limit counts under: the IPv4 address, or the IPv6 address's /64."""
    try:
        address = ipaddress.ip_address(ip)
    except ValueError:
        return ip
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.IPv6Network((address, IPV6_NETWORK_PREFIX), strict=False))
    return str(address)
