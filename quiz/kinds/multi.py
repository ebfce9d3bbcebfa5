"""`multi`: 2-6 options, one or more of them right; the player picks any number.

Partial credit, of a question with n options of which k are right (1 <= k < n):

    credit = max(0, right picked / k - wrong picked / (n - k))

Each right option picked earns its share of the right ones; each wrong one picked takes away its share of the
wrong ones. Ticking every option is therefore always 1 - 1 = nothing, on every question, whatever its k and n;
ticking none of the right ones is nothing too. All the right ones and no wrong one is a right answer (the full
marks and the streak); a question must have a wrong option (else ticking everything would be its answer).
docs/hosts/scoring.md says the same for hosts."""

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
    letters,
    option_words,
    options_schema,
    whole_number,
    yes_no_ask,
)


def multi_credit(*, picked: set[int], right: set[int], options: int) -> float:
    """The share of full marks for `picked` of `options` options when `right` are the right ones (above)."""
    if not right:
        return 0.0
    wrong_options = options - len(right)
    penalty = len(picked - right) / wrong_options if wrong_options > 0 else 0.0
    return max(0.0, len(picked & right) / len(right) - penalty)


class Multi(Kind):
    name = "multi"
    label = gettext_lazy("Several right options")
    rule = gettext_lazy("2 to 6 options, one or more of them marked right.")
    csv_correct = gettext_lazy("the letters of every right option, e.g. A C")
    answer_field = "correct_many"
    writer_noun = "multiple-choice questions with several right options"
    writer_hint = (
        "Each question has 4 to 6 options, at least one and usually two or three of them correct, at least one "
        "wrong, no two options alike; correct_indexes lists the 0-based position of every correct option, each once."
    )
    writer_example = {"options": ["...", "...", "...", "..."], "correct_indexes": [0, 2]}

    def clean(self, raw: Mapping[str, Any]) -> Shape:
        options = clean_options(raw.get("options"))
        marked = raw.get("correct_indexes")
        if not isinstance(marked, list | tuple) or not marked:
            raise InvalidQuestion(_("mark at least one option as right"))
        if not all(whole_number(i) and 0 <= i < len(options) for i in marked):
            raise InvalidQuestion(
                _("an option marked right points past the %(count)s options") % {"count": len(options)}
            )
        if len(set(marked)) != len(marked):
            raise InvalidQuestion(_("an option is marked right twice"))
        if len(marked) == len(options):
            raise InvalidQuestion(_("at least one option must be wrong (else ticking every option would be right)"))
        return Shape(options=options, key={"correct_indexes": sorted(marked)})

    def writer_schema(self, *, lengths: bool = True) -> dict[str, dict[str, Any]]:
        # Positions past this question's options, or named twice, are refused by `clean`: a schema cannot say so.
        return {
            "options": options_schema(lengths=lengths),
            "correct_indexes": {
                "type": "array",
                "items": {"type": "integer", "minimum": 0, "maximum": MAX_OPTIONS - 1},
                "minItems": 1,
                "maxItems": MAX_OPTIONS,
            },
        }

    def as_json(self, question: Held) -> dict[str, Any]:
        return {"options": list(question.options), "correct_indexes": list(question.key["correct_indexes"])}

    def csv_cells(self, question: Held) -> dict[str, Any]:
        return {"options": list(question.options), "correct": letters(question.key["correct_indexes"])}

    def from_csv(self, cells: dict[str, Any]) -> dict[str, Any]:
        # "A C", "A,C" or "AC": the letters of the right options.
        marked = [OPTION_LETTERS.find(char) for char in cells["correct"].upper() if char.isalnum()]
        return {"options": cells["options"], "correct_indexes": marked}

    def judge(self, question: Held, given: Mapping[str, Any], order: tuple[int, ...]) -> Judged:
        picked = given.get("options")
        if (
            not isinstance(picked, list)
            or not picked
            or not all(whole_number(i) and 0 <= i < len(order) for i in picked)
            or len(set(picked)) != len(picked)
        ):
            raise BadAnswer(_("Pick one or more of the options."))
        originals = sorted(order[i] for i in picked)
        right = set(question.key["correct_indexes"])
        credit = multi_credit(picked=set(originals), right=right, options=len(question.options))
        return Judged(option=originals[0], response=originals, credit=credit, right=set(originals) == right)

    def shown(self, question: Held, order: tuple[int, ...], option: int, response: Any) -> Any:
        return sorted(order.index(i) for i in response or () if 0 <= i < len(order))

    def reveal(self, question: Held, order: tuple[int, ...], answers: Sequence[tuple[int, Any]]) -> dict[str, Any]:
        counts = self.tally(question, answers)
        return {
            "correct_indexes": sorted(order.index(i) for i in question.key["correct_indexes"]),
            "distribution": [counts[original] for original in order],
        }

    def marked(self, question: Held) -> set[int]:
        return set(question.key["correct_indexes"])

    def tally(self, question: Held, answers: Sequence[tuple[int, Any]]) -> list[int]:
        counts = [0] * len(question.options)
        for _option, response in answers:
            for i in response or ():
                if 0 <= i < len(counts):
                    counts[i] += 1
        return counts

    def answer_text(self, question: Held) -> str:
        return "; ".join(option_words(question, i) for i in question.key["correct_indexes"])

    def right_text(self, question: Held) -> str:
        return "; ".join(question.options[i] for i in question.key["correct_indexes"] if i < len(question.options))

    def response_text(self, question: Held, option: int, response: Any) -> str:
        # By the options' words: a room's phones showed its own letters, not the round's.
        options = question.options
        return "; ".join(options[i] if 0 <= i < len(options) else "?" for i in response or ())

    def gate_asks(self, question: Held) -> list[GateAsk]:
        # One ask per option: is it one of the right answers? Yes is marked for a right one, No for a wrong one.
        right = set(question.key["correct_indexes"])
        return [
            yes_no_ask(question, f"Is “{option}” one of the right answers?", yes=index in right)
            for index, option in enumerate(question.options)
        ]
