"""The review queue's extension point: what an app above review (the lobby) adds to the queue's admin.

An app registers one `ReviewPanel` (lobby/admin.py does, when the admin loads it); `ReviewItemAdmin` asks the
registered panels for the "how players answered" block, the room filter, extra pages and buttons. Nothing here
depends on the order of INSTALLED_APPS: the admin reads the panels when it builds a page or its URLs.
"""

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from django.contrib import admin
from django.http import HttpRequest
from django.urls import URLPattern
from django.utils.safestring import SafeString


@dataclass(frozen=True)
class ReviewPanel:
    name: str
    # The "how players answered" block of a question's page: (model admin, question) -> HTML.
    answers: Callable[[Any, Any], SafeString] | None = None
    # Replaces the queue's room filter (review's own one knows only the rooms a question was flagged in).
    room_filter: type[admin.SimpleListFilter] | None = None
    # Extra admin pages under the queue: (model admin) -> URL patterns.
    urls: Callable[[Any], list[URLPattern]] | None = None
    # Extra buttons on a question's page for a reviewer: (model admin, request, question) -> [(title, url)].
    tool_links: Callable[[Any, HttpRequest, Any], list[tuple[str, str]]] | None = field(default=None)


_panels: dict[str, ReviewPanel] = {}


def review_panel_register(panel: ReviewPanel) -> None:
    """Register (or, under the same name, replace) a panel."""
    _panels[panel.name] = panel


def review_panels() -> list[ReviewPanel]:
    return list(_panels.values())
