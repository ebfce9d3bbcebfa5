"""`slide`: a step of a round that asks nothing: a title, a text and an optional picture shown on the big screen
between questions (to open a round, explain a rule, show a picture). The phones say "Look at the screen", an
answer is refused, nothing is scored, and the host's key moves the game on to the next step (no reveal, no
leaderboard). It is counted nowhere as a question: not in "Question 3 of 10", not in the results.

In the round file: `{"kind": "slide", "question": "<the title>", "explanation": "<the text>", "image": ...}`;
the title is the question's text and the text its explanation, so the editor, the CSV and any importer (a
Moodle "description", a Kahoot! slide) fill the fields every question has. The checker reads its text for
claims only (there is no answer to check)."""

from collections.abc import Mapping, Sequence
from typing import Any

from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from quiz.kinds.base import BadAnswer, GateAsk, Held, Judged, Kind, Shape, claims_only_ask


class Slide(Kind):
    name = "slide"
    label = gettext_lazy("Slide (no answer)")
    rule = gettext_lazy("No options: a title (the question) and a text under it (the explanation); nothing to answer.")
    csv_correct = gettext_lazy("empty")
    scored = False
    shuffled = False
    uses_options = False
    tallied = False
    # Not a question: no answer, no reveal, no leaderboard, no number of its own.
    asks = False
    writer_noun = "slides (no question: a title and a short text that opens a topic)"
    writer_hint = (
        "A slide asks nothing: its question is a short title, its explanation the text shown under it (one to "
        "three sentences); it has no fields of its own."
    )
    writer_example: Mapping[str, Any] = {}

    def clean(self, raw: Mapping[str, Any]) -> Shape:
        return Shape()

    def writer_schema(self, *, lengths: bool = True) -> dict[str, dict[str, Any]]:
        return {}

    def as_json(self, question: Held) -> dict[str, Any]:
        return {}

    def csv_cells(self, question: Held) -> dict[str, Any]:
        return {"options": [], "correct": ""}

    def from_csv(self, cells: dict[str, Any]) -> dict[str, Any]:
        return {}

    def public(self, question: Held, order: tuple[int, ...]) -> dict[str, Any]:
        # Nothing is secret on a slide: its text is what the screen shows.
        return {"body": getattr(question, "explanation", "")}

    def judge(self, question: Held, given: Mapping[str, Any], order: tuple[int, ...]) -> Judged:
        raise BadAnswer(_("This is a slide: there is nothing to answer. Look at the screen."))

    def reveal(self, question: Held, order: tuple[int, ...], answers: Sequence[tuple[int, Any]]) -> dict[str, Any]:
        return {}

    def answer_text(self, question: Held) -> str:
        return ""

    def response_text(self, question: Held, option: int, response: Any) -> str:
        return ""

    def gate_asks(self, question: Held) -> list[GateAsk]:
        return [claims_only_ask(question)]
