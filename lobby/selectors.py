"""The game's reads. `room_snapshot` is the one public picture of a room, sent to host and players alike:
before the reveal it holds nothing that says which option is correct."""

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
                "deadline", "round__title", "round__check_status")  # fmt: skip


def crowd_rule() -> machine.CrowdRule:
    """The crowd signal's thresholds, read at call time so a deployment or a test can tune them."""
    return machine.CrowdRule(min_answers=conf.crowd_min_answers(), majority=conf.crowd_majority())


@dataclass(frozen=True)
class Picture:
    snapshot: dict
    # During a reveal, the crowd's verdict on the question shown: the reveal's crowd check judges this one.
    crowd: machine.CrowdVerdict | None = None


def room_snapshot(*, room_id: int) -> dict:
    return room_picture(room_id=room_id).snapshot


def room_picture(*, room_id: int) -> Picture:
    """The snapshot, built for every broadcast and every (re)join: three or four queries, rows as tuples, not
    model objects. Its CPU time holds the GIL while the server's event loop waits to fan out
    (bench/game_path.py)."""
    room = Room.objects.filter(pk=room_id).values(*_ROOM_FIELDS).get()
    players = list(Player.objects.filter(room_id=room_id, removed=False).values_list("id", "nickname", "score"))
    ranks = machine.rank([(player_id, score) for player_id, _, score in players])
    phase, index = room["phase"], room["question_index"]
    snapshot: dict = {
        "type": "state",
        "seq": room["seq"],
        "code": room["code"],
        "phase": phase,
        "title": room["round__title"],
        "check_status": room["round__check_status"],
        "check_label": CheckStatus(room["round__check_status"]).label,
        "question_count": room["question_count"],
        "question_index": index,
        "timer_seconds": room["timer_seconds"],
        "locked": room["locked"],
        "players": [
            {"id": player_id, "nickname": nickname, "score": score, "rank": ranks[player_id]}
            for player_id, nickname, score in players
        ],
        # Questions taken out of the scores after review (their points no longer count).
        "voided": sorted(VoidedQuestion.objects.filter(room_id=room_id).values_list("question_index", flat=True)),
    }
    crowd = None
    if phase in (Phase.QUESTION, Phase.REVEAL):
        question = round_question_facts(round_id=room["round_id"], position=index)
        snapshot["question"] = {"index": index, "text": question.text, "options": list(question.options)}
        # One query for the count, the distribution and the results: at most 20 rows.
        answers = list(
            Answer.objects.filter(room_id=room_id, question_index=index, player__removed=False)
            .order_by("pk")
            .values_list("player_id", "option", "correct", "points")
        )
        snapshot["answered_count"] = len(answers)
        if phase == Phase.QUESTION:
            remaining = (room["deadline"] - timezone.now()).total_seconds() * 1000
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
                "correct_index": question.correct_index,
                "explanation": question.explanation,
                "source": question.source,
                "distribution": distribution,
                "results": {
                    str(player_id): {"option": option, "correct": correct, "points": points}
                    for player_id, option, correct, points in answers
                },
            }
    return Picture(snapshot=snapshot, crowd=crowd)


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
    return {
        "id": player.pk,
        "nickname": player.nickname,
        "answered_index": room.question_index if answer is not None else None,
        "option": answer,
    }


def results_csv(*, room: Room) -> str:
    questions = round_question_list(round_id=room.round_id)
    players = list(room.players.filter(removed=False))
    ranks = machine.rank([(p.pk, p.score) for p in players])
    answers = {(a.player_id, a.question_index): a for a in room.answers.all()}
    out = io.StringIO()
    writer = csv_writer(out)
    writer.writerow(["rank", "nickname", "score", *[f"Q{i + 1}" for i in range(len(questions))]])
    for player in sorted(players, key=lambda p: ranks[p.pk]):
        cells = []
        for index in range(len(questions)):
            answer = answers.get((player.pk, index))
            if answer is None:
                cells.append("")
            else:
                letter = "ABCDEF"[answer.option]
                cells.append(f"{letter} ({'right' if answer.correct else 'wrong'}, {answer.points})")
        writer.writerow([ranks[player.pk], player.nickname, player.score, *cells])
    return out.getvalue()
