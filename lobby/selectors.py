"""The game's reads. `room_snapshot` is the one public picture of a room, sent to host and players alike:
before the reveal it holds nothing that says which option is correct."""

import csv
import io

from django.db.models import Count
from django.utils import timezone

from lobby import machine
from lobby.machine import Phase
from lobby.models import Answer, Player, Room, VoidedQuestion
from lobby.review import crowd_verdict
from quiz.models import CheckStatus
from quiz.selectors import round_question_facts, round_question_list


def room_snapshot(*, room_id: int) -> dict:
    room = Room.objects.select_related("round").get(pk=room_id)
    players = list(room.players.filter(removed=False))
    ranks = machine.rank([(p.pk, p.score) for p in players])
    snapshot: dict = {
        "type": "state",
        "seq": room.seq,
        "code": room.code,
        "phase": room.phase,
        "title": room.round.title,
        "check_status": room.round.check_status,
        "check_label": CheckStatus(room.round.check_status).label,
        "question_count": room.question_count,
        "question_index": room.question_index,
        "timer_seconds": room.timer_seconds,
        "locked": room.locked,
        "players": [{"id": p.pk, "nickname": p.nickname, "score": p.score, "rank": ranks[p.pk]} for p in players],
        # Questions taken out of the scores after review (their points no longer count).
        "voided": sorted(VoidedQuestion.objects.filter(room=room).values_list("question_index", flat=True)),
    }
    if room.phase in (Phase.QUESTION, Phase.REVEAL):
        question = round_question_facts(round_id=room.round_id, position=room.question_index)
        snapshot["question"] = {"index": room.question_index, "text": question.text, "options": list(question.options)}
        answers = Answer.objects.filter(room=room, question_index=room.question_index, player__removed=False)
        snapshot["answered_count"] = answers.count()
        if room.phase == Phase.QUESTION:
            remaining = (room.deadline - timezone.now()).total_seconds() * 1000
            snapshot["remaining_ms"] = max(int(remaining), 0)
        else:
            counts = dict(answers.values_list("option").annotate(n=Count("id")).values_list("option", "n"))
            distribution = [counts.get(i, 0) for i in range(len(question.options))]
            crowd = crowd_verdict(distribution=distribution, correct_index=question.correct_index)
            snapshot["reveal"] = {
                # A discreet marker for the host: a clear majority chose another option.
                "crowd_disagrees": crowd.disagrees,
                "correct_index": question.correct_index,
                "explanation": question.explanation,
                "source": question.source,
                "distribution": [counts.get(i, 0) for i in range(len(question.options))],
                "results": {
                    str(a.player_id): {"option": a.option, "correct": a.correct, "points": a.points} for a in answers
                },
            }
    return snapshot


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
    writer = csv.writer(out)
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
        writer.writerow([ranks[player.pk], _csv_safe(player.nickname), player.score, *cells])
    return out.getvalue()


def _csv_safe(value: str) -> str:
    # A nickname like "=HYPERLINK(...)" must not become a formula in a spreadsheet.
    return "'" + value if value[:1] in ("=", "+", "-", "@", "\t", "\r") else value
