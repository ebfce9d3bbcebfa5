"""Homework (issue 30): an assignment played alone by each player on their own clock before a deadline. The
rules are called directly (lobby/homework/services.py) with their clock replaced; the players' JSON endpoints
are exercised through Django's test client with CSRF checks on."""

import csv
import io
import json
import re
from datetime import UTC, datetime, timedelta

import httpx
import pytest
from django.conf import settings
from django.test import Client
from django.utils import timezone

from lobby.exceptions import AlreadyAnswered, NicknameTaken, NotNow, TooLate
from lobby.homework import services as homework
from lobby.models import Answer, Player, Room
from lobby.pages.audit import room_audit
from lobby.reads.selectors import results_csv
from lobby.rules.machine import Phase, answer_score
from lobby.services.retention import retention_cutoff, rooms_past_retention
from tests.support.servers import start_asgi

T0 = datetime(2030, 5, 1, 12, 0, tzinfo=UTC)
DEADLINE = T0 + timedelta(days=2)
# tests/factories.py SAMPLE, in the round's order (option_seed ""): the right option of each question.
RIGHT = [1, 2, 0]
WRONG = [0, 0, 1]


class Clock:
    def __init__(self, at: datetime):
        self.at = at

    def __call__(self) -> datetime:
        return self.at

    def advance(self, **delta) -> None:
        self.at += timedelta(**delta)


@pytest.fixture
def clock(monkeypatch):
    clock = Clock(T0)
    monkeypatch.setattr(homework, "now", clock)
    return clock


def _assignment(make_round, *, reveal="each", timer_seconds=20, deadline=DEADLINE):
    created = homework.assignment_create(
        round_id=make_round().pk, deadline=deadline, reveal=reveal, timer_seconds=timer_seconds
    )
    Room.objects.filter(pk=created.room.pk).update(option_seed="")  # the round's order: RIGHT names the options
    created.room.refresh_from_db()
    return created


def _play(player_id: int, clock: Clock, index: int, option: int, *, after_s: float):
    homework.homework_open(player_id=player_id, question_index=index)
    clock.advance(seconds=after_s)
    return homework.homework_answer(player_id=player_id, question_index=index, given={"option": option})


@pytest.mark.django_db
def test_an_assignment_is_a_finished_room_no_live_game_plays(make_round, clock):
    created = _assignment(make_round)
    room = Room.objects.get(pk=created.room.pk)
    assert room.phase == Phase.FINISHED and room.question_index == room.question_count - 1
    assert room.assignment.deadline == DEADLINE


@pytest.mark.django_db
def test_two_players_at_different_times_each_on_their_own_clock(make_round, clock):
    created = _assignment(make_round)
    ann, _token = homework.homework_join(code=created.room.code, nickname="Ann")
    ann_reply = _play(ann.pk, clock, 0, RIGHT[0], after_s=5)
    clock.advance(hours=20)  # Ben comes the next day: his clock starts when he opens the question
    ben, _token = homework.homework_join(code=created.room.code, nickname="Ben")
    ben_reply = _play(ben.pk, clock, 0, RIGHT[0], after_s=15)

    assert (
        ann_reply["verdict"]["points"] == answer_score(streak=0, correct=True, elapsed_ms=5000, window_ms=20000).points
    )  # 875
    assert (
        ben_reply["verdict"]["points"] == answer_score(streak=0, correct=True, elapsed_ms=15000, window_ms=20000).points
    )  # 625
    assert ann_reply["verdict"]["points"] == 875 and ben_reply["verdict"]["points"] == 625
    # The streak bonus counts as in a live game: Ann's second right answer in a row.
    second = _play(ann.pk, clock, 1, RIGHT[1], after_s=0)
    assert second["verdict"]["points"] == 1000 + 100
    assert Player.objects.get(pk=ann.pk).score == 875 + 1100


@pytest.mark.django_db
def test_an_answer_after_the_players_own_deadline_is_refused_and_scores_nothing(make_round, clock):
    created = _assignment(make_round)
    ann, _token = homework.homework_join(code=created.room.code, nickname="Ann")
    slow, _token = homework.homework_join(code=created.room.code, nickname="Slow")
    Player.objects.filter(pk=slow.pk).update(time_percent=200)  # extra time x2: 40 s
    homework.homework_open(player_id=ann.pk, question_index=0)
    homework.homework_open(player_id=slow.pk, question_index=0)
    clock.advance(seconds=20.5)
    with pytest.raises(TooLate):
        homework.homework_answer(player_id=ann.pk, question_index=0, given={"option": RIGHT[0]})
    # The one with extra time still answers, scored over their own 40 s.
    reply = homework.homework_answer(player_id=slow.pk, question_index=0, given={"option": RIGHT[0]})
    assert reply["verdict"]["points"] == answer_score(streak=0, correct=True, elapsed_ms=20500, window_ms=40000).points
    assert not Answer.objects.filter(player_id=ann.pk).exists()
    state = homework.homework_state(player_id=ann.pk)
    assert state["question_index"] == 1 and "question" not in state and state["score"] == 0
    with pytest.raises(AlreadyAnswered):  # one attempt: the question is behind her
        homework.homework_answer(player_id=ann.pk, question_index=0, given={"option": RIGHT[0]})


@pytest.mark.django_db
def test_the_own_deadline_never_passes_the_assignments(make_round, clock):
    created = _assignment(make_round, deadline=T0 + timedelta(seconds=10))
    ann, _token = homework.homework_join(code=created.room.code, nickname="Ann")
    question = homework.homework_open(player_id=ann.pk, question_index=0)
    assert question["remaining_ms"] == 10000
    clock.advance(seconds=11)
    with pytest.raises(TooLate):
        homework.homework_answer(player_id=ann.pk, question_index=0, given={"option": RIGHT[0]})


@pytest.mark.django_db
def test_after_the_assignments_deadline_no_one_starts(make_round, clock):
    created = _assignment(make_round)
    ann, _token = homework.homework_join(code=created.room.code, nickname="Ann")
    _play(ann.pk, clock, 0, RIGHT[0], after_s=1)
    clock.at = DEADLINE + timedelta(seconds=1)
    with pytest.raises(NotNow, match="deadline"):
        homework.homework_open(player_id=ann.pk, question_index=1)
    with pytest.raises(NotNow, match="deadline"):
        homework.homework_join(code=created.room.code, nickname="Late")
    assert homework.homework_state(player_id=ann.pk)["open"] is False


@pytest.mark.django_db
def test_one_attempt_and_the_live_nickname_rules(make_round, clock):
    created = _assignment(make_round)
    ann, _token = homework.homework_join(code=created.room.code, nickname="Ann")
    with pytest.raises(NicknameTaken):
        homework.homework_join(code=created.room.code, nickname="ann")
    _play(ann.pk, clock, 0, RIGHT[0], after_s=1)
    with pytest.raises(AlreadyAnswered):
        homework.homework_answer(player_id=ann.pk, question_index=0, given={"option": WRONG[0]})
    with pytest.raises(NotNow):
        homework.homework_open(player_id=ann.pk, question_index=0)


@pytest.mark.django_db
def test_resume_after_a_reload_keeps_the_questions_clock(make_round, clock):
    created = _assignment(make_round)
    ann, _token = homework.homework_join(code=created.room.code, nickname="Ann")
    _play(ann.pk, clock, 0, RIGHT[0], after_s=2)
    homework.homework_open(player_id=ann.pk, question_index=1)
    clock.advance(seconds=7)
    # A reload: the page asks for its state, and opening the same question again does not restart its clock.
    state = homework.homework_state(player_id=ann.pk)
    assert state["question_index"] == 1 and state["question"]["remaining_ms"] == 13000
    assert homework.homework_open(player_id=ann.pk, question_index=1)["remaining_ms"] == 13000
    reply = homework.homework_answer(player_id=ann.pk, question_index=1, given={"option": RIGHT[1]})
    assert reply["verdict"]["points"] == answer_score(streak=1, correct=True, elapsed_ms=7000, window_ms=20000).points


def _api(client, code, path, body):
    token = client.cookies["csrftoken"].value
    return client.post(
        f"/hw/{code}/api/{path}", json.dumps(body), content_type="application/json", HTTP_X_CSRFTOKEN=token
    )


@pytest.mark.django_db
def test_reveal_after_the_deadline_keeps_the_answers_out_of_every_reply(make_round, clock):
    created = _assignment(make_round, reveal="deadline")
    code = created.room.code
    client = Client(enforce_csrf_checks=True)
    replies = [client.get(f"/hw/{code}/")]
    assert replies[0].status_code == 200
    joined = _api(client, code, "join", {"nickname": "Ann"})
    replies.append(joined)
    token = joined.json()["token"]
    for index in range(3):
        replies.append(_api(client, code, "start", {"token": token, "question": index}))
        clock.advance(seconds=3)
        replies.append(_api(client, code, "answer", {"token": token, "question": index, "option": RIGHT[index]}))
        replies.append(_api(client, code, "state", {"token": token}))
    assert all(reply.status_code == 200 for reply in replies), [r.content for r in replies]
    texts = [reply.content.decode() for reply in replies]
    for secret in ("Two and two make four", "Mercury orbits", "formula of water", '"points"', '"score"', '"answer"'):
        assert not any(secret in text for text in texts), secret
    assert Player.objects.get(nickname="Ann").score > 0  # scored all the same
    # Once the deadline is past, the same player sees them.
    clock.at = DEADLINE + timedelta(seconds=1)
    after = _api(client, code, "state", {"token": token}).json()
    assert after["score"] == Player.objects.get(nickname="Ann").score
    assert after["answers"][0]["explanation"] == "Two and two make four."


@pytest.mark.django_db
def test_every_post_needs_the_csrf_token(make_round, clock):
    created = _assignment(make_round)
    client = Client(enforce_csrf_checks=True)
    client.get(f"/hw/{created.room.code}/")
    refused = client.post(
        f"/hw/{created.room.code}/api/join", json.dumps({"nickname": "Ann"}), content_type="application/json"
    )
    assert refused.status_code == 403
    assert _api(client, created.room.code, "join", {"nickname": "Ann"}).status_code == 200


@pytest.mark.django_db
def test_the_per_answer_reply_is_small(make_round, clock):
    created = _assignment(make_round)
    client = Client(enforce_csrf_checks=True)
    client.get(f"/hw/{created.room.code}/")
    token = _api(client, created.room.code, "join", {"nickname": "Ann"}).json()["token"]
    _api(client, created.room.code, "start", {"token": token, "question": 0})
    reply = _api(client, created.room.code, "answer", {"token": token, "question": 0, "option": RIGHT[0]})
    assert set(reply.json()) == {"next", "finished", "given", "verdict", "score"}
    assert len(reply.content) < 400


@pytest.mark.django_db
def test_results_csv_and_audit_equal_the_stored_answers(make_round, clock):
    created = _assignment(make_round)
    ann, _token = homework.homework_join(code=created.room.code, nickname="Ann")
    ben, _token = homework.homework_join(code=created.room.code, nickname="Ben")
    for index in range(3):
        _play(ann.pk, clock, index, RIGHT[index], after_s=2)
    _play(ben.pk, clock, 0, WRONG[0], after_s=1)
    homework.homework_open(player_id=ben.pk, question_index=1)
    clock.advance(seconds=30)  # Ben lets question 2 run out
    _play(ben.pk, clock, 2, RIGHT[2], after_s=4)

    room = Room.objects.get(pk=created.room.pk)
    stored = {(a.player.nickname, a.question_index): a.points for a in Answer.objects.filter(room=room)}
    assert set(stored) == {("Ann", 0), ("Ann", 1), ("Ann", 2), ("Ben", 0), ("Ben", 2)}
    rows = list(csv.reader(io.StringIO(results_csv(room=room))))
    by_name = {row[1]: row for row in rows[1:]}
    for (name, index), points in stored.items():
        assert re.search(rf"\({'right' if points else 'wrong'}, {points}\)$", by_name[name][3 + index])
    assert by_name["Ben"][4] == ""  # the question he let run out
    assert (
        int(by_name["Ann"][2])
        == Player.objects.get(pk=ann.pk).score
        == sum(points for (name, _i), points in stored.items() if name == "Ann")
    )
    trail = room_audit(room)
    audited = {
        (answer["player"], question["position"]): answer["points"]
        for question in trail["questions"]
        for answer in question["answers"]
    }
    assert audited == stored


needs_servers = pytest.mark.skipif(
    not settings.REDIS_URL or settings.DATABASES["default"]["ENGINE"].endswith("sqlite3"),
    reason="a real server process restart plays on PostgreSQL and Redis",
)


@needs_servers
@pytest.mark.django_db(transaction=True)
def test_a_player_resumes_after_the_server_process_is_killed_and_started_again(make_round, tmp_path):
    """Nothing of a player's place is in a process's memory: the server dies mid-question (SIGKILL), a new one
    starts, and the player is on the same question with the same clock, and can answer it."""
    created = homework.assignment_create(
        round_id=make_round().pk, deadline=timezone.now() + timedelta(days=1), reveal="each", timer_seconds=120
    )
    Room.objects.filter(pk=created.room.pk).update(option_seed="")
    code = created.room.code

    def client_of(server):
        http = httpx.Client(base_url=f"http://127.0.0.1:{server.port}", timeout=20)
        http.get(f"/hw/{code}/").raise_for_status()
        return http

    def post(http, path, body):
        headers = {"X-CSRFToken": http.cookies["csrftoken"]}
        return http.post(f"/hw/{code}/api/{path}", json=body, headers=headers)

    server = start_asgi("asgi", log_path=tmp_path / "asgi-1.log")
    try:
        http = client_of(server)
        token = post(http, "join", {"nickname": "Ann"}).json()["token"]
        assert post(http, "start", {"token": token, "question": 0}).status_code == 200
        assert post(http, "answer", {"token": token, "question": 0, "option": RIGHT[0]}).status_code == 200
        opened = post(http, "start", {"token": token, "question": 1}).json()
    finally:
        server.kill()
    server = start_asgi("asgi", log_path=tmp_path / "asgi-2.log")
    try:
        http = client_of(server)
        state = post(http, "state", {"token": token}).json()
        assert state["question_index"] == 1 and state["question"]["text"] == opened["text"]
        assert 0 < state["question"]["remaining_ms"] <= opened["remaining_ms"]  # the same clock, still running
        reply = post(http, "answer", {"token": token, "question": 1, "option": RIGHT[1]}).json()
        assert reply["verdict"]["correct"] is True and reply["next"] == 2
    finally:
        server.stop()
    player = Player.objects.get(room__code=code)
    assert reply["score"] == player.score == sum(Answer.objects.filter(player=player).values_list("points", flat=True))


@pytest.mark.django_db
def test_retention_keeps_an_assignment_until_its_deadline_is_past_the_retention_period(make_round, settings):
    created = homework.assignment_create(
        round_id=make_round().pk, deadline=timezone.now() + timedelta(days=60), reveal="each", timer_seconds=20
    )
    Room.objects.filter(pk=created.room.pk).update(created_at=timezone.now() - timedelta(days=400))
    soon = retention_cutoff(now=timezone.now())
    later = retention_cutoff(now=timezone.now() + timedelta(days=60 + settings.RETENTION_DAYS + 1))
    assert not rooms_past_retention(cutoff=soon).filter(pk=created.room.pk).exists()
    assert rooms_past_retention(cutoff=later).filter(pk=created.room.pk).exists()


@pytest.mark.django_db
def test_the_host_counts_as_started_the_players_who_answered_not_those_who_only_joined(make_round, clock):
    created = _assignment(make_round)
    ann, _token = homework.homework_join(code=created.room.code, nickname="Ann")
    homework.homework_join(code=created.room.code, nickname="Bo")  # joins, never answers
    cy, _token = homework.homework_join(code=created.room.code, nickname="Cy")
    homework.homework_open(player_id=cy.pk, question_index=0)  # opens a question, answers nothing yet
    overview = homework.homework_overview(room=created.room)
    assert (overview["started"], overview["finished"]) == (0, 0)
    _play(ann.pk, clock, 0, RIGHT[0], after_s=2)
    overview = homework.homework_overview(room=created.room)
    assert (overview["started"], overview["finished"]) == (1, 0)
    assert len(overview["players"]) == 3


@pytest.mark.django_db
def test_homework_steps_over_slides_it_has_no_big_screen_for(clock):
    """A slide asks nothing and is shown on a big screen: homework skips it, first and in the middle, and a round
    ending on one is finished by its last question's answer."""
    from quiz.importing import parse_json
    from tests.factories import RoundFactory

    slide = {"kind": "slide", "question": "Welcome", "explanation": "Three questions follow."}
    single = {"question": "Capital of France?", "options": ["Paris", "Lyon"], "correct": "A"}
    steps = [slide, single, slide, single, slide]
    round_ = RoundFactory(questions=parse_json(json.dumps({"title": "Slides", "questions": steps})).questions)
    created = homework.assignment_create(round_id=round_.pk, deadline=DEADLINE, reveal="each", timer_seconds=20)
    Room.objects.filter(pk=created.room.pk).update(option_seed="")
    player, _token = homework.homework_join(code=created.room.code, nickname="Ann")
    assert homework.homework_state(player_id=player.pk)["question_index"] == 1
    assert _play(player.pk, clock, 1, 0, after_s=2)["next"] == 3
    last = _play(player.pk, clock, 3, 0, after_s=2)
    assert last["finished"] and last["next"] == 5
    assert Answer.objects.filter(player=player).count() == 2  # no answer stands for a slide


@needs_servers
@pytest.mark.django_db(transaction=True)
def test_many_players_hold_no_more_database_connections_than_a_few_and_a_refusal_speaks_their_language(
    make_round, tmp_path
):
    """Each homework request used to take a connection of its own: opened, closed, and the page's left open with
    its thread until PostgreSQL refused new clients. Now a server's connections do not grow with its players, and
    a refusal made on the homework threads still speaks the player's page's language."""
    from django.db import connection

    created = homework.assignment_create(
        round_id=make_round().pk, deadline=timezone.now() + timedelta(days=1), reveal="each", timer_seconds=120
    )
    code = created.room.code

    def connections() -> int:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )
            return cursor.fetchone()[0]

    def play(http, nickname):
        http.get(f"/hw/{code}/").raise_for_status()
        headers = {"X-CSRFToken": http.cookies["csrftoken"]}
        token = http.post(f"/hw/{code}/api/join", json={"nickname": nickname}, headers=headers).json()["token"]
        assert http.post(f"/hw/{code}/api/start", json={"token": token, "question": 0}, headers=headers).is_success
        return http.post(f"/hw/{code}/api/answer", json={"token": token, "question": 2, "option": 0}, headers=headers)

    server = start_asgi("asgi", log_path=tmp_path / "asgi.log")
    try:
        base = f"http://127.0.0.1:{server.port}"
        with httpx.Client(base_url=base, timeout=20) as http:
            play(http, "First")
        before = connections()  # the server's own (the game clock's...) and a homework thread's
        for number in range(44):
            with httpx.Client(base_url=base, timeout=20) as http:
                play(http, f"Player{number}")
        assert connections() <= before + settings.HOMEWORK_DB_THREADS - 1
        with httpx.Client(base_url=base, timeout=20, headers={"Accept-Language": "de"}) as http:
            refused = play(http, "Grete")
        assert refused.status_code == 400 and refused.json()["error"] == "Diese Frage ist nicht offen."
    finally:
        server.stop()
    assert Player.objects.filter(room__code=code).count() == 46
