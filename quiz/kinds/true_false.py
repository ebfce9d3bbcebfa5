"""`true_false`: a statement, true or false. Played as two options, "True" (0) and "False" (1), in that
order in every room; the phones and the host screen name them in their own language."""

from collections.abc import Mapping, Sequence
from typing import Any

from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from quiz.exceptions import InvalidQuestion
from quiz.kinds.base import GateAsk, Held, Judged, Kind, Shape, distribution
from quiz.kinds.single import chosen_option

TRUE, FALSE = 0, 1


class TrueFalse(Kind):
    name = "true_false"
    label = gettext_lazy("True or false")
    rule = gettext_lazy("A statement, marked true or false; no options.")
    csv_correct = gettext_lazy("true or false")
    uses_options = False
    answer_field = "truth"
    shuffled = False
    writer_noun = "true-or-false statements"
    writer_hint = (
        "The question is a statement that is plainly either true or false; answer is true or false (a JSON "
        "boolean); make about half of them false."
    )
    writer_example = {"answer": False}

    def clean(self, raw: Mapping[str, Any]) -> Shape:
        answer = raw.get("answer")
        if isinstance(answer, str) and answer.strip().lower() in ("true", "false"):
            answer = answer.strip().lower() == "true"  # a CSV cell
        if not isinstance(answer, bool):
            raise InvalidQuestion(_("a true/false question's answer must be true or false"))
        return Shape(key={"answer": answer})

    def writer_schema(self, *, lengths: bool = True) -> dict[str, dict[str, Any]]:
        return {"answer": {"type": "boolean"}}

    def as_json(self, question: Held) -> dict[str, Any]:
        return {"answer": question.key["answer"]}

    def csv_cells(self, question: Held) -> dict[str, Any]:
        return {"options": [], "correct": self.answer_text(question)}

    def from_csv(self, cells: dict[str, Any]) -> dict[str, Any]:
        return {"answer": cells["correct"]}

    def _correct(self, question: Held) -> int:
        return TRUE if question.key["answer"] else FALSE

    def public(self, question: Held, order: tuple[int, ...]) -> dict[str, Any]:
        return {}

    def judge(self, question: Held, given: Mapping[str, Any], order: tuple[int, ...]) -> Judged:
        option = chosen_option(given, 2)
        right = option == self._correct(question)
        return Judged(option=option, response=None, credit=1.0 if right else 0.0, right=right)

    def shown(self, question: Held, order: tuple[int, ...], option: int, response: Any) -> Any:
        return option

    def reveal(self, question: Held, order: tuple[int, ...], answers: Sequence[tuple[int, Any]]) -> dict[str, Any]:
        return {"correct_index": self._correct(question), "distribution": self._counts(question, answers)}

    def _counts(self, question: Held, answers: Sequence[tuple[int, Any]]) -> list[int]:
        return distribution(question, answers, count=2)

    def crowd(self, question: Held, answers: Sequence[tuple[int, Any]]) -> tuple[list[int], int] | None:
        return self._counts(question, answers), self._correct(question)

    def option_texts(self, question: Held) -> list[str]:
        return [_("True"), _("False")]

    def marked(self, question: Held) -> set[int]:
        return {self._correct(question)}

    def tally(self, question: Held, answers: Sequence[tuple[int, Any]]) -> list[int]:
        return self._counts(question, answers)

    def answer_text(self, question: Held) -> str:
        return "true" if question.key["answer"] else "false"

    def response_text(self, question: Held, option: int, response: Any) -> str:
        return {TRUE: "true", FALSE: "false"}.get(option, "?")

    def gate_asks(self, question: Held) -> list[GateAsk]:
        # The checker is asked as of a two-option question: is the statement's marked truth value right?
        return [GateAsk(text=question.text, options=("True", "False"), correct_index=self._correct(question))]
