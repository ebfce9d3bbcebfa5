"""Reads and writes for a host's own rounds, always scoped to the browser session's owner key."""

from django.db import transaction
from django.db.models import Count
from django.utils.translation import gettext as _

from core.text import clean_line
from quiz.checking.rounds import CheckMark, question_check_marks, round_check_refresh
from quiz.exceptions import QuizError, RoundNotFound
from quiz.models import CheckStatus, GenerationJob, Provenance, Question, Round, RoundQuestion
from quiz.selectors import round_question_facts_forget
from quiz.services import question_create, round_create_for_host
from quiz.validation import QuestionData


def host_round_summaries(*, owner_key: str) -> list[Round]:
    """The session's rounds, newest first, each with `question_count`."""
    if not owner_key:
        return []
    return list(Round.objects.filter(owner_key=owner_key).annotate(question_count=Count("entries")))


def host_round_get(*, owner_key: str, round_id: int) -> Round:
    # An empty key must never match the rounds that have no owner (packs).
    round_ = Round.objects.filter(pk=round_id, owner_key=owner_key).first() if owner_key else None
    if round_ is None:
        raise RoundNotFound("That round does not exist or is not yours.")
    return round_


def host_round_questions(*, round_: Round) -> list[QuestionData]:
    return [entry.question.as_data() for entry in round_.entries.select_related("question")]


@transaction.atomic
def host_round_save(*, owner_key: str, round_id: int | None, title: str, questions: list[QuestionData]) -> Round:
    if not owner_key:
        raise QuizError("This browser session has no rounds.")
    if not questions:
        raise QuizError("A round needs at least one question.")
    if round_id is None:
        return round_create_for_host(title=title, questions=questions, owner_key=owner_key)

    round_ = Round.objects.select_for_update().filter(pk=round_id, owner_key=owner_key).first()
    if round_ is None:
        raise RoundNotFound("That round does not exist or is not yours.")
    if round_.writing:
        # Its writer appends to it as questions pass the gate: edit it once it is finished.
        raise QuizError(_("This round is still being written: edit it once it is finished."))
    # Questions are never changed or deleted (answers and checks may point at them): an unchanged
    # question keeps its row, a changed or new one gets a new row, and the round's entries are replaced.
    current = list(round_.entries.select_related("question"))
    reusable: dict[QuestionData, list[Question]] = {}
    for entry in current:
        reusable.setdefault(entry.question.as_data(), []).append(entry.question)
    new_questions = []
    for data in questions:
        same = reusable.get(data)
        if same:
            new_questions.append(same.pop(0))
        else:
            new_questions.append(question_create(data=data, provenance=Provenance.HOST))

    changed = [entry.question_id for entry in current] != [question.pk for question in new_questions]
    round_.title = clean_line(title)[:200] or "My questions"
    update_fields = ["title"]
    if changed:
        # The old check result no longer describes these questions (a host's check is summed up again below).
        round_.check_status = CheckStatus.UNCHECKED
        update_fields.append("check_status")
        round_.entries.all().delete()
        RoundQuestion.objects.bulk_create(
            RoundQuestion(round=round_, question=question, position=position)
            for position, question in enumerate(new_questions)
        )
        round_question_facts_forget(round_id=round_.pk)
    round_.save(update_fields=update_fields)
    if changed and round_.check_counts:
        # Checked with "check my questions": what is left keeps its verdicts, an edited question has none.
        round_check_refresh(round_=round_)
    return round_


def host_rounds_move(*, from_key: str, to_key: str) -> int:
    """Everything a browser made (its rounds and generation jobs) is filed under another owner key (a host who
    signs up or in takes this browser's rounds into their account). Returns the number of rounds moved."""
    if not from_key or not to_key or from_key == to_key:
        return 0
    with transaction.atomic():
        GenerationJob.objects.filter(owner_key=from_key).update(owner_key=to_key)
        return Round.objects.filter(owner_key=from_key).update(owner_key=to_key)


def host_round_entries(*, round_: Round) -> list[tuple[QuestionData, CheckMark | None]]:
    """The round's questions in order, each with its latest verdict (None: never checked), for the editor."""
    entries = list(round_.entries.select_related("question"))
    marks = question_check_marks(question_ids=[entry.question_id for entry in entries])
    return [(entry.question.as_data(), marks.get(entry.question_id)) for entry in entries]
