from quiz.models import Pack, Question, Round


def round_question_list(*, round_id: int) -> list[Question]:
    return [entry.question for entry in Round.objects.get(pk=round_id).entries.select_related("question")]


def round_question_at(*, round_id: int, position: int) -> Question:
    return Question.objects.get(entries__round_id=round_id, entries__position=position)


def pack_list() -> list[Pack]:
    return list(Pack.objects.all())


def host_round_list(*, owner_key: str) -> list[Round]:
    if not owner_key:
        return []
    return list(Round.objects.filter(owner_key=owner_key))
