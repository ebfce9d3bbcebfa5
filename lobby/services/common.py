"""What several of the game's writes share: the lobby-sized bump, the room's closing time and a question's
timer."""

from django.db.models import F, Max

from lobby import events
from lobby.models import Player, Room
from lobby.rules import machine
from quiz.selectors import round_question_facts


def closing_percent(room_id: int) -> int:
    """The most time any player of the room has: the room's deadline is theirs."""
    most = Player.objects.filter(room_id=room_id, removed=False).aggregate(most=Max("time_percent"))["most"]
    return most or 100


def bump(room_id: int) -> None:
    """A lobby-sized change (a join, a removal, the lock): its broadcast is coalesced with the others'."""
    Room.objects.filter(pk=room_id).update(seq=F("seq") + 1)
    events.room_changed(room_id=room_id, coalesce=True)


def question_timer_ms(*, round_id: int, timer_seconds: int, index: int) -> int:
    """The timer of the round's question `index` at x1: its own seconds, or the room's `timer_seconds`."""
    question = round_question_facts(round_id=round_id, position=index)
    return machine.question_timer_ms(room_seconds=timer_seconds, question_seconds=question.seconds)
