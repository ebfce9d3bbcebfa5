import threading
import time
from dataclasses import dataclass

from quiz.models import Pack, Question, Round


def round_question_list(*, round_id: int) -> list[Question]:
    return [entry.question for entry in Round.objects.get(pk=round_id).entries.select_related("question")]


def round_question_at(*, round_id: int, position: int) -> Question:
    return Question.objects.get(entries__round_id=round_id, entries__position=position)


@dataclass(frozen=True)
class QuestionFacts:
    option_count: int
    correct_index: int


_FACTS_TTL = 10.0
_facts: dict[tuple[int, int], tuple[float, QuestionFacts]] = {}
_facts_lock = threading.Lock()


def round_question_facts(*, round_id: int, position: int) -> QuestionFacts:
    """How many options, and which is marked, for one question of a round; kept for a few seconds."""
    key, now = (round_id, position), time.monotonic()
    with _facts_lock:
        cached = _facts.get(key)
    if cached and now - cached[0] < _FACTS_TTL:
        return cached[1]
    question = round_question_at(round_id=round_id, position=position)
    facts = QuestionFacts(option_count=len(question.options), correct_index=question.correct_index)
    with _facts_lock:
        if len(_facts) > 10_000:
            _facts.clear()
        _facts[key] = (now, facts)
    return facts


def pack_list() -> list[Pack]:
    return list(Pack.objects.all())


def host_round_list(*, owner_key: str) -> list[Round]:
    if not owner_key:
        return []
    return list(Round.objects.filter(owner_key=owner_key))
