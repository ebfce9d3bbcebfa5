"""Players' reports of a question after its answer is shown."""

from django.db import IntegrityError, transaction
from django.utils.translation import gettext as _

from core.text import clean_line
from lobby.exceptions import (
    AlreadyReported,
    NotNow,
)
from lobby.models import Player, Report
from lobby.rules import machine
from lobby.services import review
from quiz.selectors import round_question_at


def report_create(*, player_id: int, question_index: object, text: object) -> Report:
    if not isinstance(question_index, int) or isinstance(question_index, bool):
        raise NotNow(_("Say which question you are reporting."))
    text = clean_line(text)[:500] if isinstance(text, str) else ""
    player = Player.objects.select_related("room").get(pk=player_id)
    room = player.room
    # A question can be reported once its answer has been revealed, not while it is open.
    if not machine.is_revealed(room.position, question_index) or not 0 <= question_index < room.question_count:
        raise NotNow(_("You can report a question after its answer is shown."))
    question = round_question_at(round_id=room.round_id, position=question_index)
    try:
        with transaction.atomic():
            report = Report.objects.create(room=room, player=player, question=question, text=text)
            review.report_flag(report=report)
            return report
    except IntegrityError:
        raise AlreadyReported() from None
