"""A room's audit trail (its host's `audit.json`): the round's record, and per question of the round its audit
(quiz/audit.py, with the reviewer's part from review/audit.py), whether it was played or voided here, the answers
of this room's players, their reports and the flags raised in this room: what is needed to see why each question
was played and how it went."""

from typing import Any

from lobby.models import Answer, Report, Room, VoidedQuestion
from lobby.rules import machine
from quiz.audit import round_audit
from quiz.kinds import kind_of
from quiz.validation import OPTION_LETTERS
from review.models import Flag


def _letter(index: int) -> str:
    return OPTION_LETTERS[index] if 0 <= index < len(OPTION_LETTERS) else "?"


def room_audit(room: Room) -> dict[str, Any]:
    trail = round_audit(room.round)
    players = list(room.players.all())
    ranks = machine.rank([(p.pk, p.score) for p in players if not p.removed])
    voided = set(VoidedQuestion.objects.filter(room=room).values_list("question_index", flat=True))
    answers: dict[int, list[dict[str, Any]]] = {}
    held = {entry.position: entry.question for entry in room.round.entries.select_related("question")}
    for answer in Answer.objects.filter(room=room).select_related("player").order_by("question_index", "created_at"):
        question = held.get(answer.question_index)
        answers.setdefault(answer.question_index, []).append(
            {
                "player": answer.player.nickname,
                "option": _letter(answer.option) if answer.response is None else None,
                # The answer in the round's terms, in its kind's words (the letter and option, the letters picked,
                # the text typed, the order, the value).
                "answer": kind_of(question).response_text(question, answer.option, answer.response)
                if question is not None
                else _letter(answer.option),
                "correct": answer.correct,
                "credit": answer.credit,
                "points": answer.points,
                "elapsed_ms": answer.elapsed_ms,
            }
        )
    reports: dict[int, list[dict[str, Any]]] = {}
    for report in Report.objects.filter(room=room).select_related("player"):
        reports.setdefault(report.question_id, []).append(
            {"player": report.player.nickname, "text": report.text, "at": report.created_at.isoformat()}
        )
    flags: dict[int, list[dict[str, Any]]] = {}
    for flag in Flag.objects.filter(room_code=room.code).order_by("created_at", "id"):
        flags.setdefault(flag.question_id, []).append(
            {"kind": flag.kind, "detail": flag.detail, "at": flag.created_at.isoformat()}
        )
    questions = []
    for audit in trail["questions"]:
        index = audit["position"]
        questions.append(
            {
                **audit,
                "played": index <= room.question_index,
                "voided": index in voided,
                "answers": answers.get(index, []),
                "reports": reports.get(audit["question_id"], []),
                "flags": flags.get(audit["question_id"], []),
            }
        )
    return {
        "room": {
            "code": room.code,
            "created_at": room.created_at.isoformat(),
            "phase": room.phase,
            "timer_seconds": room.timer_seconds,
            "question_count": room.question_count,
        },
        "round": trail["round"],
        "players": [
            {"nickname": p.nickname, "score": p.score, "rank": ranks.get(p.pk), "removed": p.removed}
            for p in sorted(players, key=lambda p: (ranks.get(p.pk) or 10**6, p.pk))
        ],
        "questions": questions,
    }
