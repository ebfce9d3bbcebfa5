"""The phone's and homework's pages show one phase at a time: each phase has its own h1 (axe's
page-has-heading-one), and the verdict, a status line, is not a heading (a heading may not take role="status":
axe's aria-allowed-role)."""

from datetime import timedelta
from html.parser import HTMLParser

import pytest
from django.test import Client
from django.utils import timezone

from lobby.homework import services as homework

HEADINGS = {"h1", "h2", "h3", "h4", "h5", "h6"}


class _Phases(HTMLParser):
    """Each `section.phase` of a page: its id and the tags inside it; and every tag with role="status"."""

    def __init__(self):
        super().__init__()
        self.phases: dict[str, list[str]] = {}
        self.statuses: list[tuple[str, str]] = []
        self._open: list[tuple[str, str | None]] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if attrs.get("role") == "status":
            self.statuses.append((tag, attrs.get("id", "")))
        if tag == "section" and "phase" in (attrs.get("class") or "").split():
            self.phases[attrs["id"]] = []
            self._open.append((tag, attrs["id"]))
            return
        for _, phase in self._open:
            if phase:
                self.phases[phase].append(tag)
        if tag not in {"input", "br", "img", "meta", "link"}:
            self._open.append((tag, None))

    def handle_endtag(self, tag):
        while self._open:
            if self._open.pop()[0] == tag:
                break


def _read(html: str) -> _Phases:
    parsed = _Phases()
    parsed.feed(html)
    return parsed


@pytest.mark.django_db
def test_every_phase_of_the_phone_and_homework_pages_has_an_h1_and_no_heading_is_a_status(make_room, make_round):
    room = make_room().room
    assignment = homework.assignment_create(
        round_id=make_round().pk, deadline=timezone.now() + timedelta(days=1), reveal="each", timer_seconds=20
    )
    for url in (f"/play/{room.code}/", f"/hw/{assignment.room.code}/"):
        response = Client().get(url)
        assert response.status_code == 200, url
        page = _read(response.content.decode())
        assert {"phase-reveal", "phase-verdict"} & set(page.phases), url
        for phase, tags in page.phases.items():
            assert tags.count("h1") == 1, (url, phase, tags)
        assert ("p", "verdict") in page.statuses, url
        assert not [status for status in page.statuses if status[0] in HEADINGS], (url, page.statuses)
