"""How many bytes a request's body may have, decided from its path before any of it is read.

A view that takes uploads declares its own cap with `@request_body_cap(...)` (a function of no arguments, read on
each request, so a test's settings apply); every other route gets REQUEST_BODY_MAX_BYTES. config/body_cap.py
enforces the cap: from `Content-Length` before the body is read, and while it streams in.
"""

from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.urls import Resolver404, resolve

# A form's own fields, multipart boundaries and headers, on top of the file or text it carries.
FORM_ALLOWANCE = 64 * 1024
CAP_ATTRIBUTE = "request_body_max_bytes"


def request_body_cap(max_bytes: Callable[[], int]) -> Callable[[Any], Any]:
    """Mark a view with the largest body it takes. Put it closest to the function: `functools.wraps` in the
    decorators above copies the mark to each wrapper."""

    def mark(view: Any) -> Any:
        setattr(view, CAP_ATTRIBUTE, max_bytes)
        return view

    return mark


def default_cap() -> int:
    return int(settings.REQUEST_BODY_MAX_BYTES)


def cap_for_path(path_info: str) -> int:
    try:
        match = resolve(path_info)
    except Resolver404:
        return default_cap()
    getter = getattr(match.func, CAP_ATTRIBUTE, None)
    return int(getter()) if getter is not None else default_cap()


def megabytes_text(size: int) -> str:
    """A cap as a person reads it: "6", "2.5", "0.1"."""
    return f"{size / (1024 * 1024):.1f}".removesuffix(".0")
