"""The host's frame names what the host screen draws, never every player, and stays under 64 KB at any room size;
the host's players page lists every player, a page at a time, and answers for them."""

import json
import re

import pytest
from django.test import Client

from lobby import services
from lobby.models import Player
from lobby.reads.host_view import HOST_ASKED, HOST_NEWEST, HOST_TOP, PAGE_SIZE, host_frame
from lobby.reads.selectors import Standings, room_picture, room_snapshot
from lobby.tokens import HOST_TOKENS

FRAME_LIMIT = 64 * 1024


def _size(frame: dict) -> int:
    return len(json.dumps(frame).encode())


def _common(reveal: bool) -> dict:
    """A common part at its largest: a question of 300 characters and six options of 120."""
    common = {
        "type": "state",
        "seq": 7,
        "code": "ABCDEF",
        "phase": "reveal" if reveal else "question",
        "question_index": 2,
        "player_count": 10_000,
        "question": {"index": 2, "kind": "single", "text": "Q" * 300, "options": ["O" * 120] * 6},
        "top": [],
    }
    if reveal:
        common["reveal"] = {"distribution": [1_666] * 6, "correct_index": 1, "explanation": "E" * 500, "source": ""}
    return common


def _standings(n: int, nickname, *, reveal: bool) -> Standings:
    # Ranks the reverse of joining: the top of the board is the first to join, the newest are the last.
    players = {i: (nickname(i), 10 * (n - i), i) for i in range(1, n + 1)}
    return Standings(
        players=players,
        results={i: ("T" * 100, i % 2 == 0, 500) for i in players} if reveal else None,
        extra_time={i: 200 for i in players if i % 3 == 0},
        time_requests=tuple(i for i in players if i % 7 == 0),
    )


@pytest.mark.parametrize("reveal", [False, True])
def test_the_host_frame_of_10000_names_the_requests_the_top_and_the_newest_and_counts_everyone(reveal):
    standings = _standings(10_000, lambda i: f"player-{i:05d}-abcdefg", reveal=reveal)
    frame = host_frame(_common(reveal), standings)
    assert _size(frame) < FRAME_LIMIT
    named = {line["id"] for line in frame["players"]}
    oldest_requests = [i for i in range(1, 10_001) if i % 7 == 0][:HOST_ASKED]
    assert frame["time_requests"][:HOST_ASKED] == oldest_requests  # and the newest who ask, named anyway
    assert set(range(1, HOST_TOP + 1)) <= named  # the top of the board
    assert set(range(10_001 - HOST_NEWEST, 10_001)) <= named  # the newest arrivals
    assert len(named) < 100
    assert frame["time_request_count"] == len(standings.time_requests) == 1_428
    assert frame["extra_time_count"] == len(standings.extra_time) == 3_333
    assert all(frame["extra_time"][str(i)] == 200 for i in named if i % 3 == 0)
    assert [line["id"] for line in frame["players"]] == sorted(named)  # join order: the lobby's newest last
    line = next(line for line in frame["players"] if line["id"] == 1)
    assert line == {"id": 1, "nickname": "player-00001-abcdefg", "score": 99_990, "rank": 1}
    if reveal:
        assert set(frame["reveal"]["results"]) == {str(i) for i in named}
        assert frame["reveal"]["results"]["2"] == {"option": "T" * 100, "correct": True, "points": 500}
        assert frame["reveal"]["distribution"] == [1_666] * 6


def test_the_host_frame_stays_under_64_kb_with_the_longest_nicknames_and_answers():
    # 200 astral code points a nickname (20 clusters of 10), each sent as a 12-byte JSON escape.
    standings = _standings(10_000, lambda i: f"{i}" + "\U0001f469" * 195, reveal=True)
    frame = host_frame(_common(True), standings)
    assert _size(frame) < FRAME_LIMIT
    # The oldest requests come first: those the budget holds are named before anyone else.
    assert frame["time_requests"][:5] == [7, 14, 21, 28, 35]
    assert frame["time_request_count"] == 1_428


@pytest.mark.django_db
def test_a_small_room_names_every_player(make_room):
    room = make_room().room
    for n in range(12):
        services.player_join(code=room.code, nickname=f"Kid {n}", asks_more_time=n == 3)
    frame = room_snapshot(room_id=room.pk)
    assert [line["nickname"] for line in frame["players"]] == [f"Kid {n}" for n in range(12)]
    assert frame["time_request_count"] == 1 and len(frame["time_requests"]) == 1


def _bulk_players(room, n: int, *, start: int = 0) -> None:
    Player.objects.bulk_create(
        Player(
            room=room,
            nickname=f"Pupil {i:04d}",
            nickname_key=f"pupil {i:04d}",
            score=(i * 37) % 1000,
            asks_more_time=i % 50 == 7,
        )
        for i in range(start, start + n)
    )


def _host_client(room, token) -> Client:
    client = Client()
    session = client.session
    session[HOST_TOKENS] = {room.code: token}
    session.save()
    return client


@pytest.mark.django_db
def test_the_host_pages_through_every_player_with_their_rank(make_room):
    created = make_room()
    room = created.room
    _bulk_players(room, 2 * PAGE_SIZE + 30)
    picture = room_picture(room_id=room.pk)
    client = _host_client(room, created.host_token)
    seen, url = [], f"/host/{room.code}/players/"
    while url:
        page = client.get(url)
        assert page.status_code == 200 and page["Cache-Control"] == "no-store"
        text = page.content.decode()
        rows = re.findall(r'<td class="nick">(Pupil \d{4})</td>\s*<td>(\d+)</td>\s*<td>(\d+)</td>', text)
        assert 0 < len(rows) <= PAGE_SIZE
        seen += rows
        following = re.search(r'rel="next" href="(\?page=\d+)"', text)
        url = f"/host/{room.code}/players/{following.group(1)}" if following else None
    assert "Page 3 of 3" in text
    assert [name for name, _, _ in seen] == [f"Pupil {i:04d}" for i in range(2 * PAGE_SIZE + 30)]  # join order
    by_name = {nickname: (score, rank) for nickname, score, rank in picture.standings.players.values()}
    assert all(by_name[name] == (int(score), int(rank)) for name, score, rank in seen)


@pytest.mark.django_db
def test_the_host_answers_a_request_and_removes_a_player_from_the_players_page(make_room):
    created = make_room()
    room = created.room
    _bulk_players(room, 120)
    asking = Player.objects.get(room=room, nickname="Pupil 0107")
    leaving = Player.objects.get(room=room, nickname="Pupil 0110")
    client = _host_client(room, created.host_token)
    page = client.get(f"/host/{room.code}/players/?page=2").content.decode()
    assert "Give ×2: Pupil 0107" in page and "asks for more time" in page
    answered = client.post(f"/host/{room.code}/players/?page=2", {"player": asking.pk, "action": "200"})
    assert answered.status_code == 302 and answered["Location"].endswith("?page=2")
    asking.refresh_from_db()
    assert asking.time_percent == 200 and not asking.asks_more_time
    client.post(f"/host/{room.code}/players/?page=2", {"player": leaving.pk, "action": "remove"})
    page = client.get(f"/host/{room.code}/players/?page=2").content.decode()
    assert "Pupil 0110" not in page and "Pupil 0109" in page
    assert room_snapshot(room_id=room.pk)["player_count"] == 119
    # Bad input is refused with a message, and changes nothing.
    refused = client.post(f"/host/{room.code}/players/", {"player": "x", "action": "200"}, follow=True)
    assert "Choose a player and what to do." in refused.content.decode()
    refused = client.post(f"/host/{room.code}/players/", {"player": asking.pk, "action": "999"}, follow=True)
    assert "Choose the time" in refused.content.decode()


@pytest.mark.django_db
def test_only_the_host_sees_the_players_page(make_room):
    room = make_room().room
    _bulk_players(room, 3)
    page = Client().get(f"/host/{room.code}/players/")
    assert "Pupil 0001" not in page.content.decode()
    assert Client().post(f"/host/{room.code}/players/", {"player": 1, "action": "remove"}).status_code != 302
