"""`poll`: options and no right answer. No points, and a player's streak neither grows nor breaks; the reveal
is how the room voted. The checker does not check it: there is nothing to be wrong."""

from collections.abc import Mapping, Sequence
from typing import Any

from django.utils.translation import gettext_lazy

from quiz.kinds.base import Held, Judged, Kind, Shape, clean_options, distribution, option_words, options_schema
from quiz.kinds.single import chosen_option


class Poll(Kind):
    name = "poll"
    label = gettext_lazy("Poll (no right answer)")
    rule = gettext_lazy("2 to 6 options, none of them right: it asks for opinions and scores nothing.")
    csv_correct = gettext_lazy("empty")
    scored = False
    writer_noun = "polls (no right answer)"
    writer_hint = (
        "A poll asks the room for an opinion or a preference: 2 to 6 options, none of them right, no two alike; "
        "its explanation is one short line on what it asks, or empty; its support, in a round from a source text, "
        "is the sentence it asks about."
    )
    writer_example = {"options": ["...", "..."]}

    def clean(self, raw: Mapping[str, Any]) -> Shape:
        return Shape(options=clean_options(raw.get("options")))

    def writer_schema(self, *, lengths: bool = True) -> dict[str, dict[str, Any]]:
        return {"options": options_schema(lengths=lengths)}

    def as_json(self, question: Held) -> dict[str, Any]:
        return {"options": list(question.options)}

    def judge(self, question: Held, given: Mapping[str, Any], order: tuple[int, ...]) -> Judged:
        return Judged(option=order[chosen_option(given, len(order))], response=None, credit=0.0, right=False)

    def reveal(self, question: Held, order: tuple[int, ...], answers: Sequence[tuple[int, Any]]) -> dict[str, Any]:
        counts = distribution(question, answers)
        return {"distribution": [counts[original] for original in order]}

    def answer_text(self, question: Held) -> str:
        return ""

    def response_text(self, question: Held, option: int, response: Any) -> str:
        return option_words(question, option)
