"""How a room shows one question of its round: the order of its options (or items), by its kind."""

from lobby.rules import machine
from quiz.kinds import kind_of
from quiz.selectors import QuestionFacts, round_question_facts


def shown_order(question: QuestionFacts, *, seed: str, question_index: int) -> tuple[int, ...]:
    """Position shown -> the round's index, for this room (the same on every process: drawn from its seed)."""
    kind = kind_of(question)
    count = len(question.options)
    if not kind.shuffled:
        return tuple(range(count))
    return kind.arrange(machine.option_order(seed=seed, question_index=question_index, option_count=count))


def question_numbering(*, round_id: int, index: int, count: int) -> dict:
    """ "Question 3 of 10" for the step `index` of a round of `count` steps: questions are counted alone, a slide
    has no number (quiz/kinds/slide.py). Live and homework number their questions the same way."""
    asking = [kind_of(round_question_facts(round_id=round_id, position=i)).asks for i in range(count)]
    return {"number": sum(asking[: index + 1]) if asking[index] else None, "of": sum(asking)}
