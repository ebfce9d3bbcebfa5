"""The game's reads. `room_snapshot` is the one public picture of a room, sent to host and players alike:
before the reveal it holds nothing that says which option is correct.

Answers are stored with the round's option index; what a room's screens get (options, the marked one, the
distribution, each player's choice) is in the order that room shows them (`machine.option_order`)."""

import io
from dataclasses import dataclass

from django.utils import timezone

from core.spreadsheet import csv_writer
from lobby import machine
from lobby.machine import Phase
from lobby.models import Answer, Player, Room, VoidedQuestion
from quiz.models import CheckStatus
from quiz.selectors import round_question_facts, round_question_list
from verifier import conf

_ROOM_FIELDS = ("seq", "code", "phase", "round_id", "question_count", "question_index", "timer_seconds", "locked",
                "deadline", "option_seed", "round__title", "round__check_status", "round__check_note",
                "no_speed_bonus")  # fmt: skip


def crowd_rule() -> machine.CrowdRule:
    """The crowd signal's thresholds, read at call time so a deployment or a test can tune them."""
    return machine.CrowdRule(min_answers=conf.crowd_min_answers(), majority=conf.crowd_majority())


@dataclass(frozen=True)
class Picture:
    snapshot: dict
    # During a reveal, the crowd's verdict on the question shown: the reveal's crowd check judges this one.
    crowd: machine.CrowdVerdict | None = None
    # ... and the answers per option in the round's order (the snapshot's is in the room's), which it records.
    distribution: list[int] | None = None


def room_snapshot(*, room_id: int) -> dict:
    return room_picture(room_id=room_id).snapshot


def room_picture(*, room_id: int) -> Picture:
    """The snapshot, built for every broadcast and every (re)join: three or four queries, rows as tuples, not
    model objects. Its CPU time holds the GIL while the server's event loop waits to fan out
    (bench/game_path.py)."""
    room = Room.objects.filter(pk=room_id).values(*_ROOM_FIELDS).get()
    rows = list(
        Player.objects.filter(room_id=room_id, removed=False).values_list(
            "id", "nickname", "score", "time_percent", "asks_more_time"
        )
    )
    players = [(player_id, nickname, score) for player_id, nickname, score, _, _ in rows]
    ranks = machine.rank([(player_id, score) for player_id, _, score in players])
    closing_percent = max((percent for _, _, _, percent, _ in rows), default=100)
    phase, index = room["phase"], room["question_index"]
    snapshot: dict = {
        "type": "state",
        "seq": room["seq"],
        "code": room["code"],
        "phase": phase,
        "title": room["round__title"],
        "check_status": room["round__check_status"],
        "check_label": str(room["round__check_note"] or CheckStatus(room["round__check_status"]).label),
        "question_count": room["question_count"],
        "question_index": index,
        "timer_seconds": room["timer_seconds"],
        "locked": room["locked"],
        "no_speed_bonus": room["no_speed_bonus"],
        "players": [
            {"id": player_id, "nickname": nickname, "score": score, "rank": ranks[player_id]}
            for player_id, nickname, score in players
        ],
        # Questions taken out of the scores after review (their points no longer count).
        "voided": sorted(VoidedQuestion.objects.filter(room_id=room_id).values_list("question_index", flat=True)),
        # For the host only (a player's connection keeps its own entry, see `personal_time`): who has extra
        # time (player id -> percent, only those above x1) and who asked for it when joining.
        EXTRA_TIME: {str(player_id): percent for player_id, _, _, percent, _ in rows if percent != 100},
        TIME_REQUESTS: [player_id for player_id, _, _, _, asks in rows if asks],
    }
    crowd = None
    if phase in (Phase.QUESTION, Phase.REVEAL):
        question = round_question_facts(round_id=room["round_id"], position=index)
        order = machine.option_order(seed=room["option_seed"], question_index=index, option_count=question.option_count)
        shown_options = [question.options[original] for original in order]
        snapshot["question"] = {"index": index, "text": question.text, "options": shown_options}
        # One query for the count, the distribution and the results: at most 20 rows.
        answers = list(
            Answer.objects.filter(room_id=room_id, question_index=index, player__removed=False)
            .order_by("pk")
            .values_list("player_id", "option", "correct", "points")
        )
        snapshot["answered_count"] = len(answers)
        if phase == Phase.QUESTION:
            # Everyone's time at x1 (the host's countdown): the room's deadline is the last extended one.
            offset = machine.own_deadline_offset_ms(
                timer_ms=room["timer_seconds"] * 1000, time_percent=100, closing_percent=closing_percent
            )
            remaining = (room["deadline"] - timezone.now()).total_seconds() * 1000 - offset
            snapshot["remaining_ms"] = max(int(remaining), 0)
        else:
            distribution = [0] * len(question.options)
            for _, option, _, _ in answers:
                if 0 <= option < len(distribution):
                    distribution[option] += 1
            crowd = machine.crowd_verdict(
                distribution=distribution, correct_index=question.correct_index, rule=crowd_rule()
            )
            snapshot["reveal"] = {
                # A discreet marker for the host: a clear majority chose another option.
                "crowd_disagrees": crowd.disagrees,
                "correct_index": machine.shown_option(order, question.correct_index),
                "explanation": question.explanation,
                "source": question.source,
                "distribution": [distribution[original] for original in order],
                "results": {
                    str(player_id): {"option": _shown(order, option), "correct": correct, "points": points}
                    for player_id, option, correct, points in answers
                },
            }
            return Picture(snapshot=snapshot, crowd=crowd, distribution=distribution)
    return Picture(snapshot=snapshot, crowd=crowd)


EXTRA_TIME = "extra_time"
TIME_REQUESTS = "time_requests"


def personal_time(snapshot: dict, *, player_id: int) -> dict:
    """What one player's frames carry of the host-only extra-time fields: their own time (percent of the timer),
    whether their request is pending and, during a question, their own remaining time. No database."""
    percent = snapshot.get(EXTRA_TIME, {}).get(str(player_id), 100)
    mine = {"time_percent": percent, "asks_more_time": player_id in snapshot.get(TIME_REQUESTS, ())}
    if "remaining_ms" in snapshot:
        extra = machine.time_window_ms(timer_ms=snapshot["timer_seconds"] * 1000, time_percent=percent) - (
            snapshot["timer_seconds"] * 1000
        )
        mine["remaining_ms"] = snapshot["remaining_ms"] + extra
    return mine


def _shown(order: tuple[int, ...], original: int) -> int:
    # An option index past the question's options (an edited round) stays as stored; no screen draws it.
    return machine.shown_option(order, original) if 0 <= original < len(order) else original


def room_seq(*, room_id: int) -> int:
    return Room.objects.values_list("seq", flat=True).get(pk=room_id)


def player_view(*, player_id: int) -> dict:
    """What only this player may know about themselves beyond the snapshot (for a reconnect)."""
    player = Player.objects.select_related("room").get(pk=player_id)
    room = player.room
    answer = None
    if room.question_index >= 0:
        answer = (
            Answer.objects.filter(player=player, question_index=room.question_index)
            .values_list("option", flat=True)
            .first()
        )
    if answer is not None:
        question = round_question_facts(round_id=room.round_id, position=room.question_index)
        order = machine.option_order(
            seed=room.option_seed, question_index=room.question_index, option_count=question.option_count
        )
        answer = _shown(order, answer)
    return {
        "id": player.pk,
        "nickname": player.nickname,
        "answered_index": room.question_index if answer is not None else None,
        "option": answer,  # as the player's room shows it
    }


def results_csv(*, room: Room) -> str:
    """One row per player; each answer names the option by the round's letter and its text (the same in every
    room of the round, whatever order a room showed), whether it was right and its points. The header names each
    question and its correct option."""
    questions = round_question_list(round_id=room.round_id)
    players = list(room.players.filter(removed=False))
    ranks = machine.rank([(p.pk, p.score) for p in players])
    answers = {(a.player_id, a.question_index): a for a in room.answers.all()}
    out = io.StringIO()
    writer = csv_writer(out)
    # Each question's column says what was asked and which option was right; a cell, what the player answered.
    header = []
    for number, question in enumerate(questions, start=1):
        letter = "ABCDEF"[question.correct_index] if question.correct_index < 6 else "?"
        correct = question.options[question.correct_index] if question.correct_index < len(question.options) else ""
        header.append(f"Q{number}: {question.text} [correct {letter}: {correct}]")
    writer.writerow(["rank", "nickname", "score", *header])
    for player in sorted(players, key=lambda p: ranks[p.pk]):
        cells = []
        for index in range(len(questions)):
            answer = answers.get((player.pk, index))
            if answer is None:
                cells.append("")
            else:
                options = questions[index].options
                chosen = f"{'ABCDEF'[answer.option]}: {options[answer.option]}" if answer.option < len(options) else "?"
                cells.append(f"{chosen} ({'right' if answer.correct else 'wrong'}, {answer.points})")
        writer.writerow([ranks[player.pk], player.nickname, player.score, *cells])
    return out.getvalue()
