"""The host's overview of an assignment: who has started and finished, and per question how many answered and how
many right. Read as of a time the caller gives (services.homework_overview: now)."""

from datetime import datetime
from typing import Any

from lobby.homework.questions import open_at
from lobby.models import Answer, Player, Room


def homework_overview(*, room: Room, at: datetime) -> dict[str, Any]:
    """The host's page: who has started and finished, and per question how many answered and how many right."""
    assignment = room.assignment
    players = list(
        Player.objects.filter(room=room, removed=False)
        .select_related("homework")
        .order_by("joined_at", "pk")
        .values_list("pk", "nickname", "score", "homework__question_index", "homework__finished_at")
    )
    per_question = {index: [0, 0] for index in range(room.question_count)}
    answering: set[int] = set()  # "started": answered at least once (joining alone starts nothing)
    for player_id, index, correct in Answer.objects.filter(room=room).values_list(
        "player_id", "question_index", "correct"
    ):
        per_question[index][0] += 1
        per_question[index][1] += bool(correct)
        answering.add(player_id)
    return {
        "deadline": assignment.deadline.isoformat(),
        "open": open_at(assignment, at),
        "players": [
            {
                "nickname": nickname,
                "score": score,
                "answered": min(index or 0, room.question_count),
                "finished": finished is not None,
            }
            for _pk, nickname, score, index, finished in players
        ],
        "started": sum(1 for pk, *_rest in players if pk in answering),
        "finished": sum(1 for *_rest, finished in players if finished is not None),
        "questions": [
            {"number": index + 1, "answered": counts[0], "correct": counts[1]}
            for index, counts in sorted(per_question.items())
        ],
    }
