"""Teams (issue 30): a team's score is the mean of its members' points, so team size does not decide it; team talk
holds the clock after the options appear and answers wait for it; the live board, the results page and the team
CSV are the stored answers' figures; named teams are picked on joining and switched in the lobby over the socket;
automatic teams stay balanced. Through the real services, consumers and database (PostgreSQL + Redis in CI)."""

import csv
import io
from datetime import timedelta

import pytest
from channels.db import database_sync_to_async

from lobby import services
from lobby.exceptions import AnswerRefused, NotNow
from lobby.models import Answer, Player, Room, Team, VoidedQuestion
from lobby.reads import team_board
from lobby.reads.selectors import player_frame, room_picture, room_snapshot
from lobby.rules import machine, teams
from lobby.rules.machine import Action
from lobby.services import review
from lobby.services.common import bump
from quiz.models import Round

RIGHT = (1, 2, 0)  # SAMPLE's right options, shown in the round's order (option_seed "")
WRONG = (0, 0, 1)


def _named_room(make_round, names="Owls\nFoxes", **settings):
    created = services.room_create(
        round_id=make_round().pk, timer_seconds=20, option_seed="", teams_mode="named", team_names=names, **settings
    )
    return created, list(Team.objects.filter(room=created.room).order_by("order"))


def _answer(player, index, option, room):
    services.answer_submit(
        player_id=player.pk, question_index=index, option=option, received_at=room.question_started_at
    )


def _play(room_id, answers: list[dict]):
    """Plays each question: `answers[i]` maps a player to the option they give (absent: no answer), then closes
    it and moves on through the leaderboard."""
    for index, given in enumerate(answers):
        if index == 0:
            services.game_act(room_id=room_id, action=Action.START)
        room = Room.objects.get(pk=room_id)
        for player, option in given.items():
            _answer(player, index, option, room)
        services.question_close(room_id=room_id, question_index=index)
        services.game_act(room_id=room_id, action=Action.NEXT)  # the leaderboard
        if index + 1 < len(answers):
            services.game_act(room_id=room_id, action=Action.NEXT)


def test_the_mean_counts_a_member_who_did_not_answer_as_0_and_ranks_ties_together():
    scored = teams.team_scores(
        members={1: [10], 2: [20, 21, 22], 3: []},
        questions=[0, 1],
        points={(10, 0): 900, (20, 0): 1000, (21, 0): 1000, (22, 0): 700, (20, 1): 600},
    )
    by_team = {score.team: score for score in scored}
    assert by_team[1].per_question == {0: 900, 1: 0}
    assert by_team[2].per_question == {0: 900, 1: 200}  # (1000 + 1000 + 700) / 3; 600 / 3 for the two who missed
    assert (by_team[1].total, by_team[2].total, by_team[3].total) == (900, 1100, 0)
    assert [score.rank for score in scored] == [2, 1, 3]
    tied = teams.team_scores(members={1: [10], 2: [20, 21]}, questions=[0], points={(10, 0): 500, (20, 0): 1000})
    assert [score.rank for score in tied] == [1, 1]
    # 1000 / 3 and 333: shown alike, so placed alike.
    shown_alike = teams.team_scores(
        members={1: [10, 11, 12], 2: [20]}, questions=[0], points={(10, 0): 1000, (20, 0): 333}
    )
    assert [round(score.total) for score in shown_alike] == [333, 333] and [s.rank for s in shown_alike] == [1, 1]


@pytest.mark.django_db
def test_uneven_teams_score_by_the_mean_of_their_members_not_their_sum(make_round):
    created, (owls, foxes) = _named_room(make_round)
    code = created.room.code
    ann = services.player_join(code=code, nickname="Ann", team=owls.pk).player
    ben, cat, dan = (
        services.player_join(code=code, nickname=name, team=foxes.pk).player for name in ("Ben", "Cat", "Dan")
    )
    # Q1: everyone right at once (1000 each) but Dan; Q2: Ann and Ben right.
    _play(
        created.room.pk, [{ann: RIGHT[0], ben: RIGHT[0], cat: RIGHT[0], dan: WRONG[0]}, {ann: RIGHT[1], ben: RIGHT[1]}]
    )
    points = dict(Answer.objects.filter(room=created.room, question_index=1).values_list("player__nickname", "points"))
    assert points == {"Ann": 1100, "Ben": 1100}  # right at once, and the streak bonus of a second right answer
    board = {line.display_name: line for line in team_board.room_board(Room.objects.get(pk=created.room.pk))}
    # Owls: 1000 + 1100, one member. Foxes: 2000 / 3 + 1100 / 3 with three: their sum (3100) would have won.
    assert board["Owls"].shown_score == 2100 and board["Owls"].rank == 1
    assert board["Foxes"].shown_score == 1033 and board["Foxes"].rank == 2
    assert (board["Owls"].size, board["Foxes"].size) == (1, 3)


@pytest.mark.django_db
def test_team_talk_holds_the_clock_after_the_options_and_refuses_answers_until_it_starts(make_round):
    created = services.room_create(
        round_id=make_round().pk,
        timer_seconds=20,
        option_seed="",
        reading_seconds=10,
        teams_mode="auto",
        team_count=2,
        team_talk_seconds=5,
    )
    ann, ben = (services.player_join(code=created.room.code, nickname=name).player for name in ("Ann", "Ben"))
    services.game_act(room_id=created.room.pk, action=Action.START)
    room = Room.objects.get(pk=created.room.pk)
    snapshot = room_snapshot(room_id=room.pk)
    # The options appear after the reading (10 s) and the clock 5 s after them, both counted from the same moment
    # (on a machine slow enough to take 10 s from the start to this read, the reading would already be over).
    assert 0 < snapshot["reading_ms"] <= 10_000
    assert snapshot["talk_ms"] - snapshot["reading_ms"] in (5_000, 5_001)
    assert snapshot["remaining_ms"] == 20_000  # the whole timer is still ahead, whatever the time now
    assert room.deadline - room.question_started_at == timedelta(seconds=20)

    clock = room.question_started_at
    with pytest.raises(AnswerRefused, match="Team talk"):
        services.answer_submit(
            player_id=ann.pk, question_index=0, option=RIGHT[0], received_at=clock - timedelta(seconds=1)
        )
    with pytest.raises(AnswerRefused, match="still being read"):
        services.answer_submit(
            player_id=ann.pk, question_index=0, option=RIGHT[0], received_at=clock - timedelta(seconds=6)
        )
    assert not Answer.objects.filter(room=room).exists()
    # Once the clock runs, the speed bonus counts from it: 4 s into 20 s is 900, as without team talk.
    services.answer_submit(
        player_id=ann.pk, question_index=0, option=RIGHT[0], received_at=clock + timedelta(seconds=4)
    )
    services.answer_submit(player_id=ben.pk, question_index=0, option=RIGHT[0], received_at=clock)
    assert dict(Answer.objects.filter(room=room).values_list("player__nickname", "points")) == {"Ann": 900, "Ben": 1000}

    # Without teams there is no team talk, whatever was asked.
    plain = services.room_create(round_id=make_round().pk, timer_seconds=20, option_seed="", team_talk_seconds=5)
    assert Room.objects.get(pk=plain.room.pk).team_talk_seconds == 0
    for bad in (-1, 31, True, "5"):
        with pytest.raises(NotNow, match="0 to 30 seconds"):
            services.room_create(
                round_id=make_round().pk, timer_seconds=20, teams_mode="auto", team_count=2, team_talk_seconds=bad
            )


@pytest.mark.django_db
def test_the_live_board_the_results_page_and_the_team_csv_are_the_stored_answers(client, make_round):
    created, (owls, foxes, _bats) = _named_room(make_round, names="Owls\nFoxes\nBats")
    code = created.room.code
    session = client.session
    session["host_tokens"] = {code: created.host_token}
    session.save()
    ann = services.player_join(code=code, nickname="Ann", team=owls.pk).player
    bea = services.player_join(code=code, nickname="Bea", team=owls.pk).player
    ben, cat = (services.player_join(code=code, nickname=name, team=foxes.pk).player for name in ("Ben", "Cat"))
    services.game_act(room_id=created.room.pk, action=Action.START)
    room = Room.objects.get(pk=created.room.pk)
    # Different speeds, so the means are not round numbers.
    for player, option, seconds in ((ann, RIGHT[0], 3), (bea, WRONG[0], 1), (ben, RIGHT[0], 7), (cat, RIGHT[0], 11)):
        services.answer_submit(
            player_id=player.pk,
            question_index=0,
            option=option,
            received_at=room.question_started_at + timedelta(seconds=seconds),
        )
    services.game_act(room_id=room.pk, action=Action.NEXT)
    services.game_act(room_id=room.pk, action=Action.NEXT)
    room = Room.objects.get(pk=room.pk)
    _answer(ann, 1, RIGHT[1], room)
    _answer(cat, 1, RIGHT[1], room)
    services.question_close(room_id=room.pk, question_index=1)
    review.question_void(room_id=room.pk, question_index=1, by_host=True)  # taken out of every team's score
    services.game_act(room_id=room.pk, action=Action.NEXT)
    services.game_act(room_id=room.pk, action=Action.NEXT)
    room = Room.objects.get(pk=room.pk)
    _answer(bea, 2, RIGHT[2], room)
    services.question_close(room_id=room.pk, question_index=2)

    # What the stored answers say, computed here from the rows alone.
    stored = {(a.player_id, a.question_index): a.points for a in Answer.objects.filter(room=room)}
    members = {owls.pk: [ann.pk, bea.pk], foxes.pk: [ben.pk, cat.pk]}
    expected = {
        team: sum(sum(stored.get((p, q), 0) for p in players) / len(players) for q in (0, 2))
        for team, players in members.items()
    }
    assert expected[owls.pk] != expected[foxes.pk]
    removed = VoidedQuestion.objects.get(room=room, question_index=1).removed_points
    assert removed[str(ann.pk)] > 0 and stored[(ann.pk, 1)] == 0  # the void took points Ann had won

    live = {team["id"]: team for team in room_snapshot(room_id=room.pk)["teams"]}
    assert {team: live[team]["score"] for team in members} == {team: round(value) for team, value in expected.items()}
    bats = next(team for team in live.values() if team["name"] == "Bats")
    assert bats["size"] == 0 and bats["score"] == 0

    rows = list(csv.DictReader(io.StringIO(client.get(f"/host/{code}/teams.csv").content.decode())))
    by_name = {row["team"]: row for row in rows}
    assert float(by_name["Owls"]["score"]) == pytest.approx(expected[owls.pk], abs=0.05)
    assert float(by_name["Foxes"]["score"]) == pytest.approx(expected[foxes.pk], abs=0.05)
    assert by_name["Owls"]["Q2"] == "" and by_name["Owls"]["players"] == "Ann | Bea"  # the voided one counts nothing
    assert [row["rank"] for row in rows] == ["1", "2", "3"]

    players = {
        row["nickname"]: row
        for row in csv.DictReader(io.StringIO(client.get(f"/host/{code}/results.csv").content.decode()))
    }
    assert (players["Ann"]["team"], players["Ben"]["team"]) == ("Owls", "Foxes")  # each player's team, beside

    page = client.get(f"/host/{code}/results/").content.decode()
    assert 'id="team-standings"' in page and "<td>Owls</td>" in page
    assert f'<td class="num">{round(expected[owls.pk])}</td>' in page


@pytest.mark.django_db
def test_the_team_csv_is_for_the_host_of_a_game_with_teams_only(client, make_round):
    created, _ = _named_room(make_round)
    assert client.get(f"/host/{created.room.code}/teams.csv").status_code == 403  # not this browser's game
    plain = services.room_create(round_id=make_round().pk, timer_seconds=20)
    session = client.session
    session["host_tokens"] = {plain.room.code: plain.host_token}
    session.save()
    assert client.get(f"/host/{plain.room.code}/teams.csv").status_code == 404


@pytest.mark.django_db
def test_automatic_teams_put_each_new_player_in_the_smallest(make_round):
    created = services.room_create(round_id=make_round().pk, timer_seconds=20, teams_mode="auto", team_count=3)
    code = created.room.code
    order = list(Team.objects.filter(room=created.room).order_by("order").values_list("pk", flat=True))
    assert Team.objects.filter(room=created.room, name="").count() == 3  # named by colour, on each screen
    for name in ("Ann", "Ben", "Cat", "Dan"):
        services.player_join(code=code, nickname=name)
    # A batch of joins arriving together is balanced too, counting its own.
    results = services.players_join([services.JoinIn(code=code, nickname=name) for name in ("Eve", "Fay", "Gus")])
    assert all(isinstance(result, services.Joined) for result in results)

    def sizes():
        counted = [Player.objects.filter(room=created.room, removed=False, team_id=team).count() for team in order]
        return counted

    assert sizes() == [3, 2, 2]
    # Someone leaves the second team: the next player fills that gap, not the first team.
    leaving = Player.objects.filter(room=created.room, team_id=order[1]).first()
    services.player_remove(room_id=created.room.pk, player_id=leaving.pk)
    services.player_join(code=code, nickname="Hal")
    assert sizes() == [3, 2, 2] and Player.objects.get(nickname="Hal").team_id == order[1]
    # The phone sees its team and its place in it; the host, each player's team.
    picture = room_picture(room_id=created.room.pk)
    hal = Player.objects.get(nickname="Hal")
    frame = player_frame(picture.snapshot, picture.standings, player_id=hal.pk, answered={})
    assert frame["you"]["team"] == order[1] and frame["you"]["team_place"] == 1
    assert [team["colour"] for team in frame["teams"]] == ["red", "blue", "green"]
    teams_shown = {line["nickname"]: line["team"] for line in room_snapshot(room_id=created.room.pk)["players"]}
    assert teams_shown["Hal"] == order[1]
    with pytest.raises(NotNow, match="2 to 8 teams"):
        services.room_create(round_id=make_round().pk, timer_seconds=20, teams_mode="auto", team_count=9)


@pytest.mark.django_db
def test_named_teams_need_two_to_eight_distinct_names_and_a_pick_on_joining(make_round):
    for names, message in (
        ("Owls", "2 to 8 teams"),
        ("\n".join(f"Team {n}" for n in range(9)), "2 to 8 teams"),
        ("Owls\nowls", "same name"),
        ("Owls\n" + "x" * 31, "at most 30"),
    ):
        with pytest.raises(NotNow, match=message):
            _named_room(make_round, names=names)
    created, (owls, _) = _named_room(make_round, names="  Owls  \n\n Night   Foxes ")
    assert [team.name for team in Team.objects.filter(room=created.room)] == ["Owls", "Night Foxes"]
    other, (other_owls, _) = _named_room(make_round)
    for team in (None, "1", other_owls.pk):
        with pytest.raises(NotNow, match="Pick your team"):
            services.player_join(code=created.room.code, nickname="Ann", team=team)
    assert services.player_join(code=created.room.code, nickname="Ann", team=owls.pk).player.team_id == owls.pk


@pytest.mark.django_db
def test_the_host_chooses_teams_on_the_home_page_and_a_bad_list_is_said(client, make_round):
    round_ = make_round(title="Team night")
    Round.objects.filter(pk=round_.pk).update(owner_key="browser-1")
    session = client.session
    session["owner_key"] = "browser-1"
    session.save()
    page = client.get("/").content.decode()
    assert 'name="teams_mode"' in page and 'name="team_names"' in page and 'name="team_talk_seconds"' in page
    form = {"source": f"round:{round_.pk}", "timer_seconds": 20, "teams_mode": "named", "team_names": "Solo"}
    refused = client.post("/", form)
    assert refused.status_code == 200 and "Name 2 to 8 teams" in refused.content.decode()
    made = client.post("/", {**form, "team_names": "Owls\nFoxes", "team_talk_seconds": 10})
    room = Room.objects.get(round=round_)
    assert made.status_code == 302 and (room.teams_mode, room.team_talk_seconds) == ("named", 10)
    assert [team.name for team in room.teams.all()] == ["Owls", "Foxes"]
    play = client.get(f"/play/{room.code}/").content.decode()
    assert 'id="join-team"' in play and ">Foxes</option>" in play


@pytest.mark.django_db(transaction=True)
async def test_a_player_switches_team_over_the_socket_in_the_lobby_only(make_round, sockets, host_socket):
    created, (owls, foxes) = await database_sync_to_async(_named_room)(make_round)
    _, (other_owls, _) = await database_sync_to_async(_named_room)(make_round)
    host = await host_socket(created)
    assert [team["name"] for team in host.snapshot["teams"]] == ["Owls", "Foxes"]

    ann = await sockets.open(type(host)(created.room.code))
    await ann.send(type="join", nickname="Ann")
    assert "Pick your team" in (await ann.error())["message"]
    await ann.send(type="join", nickname="Ann", team=owls.pk)
    await ann.until(lambda m: m["type"] == "joined")
    state = await ann.until(lambda m: m["type"] == "state" and m["you"]["team"] == owls.pk)
    assert state["you"]["team_place"] == 1

    await ann.send(type="team", team=foxes.pk)
    state = await ann.until(lambda m: m["type"] == "state" and m["you"]["team"] == foxes.pk)
    assert {team["name"]: team["size"] for team in state["teams"]} == {"Owls": 0, "Foxes": 1}
    frame = await host.until(lambda m: m["type"] == "state" and m["players"] and m["players"][0]["team"] == foxes.pk)
    assert frame["players"][0]["nickname"] == "Ann"

    await ann.send(type="team", team=other_owls.pk)  # another room's team
    assert (await ann.error())["message"] == "That team is not in this game."
    await ann.send(type="team", team="Owls")
    assert (await ann.error())["code"] == "bad_message"
    await host.send(type="team", team=owls.pk)
    assert (await host.error())["message"] == "Join the game first."

    await host.send(type="start", phase="lobby", index=-1)
    await ann.until(lambda m: m["type"] == "state" and m["phase"] == "question")
    await ann.send(type="team", team=owls.pk)
    assert (await ann.error())["message"] == "Teams can only be changed before the game starts."
    team = await database_sync_to_async(lambda: Player.objects.get(nickname="Ann").team_id)()
    assert team == foxes.pk


@pytest.mark.django_db(transaction=True)
async def test_the_host_sets_team_talk_in_the_lobby_over_the_socket(make_round, sockets, host_socket):
    created, (owls, _) = await database_sync_to_async(_named_room)(make_round)
    host = await host_socket(created)
    assert host.snapshot["team_talk_seconds"] == 0  # the default: off
    await host.send(type="team_talk", seconds=15)
    assert (await host.state(team_talk_seconds=15))["teams_mode"] == "named"
    for bad in (31, -1):
        await host.send(type="team_talk", seconds=bad)
        assert "0 to 30 seconds" in (await host.error())["message"]
    await host.send(type="team_talk", seconds="15")
    assert (await host.error())["code"] == "bad_message"
    await database_sync_to_async(services.player_join)(code=created.room.code, nickname="Ann", team=owls.pk)
    await host.send(type="start", phase="lobby", index=-1)
    await host.state(phase="question")
    await host.send(type="team_talk", seconds=0)
    assert (await host.error())["message"] == "Team talk can only be changed before the game starts."
    room = await database_sync_to_async(Room.objects.get)(pk=created.room.pk)
    assert room.team_talk_seconds == 15 and room.deadline - room.question_started_at == timedelta(seconds=20)
    plain = await database_sync_to_async(services.room_create)(
        round_id=(await database_sync_to_async(make_round)()).pk, timer_seconds=20
    )
    with pytest.raises(NotNow, match="games with teams"):
        await database_sync_to_async(services.room_set_team_talk_seconds)(room_id=plain.room.pk, team_talk_seconds=5)


@pytest.mark.django_db
def test_a_room_without_teams_sends_no_team_fields(make_round):
    created = services.room_create(round_id=make_round().pk, timer_seconds=20)
    services.player_join(code=created.room.code, nickname="Ann")
    bump(created.room.pk)
    snapshot = room_snapshot(room_id=created.room.pk)
    assert "teams" not in snapshot and "team" not in snapshot["players"][0]
    with pytest.raises(NotNow, match="not picked by the players"):
        services.player_team_set(room_id=created.room.pk, player_id=snapshot["players"][0]["id"], team_id=1)
    assert machine.closed_questions(Room.objects.get(pk=created.room.pk).position) == range(0)
