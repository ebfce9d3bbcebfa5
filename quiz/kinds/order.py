"""`order`: 3-6 items to put in the right order (`options` holds them in it). Each room shows them shuffled,
never already in order; the player sends the order they chose (as positions shown), by dragging or with the
buttons beside each item. Partial credit: the share of items in their right place; all of them is a right
answer."""

from collections.abc import Mapping, Sequence
from typing import Any

from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from quiz.kinds.base import (
    BadAnswer,
    GateAsk,
    Held,
    Judged,
    Kind,
    Shape,
    clean_options,
    options_schema,
    whole_number,
    yes_no_ask,
)

MIN_ITEMS = 3


def never_in_order(order: tuple[int, ...]) -> tuple[int, ...]:
    """A room's shuffle that happened to leave the items in the right order, turned by one."""
    if list(order) == sorted(order) and len(order) > 1:
        return order[1:] + order[:1]
    return order


class Order(Kind):
    name = "order"
    label = gettext_lazy("Put in order")
    rule = gettext_lazy("3 to 6 items, written in their right order; players see them shuffled.")
    csv_correct = gettext_lazy("empty (the options are the items, in their right order)")
    tallied = False
    writer_noun = "put-in-order questions"
    writer_hint = (
        "The question asks for 3 to 6 items to be put in order and says which order (oldest first, smallest "
        "first, ...); items lists them in that right order, no two alike."
    )
    writer_example = {"items": ["...", "...", "..."]}

    def clean(self, raw: Mapping[str, Any]) -> Shape:
        return Shape(options=clean_options(raw.get("items"), field=_("items"), minimum=MIN_ITEMS))

    def writer_schema(self, *, lengths: bool = True) -> dict[str, dict[str, Any]]:
        return {"items": options_schema(minimum=MIN_ITEMS, lengths=lengths)}

    def as_json(self, question: Held) -> dict[str, Any]:
        return {"items": list(question.options)}

    def from_csv(self, cells: dict[str, Any]) -> dict[str, Any]:
        return {"items": cells["options"]}

    def arrange(self, order: tuple[int, ...]) -> tuple[int, ...]:
        return never_in_order(order)

    def public(self, question: Held, order: tuple[int, ...]) -> dict[str, Any]:
        return {"items": [question.options[original] for original in order]}

    def judge(self, question: Held, given: Mapping[str, Any], order: tuple[int, ...]) -> Judged:
        chosen = given.get("order")
        if (
            not isinstance(chosen, list)
            or not all(whole_number(i) for i in chosen)
            or sorted(chosen) != list(range(len(order)))
        ):
            raise BadAnswer(_("Send every item once, in the order you chose."))
        sequence = [order[i] for i in chosen]
        in_place = sum(1 for place, original in enumerate(sequence) if place == original)
        return Judged(option=0, response=sequence, credit=in_place / len(sequence), right=in_place == len(sequence))

    def shown(self, question: Held, order: tuple[int, ...], option: int, response: Any) -> Any:
        return [order.index(i) for i in response or () if 0 <= i < len(order)]

    def reveal(self, question: Held, order: tuple[int, ...], answers: Sequence[tuple[int, Any]]) -> dict[str, Any]:
        right = list(range(len(question.options)))
        return {
            "correct_order": [order.index(i) for i in right],
            "all_in_place": sum(1 for _option, response in answers if response == right),
        }

    def answer_text(self, question: Held) -> str:
        return " > ".join(question.options)

    def response_text(self, question: Held, option: int, response: Any) -> str:
        items = question.options
        return " > ".join(items[i] if 0 <= i < len(items) else "?" for i in response or ())

    def gate_asks(self, question: Held) -> list[GateAsk]:
        return [yes_no_ask(question, f"Is this the right order: {' → '.join(question.options)}?")]
