"""`single`: 2-6 options, exactly one of them right. The question every round held before kinds."""

from collections.abc import Mapping, Sequence
from typing import Any

from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from quiz.exceptions import InvalidQuestion
from quiz.kinds.base import (
    MAX_OPTIONS,
    OPTION_LETTERS,
    BadAnswer,
    GateAsk,
    Held,
    Judged,
    Kind,
    Shape,
    clean_options,
    distribution,
    option_words,
    options_schema,
    whole_number,
)


def parse_correct(value: Any, option_count: int) -> int:
    """The marked option as a 0-based index, from an int index or a letter A-F / 1-based digit string."""
    if isinstance(value, bool):
        raise InvalidQuestion(_("the correct option must be an index or a letter"))
    if isinstance(value, int):
        index = value
    elif isinstance(value, str) and value.strip():
        token = value.strip().upper()
        if len(token) == 1 and token in OPTION_LETTERS:
            index = OPTION_LETTERS.index(token)
        elif token.isdigit():
            index = int(token) - 1
        else:
            raise InvalidQuestion(
                _("the correct option %(value)r is not a letter A-F or a number 1-6") % {"value": value.strip()}
            )
    else:
        raise InvalidQuestion(_("the correct option is missing"))
    if not 0 <= index < option_count:
        raise InvalidQuestion(_("the correct option points past the %(count)s options") % {"count": option_count})
    return index


def chosen_option(given: Mapping[str, Any], option_count: int) -> int:
    """The position shown that a one-option answer names; BadAnswer unless it is one of them."""
    option = given.get("option")
    if not whole_number(option) or not 0 <= option < option_count:
        raise BadAnswer(_("Choose one of the options."))
    return option


class Single(Kind):
    name = "single"
    label = gettext_lazy("One right option")
    rule = gettext_lazy("2 to 6 options, exactly one marked right.")
    csv_correct = gettext_lazy("the letter of the right option, A to F (or its number, 1 to 6)")
    answer_field = "correct"
    writer_noun = "multiple-choice questions"
    writer_hint = (
        "Each question has 4 options (2 to 6 allowed), exactly one of them correct, no two options alike; "
        "correct_index is the 0-based position of the correct option; vary that position across questions."
    )
    writer_example = {"options": ["...", "..."], "correct_index": 0}

    def clean(self, raw: Mapping[str, Any]) -> Shape:
        options = clean_options(raw.get("options"))
        if "correct_index" in raw:
            correct = raw["correct_index"]
            if not whole_number(correct):
                raise InvalidQuestion(_("correct_index must be a whole number"))
            if not 0 <= correct < len(options):
                raise InvalidQuestion(
                    _("the correct option points past the %(count)s options") % {"count": len(options)}
                )
        else:
            correct = parse_correct(raw.get("correct"), len(options))
        return Shape(options=options, correct_index=correct)

    def writer_schema(self, *, lengths: bool = True) -> dict[str, dict[str, Any]]:
        # The index is checked against the actual count afterwards: a schema cannot tie it to the list's length.
        return {
            "options": options_schema(lengths=lengths),
            "correct_index": {"type": "integer", "minimum": 0, "maximum": MAX_OPTIONS - 1},
        }

    def from_writer(self, raw: Mapping[str, Any]) -> dict[str, Any]:
        # A model writing without the schema may mark its answer as a letter, or as "answer_index".
        fields = super().from_writer(raw)
        if "correct" in raw:
            fields["correct"] = raw["correct"]
        if "correct_index" not in fields and "correct" not in fields and "answer_index" in raw:
            fields["correct_index"] = raw["answer_index"]
        return fields

    def as_json(self, question: Held) -> dict[str, Any]:
        return {"options": list(question.options), "correct": OPTION_LETTERS[question.correct_index]}

    csv_cells = as_json  # the same two fields: options, and the right one's letter in "correct"

    def from_csv(self, cells: dict[str, Any]) -> dict[str, Any]:
        return {"options": cells["options"], "correct": cells["correct"]}

    def judge(self, question: Held, given: Mapping[str, Any], order: tuple[int, ...]) -> Judged:
        original = order[chosen_option(given, len(order))]
        right = original == question.correct_index
        return Judged(option=original, response=None, credit=1.0 if right else 0.0, right=right)

    def reveal(self, question: Held, order: tuple[int, ...], answers: Sequence[tuple[int, Any]]) -> dict[str, Any]:
        counts = distribution(question, answers)
        return {
            "correct_index": order.index(question.correct_index),
            "distribution": [counts[original] for original in order],
        }

    def crowd(self, question: Held, answers: Sequence[tuple[int, Any]]) -> tuple[list[int], int] | None:
        return distribution(question, answers), question.correct_index

    def marked(self, question: Held) -> set[int]:
        return {question.correct_index}

    def answer_text(self, question: Held) -> str:
        return option_words(question, question.correct_index)

    def right_text(self, question: Held) -> str:
        index = question.correct_index
        return question.options[index] if 0 <= index < len(question.options) else ""

    def response_text(self, question: Held, option: int, response: Any) -> str:
        return option_words(question, option)

    def gate_asks(self, question: Held) -> list[GateAsk]:
        return [GateAsk(text=question.text, options=tuple(question.options), correct_index=question.correct_index)]
