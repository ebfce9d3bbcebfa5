"""How a room shows one question of its round: the order of its options (or items), by its kind."""

from lobby.rules import machine
from quiz.kinds import kind_of
from quiz.selectors import QuestionFacts


def shown_order(question: QuestionFacts, *, seed: str, question_index: int) -> tuple[int, ...]:
    """Position shown -> the round's index, for this room (the same on every process: drawn from its seed)."""
    kind = kind_of(question)
    count = len(question.options)
    if not kind.shuffled:
        return tuple(range(count))
    return kind.arrange(machine.option_order(seed=seed, question_index=question_index, option_count=count))
