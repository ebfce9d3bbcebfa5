"""The game's reads. A room's picture has two parts: the common part (`Picture.snapshot`), the same for every
reader and of a size that does not grow with the room (phase, question, counts, the top places), and the
standings (every player's score and rank, and at a reveal every player's result). A player's frame is the
common part and their own line of the standings (`player_frame`); the host's is the common part and the lines
its screen draws (lobby/reads/host_view.py `host_frame`, what `room_snapshot` returns), bounded too. Before the
reveal neither holds anything that says which option is correct.

Answers are stored with the round's option index; what a room's screens get (options, the marked one, the
distribution, each player's choice) is in the order that room shows them (`machine.option_order`)."""

import heapq
import io
import json
from dataclasses import dataclass, field
from datetime import timedelta
from json.encoder import encode_basestring_ascii

from django.utils import timezone

from core.spreadsheet import csv_writer
from lobby.models import Answer, Player, Room
from lobby.reads import picture_rows, team_board
from lobby.reads.host_view import host_frame
from lobby.rules import machine, ways
from lobby.rules.machine import Phase
from lobby.rules.showing import question_numbering, shown_order
from quiz.kinds import kind_of
from quiz.selectors import round_question_facts, round_question_list
from verifier import conf


def crowd_rule() -> machine.CrowdRule:
    """The crowd signal's thresholds, read at call time so a deployment or a test can tune them."""
    return machine.CrowdRule(min_answers=conf.crowd_min_answers(), majority=conf.crowd_majority())


# The leaderboard's places every reader gets (a phone's podium); the host's big screen draws its top 10 from
# its full list. They are most of a player's frame: 3, not 10, halves it.
TOP_PLACES = 3


@dataclass(frozen=True)
class Standings:
    """Every active player's line, read with the room's picture: id -> (nickname, score, rank), in join order;
    during a reveal, id -> (option as the room showed it, correct, points) for those who answered. Extra time:
    id -> percent of the timer for those above x1, and the ids whose "I need more time" waits for the host."""

    players: dict[int, tuple[str, int, int]] = field(default_factory=dict)
    results: dict[int, tuple[int, bool, int]] | None = None
    extra_time: dict[int, int] = field(default_factory=dict)
    time_requests: tuple[int, ...] = ()
    # In a room with teams: id -> (team id, place within the team) for the players in a team.
    teams: dict[int, tuple[int, int]] = field(default_factory=dict)
    # For the host's check badge (`host_frame` words it in the host's language): the round's check counts, which
    # grow while a round written as it plays passes its questions.
    check_counts: dict = field(default_factory=dict)
    # During a reveal, the players' words the host hid (folded): the host's frame leaves them out of the results it
    # lists, as the reveal leaves them out of its cloud and common answers. A player's own frame keeps their own.
    hidden: tuple[str, ...] = ()


@dataclass(frozen=True)
class Picture:
    snapshot: dict  # the common part: the same for every reader, bounded in size whatever the room's size
    standings: Standings = field(default_factory=Standings)
    # During a reveal, the crowd's verdict on the question shown: the reveal's crowd check judges this one.
    crowd: machine.CrowdVerdict | None = None
    # ... and the answers per option in the round's order (the snapshot's is in the room's), which it records.
    distribution: list[int] | None = None


def room_snapshot(*, room_id: int) -> dict:
    """The host's frame of the room's picture now (lobby/reads/host_view.py)."""
    picture = room_picture(room_id=room_id)
    return host_frame(picture.snapshot, picture.standings)


def player_frame(common: dict, standings: Standings, *, player_id: int, answered: dict[int, int]) -> dict | None:
    """A player's frame: the common part and their own line (`you`, with their own time: who else has extra
    time is the host's to know); None if they are no longer in the room. Its size does not depend on how many
    play. (The sockets send it as text: `lobby.realtime.frames.player_text(common, player_you(...))`.)"""
    you = player_you(common, standings, player_id=player_id, answered=answered)
    return None if you is None else {**common, "you": you}


def player_you(common: dict, standings: Standings, *, player_id: int, answered: dict[int, int]) -> dict | None:
    """A player's own part of a frame (`you`); None if they are no longer in the room."""
    line = standings.players.get(player_id)
    if line is None:
        return None
    nickname, score, rank = line
    index = common["question_index"]
    you = {"id": player_id, "nickname": nickname, "score": score, "rank": rank}
    you.update(answered=index in answered, option=answered.get(index))
    if "teams" in common:
        team, place = standings.teams.get(player_id, (None, 0))
        you.update(team=team, team_place=place)
    if "reveal" in common:
        result = (standings.results or {}).get(player_id)
        you["result"] = None if result is None else {"option": result[0], "correct": result[1], "points": result[2]}
    you.update(
        _own_time(
            common,
            percent=standings.extra_time.get(player_id, 100),
            asks_more_time=player_id in standings.time_requests,
        )
    )
    return you


def player_you_texts(common: dict, standings: Standings) -> tuple[dict[int, str], dict[int, str]]:
    """Every player's `you` of one broadcast as JSON text, in one pass over the standings: (id -> the text up to
    `"answered": `, id -> the text after `"option": ...`). Between them goes the one thing a socket knows and the
    standings do not: whether it answered this question, and what. `head + 'false, "option": null' + tail` is
    exactly `json.dumps(player_you(common, standings, player_id=..., answered={}))` (tests/lobby/test_frames.py):
    a socket's frame then costs two look-ups and a concatenation, not a dict built and encoded (issue 47). Two
    dicts of strings, no tuple a player: the garbage collector does not track them, so a process keeping the texts
    of a few broadcasts of 2,000 gives its collector nothing more to walk (a full collection walks every socket's
    objects, and stops the fan-out while it does)."""
    teams = standings.teams if "teams" in common else None
    results = (standings.results or {}) if "reveal" in common else None
    own_times: dict[tuple[int, bool], str] = {}  # a room has a few kinds of time, not one a player

    def own_time(percent: int, asks: bool) -> str:
        key = (percent, asks)
        text = own_times.get(key)
        if text is None:
            mine = _own_time(common, percent=percent, asks_more_time=asks)
            text = own_times[key] = ", " + json.dumps(mine)[1:]
        return text

    extra_time, requests = standings.extra_time, set(standings.time_requests)
    heads, tails = {}, {}
    for player_id, (nickname, score, rank) in standings.players.items():
        head = (
            f'{{"id": {_json(player_id)}, "nickname": {_json(nickname)}, "score": {_json(score)}, '
            f'"rank": {_json(rank)}, "answered": '
        )
        tail = ""
        if teams is not None:
            team, place = teams.get(player_id, (None, 0))
            tail += f', "team": {_json(team)}, "team_place": {_json(place)}'
        if results is not None:
            result = results.get(player_id)
            tail += ', "result": ' + (
                "null"
                if result is None
                else f'{{"option": {_json(result[0])}, "correct": {_json(result[1])}, "points": {_json(result[2])}}}'
            )
        tail += own_time(extra_time.get(player_id, 100), player_id in requests)
        heads[player_id], tails[player_id] = head, tail
    return heads, tails


def _json(value) -> str:
    """`json.dumps(value)` for one value, cheaper for the plain ones a `you` is made of."""
    kind = type(value)
    if kind is int:
        return int.__repr__(value)
    if kind is str:
        return encode_basestring_ascii(value)
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    return json.dumps(value)


def room_picture(*, room_id: int) -> Picture:
    """The picture, built once per broadcast in the sending process and once per change in each other process
    (lobby/reads/standings.py): three or four queries read from a cursor, rows as tuples. Its CPU time holds the GIL
    while the server's event loop waits to fan out (bench/game_path.py). Ranks: one sort, O(N log N)."""
    room = picture_rows.room_row(room_id)
    players = picture_rows.player_rows(room_id)
    ranks = machine.rank([(player_id, score) for player_id, _, score, _, _, _ in players])
    lines = {player_id: (nickname, score, ranks[player_id]) for player_id, nickname, score, _, _, _ in players}
    # The first few by (rank, id) without sorting the whole room again (the same as sorted(...)[:TOP_PLACES]).
    top = heapq.nsmallest(TOP_PLACES, lines.items(), key=lambda item: (item[1][2], item[0]))
    closing_percent = max((percent for _, _, _, percent, _, _ in players), default=100)
    # For the host only (a player's frame carries its own entry, see `player_frame`): who has extra time (only
    # those above x1) and who asked for it when joining.
    extra_time = {player_id: percent for player_id, _, _, percent, _, _ in players if percent != 100}
    time_requests = tuple(player_id for player_id, _, _, _, asks, _ in players if asks)
    phase, index = room["phase"], room["question_index"]
    snapshot: dict = {
        "type": "state",
        "seq": room["seq"],
        "code": room["code"],
        "phase": phase,
        "title": room["round__title"],
        "check_status": room["round__check_status"],
        "question_count": room["question_count"],
        "question_index": index,
        "timer_seconds": room["timer_seconds"],
        "locked": room["locked"],
        "player_count": len(players),
        "top": [
            {"id": player_id, "nickname": nickname, "score": score, "rank": rank}
            for player_id, (nickname, score, rank) in top
        ],
        # Questions taken out of the scores after review (their points no longer count).
        "voided": picture_rows.voided_indexes(room_id),
    }
    voided = snapshot["voided"]
    # What each way to play adds to every reader's picture (its entry in lobby/rules/ways.py), row and board.
    snapshot.update(ways.picture(room))
    added, team_places = ways.board_picture(room, players, voided)
    snapshot.update(added)
    crowd = None
    if phase in (Phase.QUESTION, Phase.REVEAL):
        question = round_question_facts(round_id=room["round_id"], position=index)
        kind = kind_of(question)
        order = shown_order(question, seed=room["option_seed"], question_index=index)
        # This question's timer at x1: its own seconds when it carries them, the room's otherwise (the screens
        # draw their countdowns' bars from it).
        timer_ms = machine.question_timer_ms(room_seconds=room["timer_seconds"], question_seconds=question.seconds)
        snapshot["timer_seconds"] = timer_ms // 1000
        # What its kind shows while it is open (quiz/kinds): never what is right.
        snapshot["question"] = {
            "index": index,
            "kind": kind.name,
            "text": question.text,
            **kind.public(question, order),
        }
        if question.image:
            snapshot["question"]["image"] = question.image
        snapshot["numbering"] = question_numbering(round_id=room["round_id"], index=index, count=room["question_count"])
        answers = picture_rows.answer_rows(room_id, index)
        snapshot["answered_count"] = len(answers)
        if phase == Phase.QUESTION and not kind.asks:
            snapshot.update(reading_ms=0, remaining_ms=0)
        elif phase == Phase.QUESTION:
            # Everyone's time at x1 (the host's countdown; a player's own is in their `you`): the room's deadline
            # is the last extended one.
            offset = machine.own_deadline_offset_ms(
                timer_ms=timer_ms, time_percent=100, closing_percent=closing_percent
            )
            # A moment to read: the options appear in `reading_ms`, and the clock runs from then.
            # Team talk: the options are shown, and the clock waits `talk_ms` (from now, the reading included).
            now = timezone.now()
            opens = room["question_started_at"] or now
            talk = timedelta(seconds=ways.clock_waits(room))
            snapshot["reading_ms"] = max(int((opens - talk - now).total_seconds() * 1000), 0)
            if talk:
                snapshot["talk_ms"] = max(int((opens - now).total_seconds() * 1000), 0)
            remaining = (room["deadline"] - max(now, opens)).total_seconds() * 1000 - offset
            snapshot["remaining_ms"] = max(int(remaining), 0)
        else:
            given = [(option, response) for _, option, response, _, _ in answers]
            distribution = None
            counted = kind.crowd(question, given)
            if counted is not None:
                distribution, marked = counted
                crowd = machine.crowd_verdict(distribution=distribution, correct_index=marked, rule=crowd_rule())
            hidden = tuple((room["hidden_words"] or {}).get(str(index), ()))
            snapshot["reveal"] = {
                # A discreet marker for the host: a clear majority chose another option.
                "crowd_disagrees": crowd is not None and crowd.disagrees,
                "explanation": question.explanation,
                "source": question.source,
                # Without the words the host hid (an open question's cloud): they are in no later frame.
                **kind.reveal_hiding(question, order, given, hidden),
            }
            results = {
                player_id: (kind.shown(question, order, option, response), correct, points)
                for player_id, option, response, correct, points in answers
            }
            standings = Standings(
                players=lines,
                results=results,
                extra_time=extra_time,
                time_requests=time_requests,
                teams=team_places,
                check_counts=room["round__check_counts"],
                hidden=hidden,
            )
            return Picture(snapshot=snapshot, standings=standings, crowd=crowd, distribution=distribution)
    standings = Standings(
        players=lines,
        extra_time=extra_time,
        time_requests=time_requests,
        teams=team_places,
        check_counts=room["round__check_counts"],
    )
    return Picture(snapshot=snapshot, standings=standings, crowd=crowd)


def _own_time(snapshot: dict, *, percent: int, asks_more_time: bool) -> dict:
    mine = {"time_percent": percent, "asks_more_time": asks_more_time}
    if "remaining_ms" in snapshot:
        extra = machine.time_window_ms(timer_ms=snapshot["timer_seconds"] * 1000, time_percent=percent) - (
            snapshot["timer_seconds"] * 1000
        )
        mine["remaining_ms"] = snapshot["remaining_ms"] + extra
    return mine


def room_seq(*, room_id: int) -> int:
    return Room.objects.values_list("seq", flat=True).get(pk=room_id)


def player_view(*, player_id: int) -> dict:
    """What only this player may know about themselves beyond the snapshot (for a reconnect)."""
    player = Player.objects.select_related("room").get(pk=player_id)
    room = player.room
    answer = None
    if room.question_index >= 0:
        stored = (
            Answer.objects.filter(player=player, question_index=room.question_index)
            .values_list("option", "response")
            .first()
        )
        if stored is not None:
            question = round_question_facts(round_id=room.round_id, position=room.question_index)
            order = shown_order(question, seed=room.option_seed, question_index=room.question_index)
            answer = kind_of(question).shown(question, order, *stored)
    return {
        "id": player.pk,
        "nickname": player.nickname,
        "answered_index": room.question_index if answer is not None else None,
        "option": answer,  # as the player's room shows it
    }


def results_csv(*, room: Room) -> str:
    """One row per player; each answer names the option by the round's letter and its text (the same in every
    room of the round, whatever order a room showed), whether it was right and its points (a poll's vote: the
    option alone). The header names each question and its correct option, or says it is a poll."""
    questions = round_question_list(round_id=room.round_id)
    if room.written_live:
        # Its round may have grown after the game ended early: only what the game could play.
        questions = questions[: room.question_count]
    players = list(room.players.filter(removed=False))
    ranks = machine.rank([(p.pk, p.score) for p in players])
    answers = {(a.player_id, a.question_index): a for a in room.answers.all()}
    out = io.StringIO()
    writer = csv_writer(out)
    # Each question's column says what was asked and which option was right; a cell, what the player answered.
    header = []
    for number, question in enumerate(questions, start=1):
        # A poll has no right answer: its column says it is a poll, its cells name the vote alone.
        said = f"correct {kind_of(question).answer_text(question)}" if kind_of(question).scored else "poll"
        header.append(f"Q{number}: {question.text} [{said}]")
    # A game with teams says each player's team (the team CSV, lobby/reads/team_board.py, has the teams' scores).
    teams = team_board.team_names(room)
    writer.writerow(["rank", "nickname", *(["team"] if teams is not None else []), "score", *header])
    for player in sorted(players, key=lambda p: ranks[p.pk]):
        cells = []
        for index in range(len(questions)):
            answer = answers.get((player.pk, index))
            if answer is None:
                cells.append("")
            else:
                question = questions[index]
                kind = kind_of(question)
                chosen = kind.response_text(question, answer.option, answer.response)
                if not kind.scored:
                    cells.append(chosen)
                    continue
                verdict = "right" if answer.correct else ("partly right" if (answer.credit or 0) > 0 else "wrong")
                cells.append(f"{chosen} ({verdict}, {answer.points})")
        team = [teams.get(player.team_id, "")] if teams is not None else []
        writer.writerow([ranks[player.pk], player.nickname, *team, player.score, *cells])
    return out.getvalue()


# A game lasts minutes (homework: days at most); a room unfinished after this long was left, not played.
OPEN_ROOM_WINDOW = timedelta(days=2)


def rooms_open_count() -> int:
    """Rooms not finished that were created within OPEN_ROOM_WINDOW: the games an operator has running."""
    since = timezone.now() - OPEN_ROOM_WINDOW
    return Room.objects.exclude(phase=Phase.FINISHED).filter(created_at__gte=since).count()
