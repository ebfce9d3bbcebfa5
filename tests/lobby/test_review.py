"""Signals from the game to the review queue (reports, the crowd) and voiding a question after review."""

import asyncio

import pytest
from channels.db import database_sync_to_async
from django.contrib.auth import get_user_model

from lobby import events, services
from lobby.models import Answer, Player, Room, VoidedQuestion
from lobby.reads.selectors import room_snapshot
from lobby.rules import machine
from lobby.rules.machine import Action
from lobby.services import review
from review.models import Flag
from review.services import review_label
from tests.factories import AnswerFactory, FlagFactory, PlayerFactory
from tests.support.communicator import Client

# SAMPLE (tests/factories.py): Q1 marks option 1 of 4, Q2 option 2 of 4, Q3 option 0 of 3.


def _playing(make_room, nicknames, timer_seconds=20):
    created = make_room(timer_seconds=timer_seconds)
    players = [PlayerFactory(room=created.room, nickname=name) for name in nicknames]
    services.game_act(room_id=created.room.pk, action=Action.START)
    return created, players


def _answer_and_close(room_id: int, index: int, picks: dict[Player, tuple[int, int]]) -> None:
    """Record answers with exact timings (option, elapsed ms), then close the question."""
    for player, (option, elapsed_ms) in picks.items():
        AnswerFactory(player=player, question_index=index, option=option, elapsed_ms=elapsed_ms)
    assert services.question_close(room_id=room_id, question_index=index)


def _next_question(room_id: int) -> None:
    services.game_act(room_id=room_id, action=Action.NEXT)
    services.game_act(room_id=room_id, action=Action.NEXT)


# -- the crowd -------------------------------------------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize(
    "picks, flagged",
    [
        ([0, 0, 0, 1, 1], True),  # 3 of 5 on option A; B is marked
        ([0, 0, 0, 1], False),  # 4 answers are too few
        ([0, 0, 3, 1, 1], False),  # 40 % on A
        ([1, 1, 1, 0, 0], False),  # the crowd agrees
    ],
)
def test_the_crowd_flag_after_a_question_closes(make_room, django_capture_on_commit_callbacks, picks, flagged):
    names = ["Ann", "Ben", "Cy", "Dee", "Eve"][: len(picks)]
    with django_capture_on_commit_callbacks(execute=True):
        created, players = _playing(make_room, names)
        for player, option in zip(players, picks, strict=True):
            services.answer_submit(player_id=player.pk, question_index=0, option=option)
    assert Room.objects.get(pk=created.room.pk).phase == "reveal"  # the last answer closed it
    flags = list(Flag.objects.filter(kind="crowd"))
    assert len(flags) == (1 if flagged else 0)
    if flagged:
        flag = flags[0]
        assert flag.room_code == created.room.code
        assert flag.detail["answers"] == 5 and flag.detail["option"] == 0 and flag.detail["share"] == 0.6
        assert flag.detail["distribution"] == [3, 2, 0, 0] and flag.detail["marked"] == 1


@pytest.mark.django_db
def test_the_crowd_is_judged_once_per_reveal(make_room, django_capture_on_commit_callbacks, monkeypatch):
    """The reveal's snapshot shows the host the crowd's verdict; the crowd flag takes that same verdict."""
    verdicts = []

    def judged(**kwargs):
        verdicts.append(machine_crowd_verdict(**kwargs))
        return verdicts[-1]

    machine_crowd_verdict = machine.crowd_verdict
    monkeypatch.setattr(machine, "crowd_verdict", judged)
    broadcast = events.room_broadcast
    sent = []

    def room_broadcast(*, room_id):
        picture = broadcast(room_id=room_id)
        sent.append(picture.snapshot)  # what every socket of the room was sent
        return picture

    monkeypatch.setattr(events, "room_broadcast", room_broadcast)
    created, players = _playing(make_room, ["Ann", "Ben", "Cy", "Dee", "Eve"])
    for player, option in zip(players[:4], [0, 0, 0, 1], strict=True):
        services.answer_submit(player_id=player.pk, question_index=0, option=option)
    with django_capture_on_commit_callbacks(execute=True):  # the last answer closes the question
        services.answer_submit(player_id=players[4].pk, question_index=0, option=1)
    [reveal] = [snapshot for snapshot in sent if snapshot["phase"] == "reveal"]
    assert reveal["phase"] == "reveal" and reveal["reveal"]["crowd_disagrees"] is True
    assert Flag.objects.get(kind="crowd").detail["share"] == 0.6
    assert len(verdicts) == 1


@pytest.mark.django_db
def test_a_failing_crowd_check_does_not_break_the_close(
    make_room, django_capture_on_commit_callbacks, monkeypatch, caplog, settings
):
    def broken(**kwargs):
        raise RuntimeError("boom")

    broadcast = events.room_broadcast
    sent = []

    def room_broadcast(*, room_id):
        picture = broadcast(room_id=room_id)
        sent.append(picture.snapshot["phase"])  # what every socket of the room was sent
        return picture

    # One answer on a wrong option is a disagreeing crowd here, so the check goes on to record its flag: it fails.
    settings.CROWD_MIN_ANSWERS = 1
    monkeypatch.setattr(review, "flag_record", broken)
    monkeypatch.setattr(events, "room_broadcast", room_broadcast)
    with django_capture_on_commit_callbacks(execute=True):
        created, [ann] = _playing(make_room, ["Ann"])
        services.answer_submit(player_id=ann.pk, question_index=0, option=0)
    assert Room.objects.get(pk=created.room.pk).phase == "reveal"
    assert sent[-1] == "reveal"  # the players saw the reveal
    assert "crowd check for room" in caplog.text and "boom" in caplog.text


@pytest.mark.django_db
def test_the_crowd_check_counts_the_players_still_in_the_room(make_room):
    """The same counts as the reveal's distribution: a removed player's answer is not the crowd's."""
    created, players = _playing(make_room, ["Ann", "Ben", "Cy", "Dee", "Eve", "Fay", "Gus", "Hal"])
    for player, option in zip(players, [0, 0, 0, 0, 0, 1, 2, 3], strict=True):  # 5 of 8 on A; B is marked
        services.answer_submit(player_id=player.pk, question_index=0, option=option)
    for removed in players[:3]:
        services.player_remove(room_id=created.room.pk, player_id=removed.pk)
    # 5 answers left, 2 of them on A (40 %): no flag, though 5 of the 8 chose A.
    assert not review.crowd_check(room_id=created.room.pk, question_index=0)


# -- reports ----------------------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_a_report_creates_a_flag_with_the_words(make_room):
    created, [ann, ben] = _playing(make_room, ["Ann", "Ben"])
    _answer_and_close(created.room.pk, 0, {ann: (1, 0)})
    services.report_create(player_id=ben.pk, question_index=0, text="  2 + 2 is\nfour, not   three ")
    flag = Flag.objects.get(kind="reported")
    question = created.room.round.entries.get(position=0).question
    assert flag.question == question and flag.room_code == created.room.code
    assert flag.detail["player"] == "Ben" and flag.detail["text"] == "2 + 2 is four, not three"
    assert flag.detail["question_index"] == 0


# -- voiding ----------------------------------------------------------------------------------------------------


def _three_questions_played(make_room):
    """Ann is right three times (1000, 1100, 1200); Bo is wrong, then right twice (750, 1100)."""
    created, [ann, bo] = _playing(make_room, ["Ann", "Bo"], timer_seconds=20)
    room_id = created.room.pk
    _answer_and_close(room_id, 0, {ann: (1, 0), bo: (0, 0)})
    _next_question(room_id)
    _answer_and_close(room_id, 1, {ann: (2, 0), bo: (2, 10_000)})
    _next_question(room_id)
    _answer_and_close(room_id, 2, {ann: (0, 0), bo: (0, 0)})
    ann.refresh_from_db()
    bo.refresh_from_db()
    assert (ann.score, bo.score) == (3300, 1850)
    return created, ann, bo


@pytest.mark.django_db
def test_voiding_removes_the_points_and_recomputes_streaks(make_room):
    created, ann, bo = _three_questions_played(make_room)
    room_id = created.room.pk
    question = created.room.round.entries.get(position=1).question
    reviewer = get_user_model().objects.create_user("rev", is_staff=True)
    with pytest.raises(review.VoidRefused, match="defective"):
        review.question_void(room_id=room_id, question_index=1, reviewer=reviewer)
    review_label(question=question, label="defective", reviewer=reviewer)

    voided = review.question_void(room_id=room_id, question_index=1, reviewer=reviewer)

    assert voided.removed_points == {str(ann.pk): 1100, str(bo.pk): 750}
    ann.refresh_from_db()
    bo.refresh_from_db()
    # Question 2 no longer counts, and it no longer extends a streak: Ann 1000 + (1000 + 100), Bo 1000.
    assert (ann.score, bo.score) == (2100, 1000)
    points = dict(Answer.objects.filter(room_id=room_id, player=ann).values_list("question_index", "points"))
    assert points == {0: 1000, 1: 0, 2: 1100}
    assert Answer.objects.filter(room_id=room_id, question_index=1).count() == 2  # the answers stay
    snapshot = room_snapshot(room_id=room_id)
    assert snapshot["voided"] == [1]
    assert {p["nickname"]: (p["score"], p["rank"]) for p in snapshot["players"]} == {
        "Ann": (2100, 1),
        "Bo": (1000, 2),
    }
    with pytest.raises(review.VoidRefused, match="already voided"):
        review.question_void(room_id=room_id, question_index=1, reviewer=reviewer)


@pytest.mark.django_db
def test_only_a_closed_question_can_be_voided(make_room):
    created, [ann] = _playing(make_room, ["Ann"])
    question = created.room.round.entries.get(position=0).question
    review_label(question=question, label="defective")
    with pytest.raises(review.VoidRefused, match="played and closed"):
        review.question_void(room_id=created.room.pk, question_index=0)
    _answer_and_close(created.room.pk, 0, {ann: (1, 0)})
    _next_question(created.room.pk)
    # A voided first question: the streak restarts, so the next right answer earns no bonus.
    review.question_void(room_id=created.room.pk, question_index=0)
    _answer_and_close(created.room.pk, 1, {ann: (2, 0)})
    ann.refresh_from_db()
    assert ann.score == 1000 and ann.streak == 1
    assert room_snapshot(room_id=created.room.pk)["voided"] == [0]


def _standings(room_id: int) -> tuple[dict, dict]:
    players = {p.nickname: (p.score, p.streak) for p in Player.objects.filter(room_id=room_id)}
    points = {(a.player.nickname, a.question_index): a.points for a in Answer.objects.filter(room_id=room_id)}
    return players, points


@pytest.mark.django_db
def test_play_and_recompute_give_the_same_scores_when_a_voided_question_broke_a_streak(make_room):
    """Ann's wrong answer to question 2 breaks her streak; the host voids it and the game goes on. The scores
    play gives question 3 are the ones a recompute of the whole game gives."""
    created, [ann, bo] = _playing(make_room, ["Ann", "Bo"], timer_seconds=20)
    room_id = created.room.pk
    _answer_and_close(room_id, 0, {ann: (1, 0), bo: (1, 10_000)})
    _next_question(room_id)
    _answer_and_close(room_id, 1, {ann: (0, 0), bo: (2, 0)})
    assert Player.objects.get(pk=ann.pk).streak == 0
    review.question_void(room_id=room_id, question_index=1, by_host=True)
    assert Player.objects.get(pk=ann.pk).streak == 1  # as if question 2 had not been asked
    _next_question(room_id)
    _answer_and_close(room_id, 2, {ann: (0, 4_000), bo: (0, 0)})
    played = _standings(room_id)

    review.scores_recompute(Room.objects.get(pk=room_id))

    assert _standings(room_id) == played
    # Ann 1000 + 0 + (900 + 100); Bo 750 + 0 + (1000 + 100): question 2's points are gone, its streaks kept.
    assert played[0] == {"Ann": (2000, 2), "Bo": (1850, 2)}


@pytest.mark.django_db
def test_the_review_admin_voids_a_question_for_a_room(make_room, admin_client):
    created, ann, bo = _three_questions_played(make_room)
    question = created.room.round.entries.get(position=1).question
    FlagFactory(question=question, kind="reported", room_code=created.room.code, detail={"text": "wrong"})
    url = f"/admin/review/reviewitem/{question.pk}/void/"
    page = admin_client.get(url).content.decode()
    assert "Label the question defective before voiding it" in page
    change = admin_client.get(f"/admin/review/reviewitem/{question.pk}/change/").content.decode()
    assert created.room.code in change and "C ✓: 2" in change  # how the room's players answered
    review_label(question=question, label="defective")
    assert f"Void in {created.room.code}" in admin_client.get(url).content.decode()
    # Only a room and index that really played this question.
    admin_client.post(url, {"room": created.room.code, "question_index": "0"})
    assert not VoidedQuestion.objects.exists()
    response = admin_client.post(url, {"room": created.room.code, "question_index": "1"})
    assert response.status_code == 302
    voided = VoidedQuestion.objects.get()
    assert voided.question == question and voided.reviewer.username == "admin"
    ann.refresh_from_db()
    assert ann.score == 2100
    in_room = admin_client.get(f"/admin/review/reviewitem/?room={created.room.code}").content.decode()
    assert f'value="{question.pk}"' in in_room


# -- end to end through the consumers ---------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
async def test_report_and_crowd_flag_through_the_consumers(room, sockets, host_socket):
    created = await room()
    code = created.room.code
    host = await host_socket(created)
    players = [(await sockets.join(code, name))[0] for name in ["Ann", "Ben", "Cy", "Dee", "Eve"]]
    await host.send(type="start")
    for client, option in zip(players, [0, 0, 0, 1, 1], strict=True):
        await client.state(phase="question")
        await client.send(type="answer", question=0, option=option)
        await client.until(lambda m: m["type"] == "answered")
    await host.state(phase="reveal")
    await players[0].send(type="report", question=0, text="B is wrong, it is A")
    assert (await players[0].until(lambda m: m["type"] == "reported"))["question"] == 0
    # The crowd check runs just after the reveal is sent, beside the report: wait for both.
    for _ in range(100):
        flags = await database_sync_to_async(lambda: list(Flag.objects.order_by("kind").values("kind", "detail")))()
        if len(flags) == 2:
            break
        await asyncio.sleep(0.05)
    assert [f["kind"] for f in flags] == ["crowd", "reported"]
    assert flags[1]["detail"]["text"] == "B is wrong, it is A" and flags[1]["detail"]["player"] == "Ann"
    for client in players:
        await client.__aexit__()


@pytest.mark.django_db(transaction=True)
async def test_a_connected_player_receives_the_corrected_leaderboard(make_room):
    created, ann, bo = await database_sync_to_async(_three_questions_played)(make_room)
    token = services.player_token(room_code=created.room.code, player_id=bo.pk)
    async with Client(created.room.code) as phone:
        await phone.send(type="resume", token=token)
        before = await phone.state(phase="reveal")
        assert before["you"]["score"] == 1850 and before["voided"] == []

        def label_and_void():
            question = created.room.round.entries.get(position=1).question
            review_label(question=question, label="defective")
            review.question_void(room_id=created.room.pk, question_index=1)

        await database_sync_to_async(label_and_void)()
        after = await phone.until(lambda m: m["type"] == "state" and m.get("voided") == [1])
        assert after["you"]["score"] == 1000
        assert {p["nickname"]: p["score"] for p in after["top"]} == {"Ann": 2100, "Bo": 1000}
        assert after["seq"] > before["seq"]
