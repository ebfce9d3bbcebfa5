"""`number`: the answer is a number between `min` and `max` (a slider and a number field on the phone).

Points: the exact value earns the full marks; inside the tolerance band they fall off in a straight line to
half at its edge (credit 1 - distance / (2 x tolerance)); outside it nothing. An answer inside the band is a
right answer (it grows the streak). A tolerance of 0 takes the exact value only."""

import math
import statistics
from collections.abc import Mapping, Sequence
from typing import Any

from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from quiz.exceptions import InvalidQuestion
from quiz.kinds.base import BadAnswer, GateAsk, Held, Judged, Kind, Shape, clean_text, text_schema, yes_no_ask

MAX_UNIT = 20


def _number(value: Any) -> int | float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _tidy(value: float) -> int | float:
    return int(value) if float(value).is_integer() and abs(value) < 2**53 else value


def number_credit(*, value: float, answer: float, tolerance: float) -> float:
    distance = abs(value - answer)
    if tolerance <= 0:
        return 1.0 if distance == 0 else 0.0
    if distance > tolerance * (1 + 1e-12):
        return 0.0
    return 1 - min(distance, tolerance) / (2 * tolerance)


def _cell_number(cell: Any) -> Any:
    """A CSV cell's number ("1969", "3.5", "3,5"); the text as it is when it is none (clean says why)."""
    text = str(cell).strip().replace(",", ".") if cell is not None else ""
    try:
        value = float(text)
    except ValueError:
        return text
    return _tidy(value) if math.isfinite(value) else text


class Number(Kind):
    name = "number"
    label = gettext_lazy("A number")
    rule = gettext_lazy(
        "The right number, how far off still counts as right, and the lowest and highest a player can give; "
        "a unit if you like."
    )
    csv_correct = gettext_lazy("the right number (and the columns tolerance, min, max and unit)")
    uses_options = False
    answer_field = "value"
    shuffled = False
    tallied = False
    writer_noun = "questions whose answer is a number"
    writer_hint = (
        "The answer is a number, held in answer; min and max bound the slider the player answers with (min below "
        "max, the answer between them and not always in the middle); tolerance is how far off still scores (0: "
        'exact only); unit is the answer\'s unit, or "".'
    )
    writer_example = {"answer": 1969, "tolerance": 0, "min": 1900, "max": 2000, "unit": ""}

    def clean(self, raw: Mapping[str, Any]) -> Shape:
        fields = {}
        for name in ("answer", "min", "max"):
            fields[name] = _number(raw.get(name))
            if fields[name] is None:
                raise InvalidQuestion(_("a number question's %(field)s must be a number") % {"field": name})
        tolerance = _number(raw.get("tolerance", 0))
        if tolerance is None or tolerance < 0:
            raise InvalidQuestion(_("a number question's tolerance must be a number of 0 or more"))
        low, high, answer = fields["min"], fields["max"], fields["answer"]
        if not low < high:
            raise InvalidQuestion(_("a number question's min must be below its max"))
        if not low <= answer <= high:
            raise InvalidQuestion(_("a number question's answer must lie between its min and max"))
        unit = clean_text(raw.get("unit", ""), field=_("unit"), max_length=MAX_UNIT, required=False)
        return Shape(key={"answer": answer, "tolerance": tolerance, "min": low, "max": high, "unit": unit})

    def writer_schema(self, *, lengths: bool = True) -> dict[str, dict[str, Any]]:
        # min below max and the answer between them are `clean`'s to check: a schema cannot compare two fields.
        return {
            "answer": {"type": "number"},
            "tolerance": {"type": "number", "minimum": 0},
            "min": {"type": "number"},
            "max": {"type": "number"},
            "unit": text_schema(MAX_UNIT, min_length=0, lengths=lengths),
        }

    def as_json(self, question: Held) -> dict[str, Any]:
        key = question.key
        return {name: key[name] for name in ("answer", "tolerance", "min", "max", "unit")}

    def csv_cells(self, question: Held) -> dict[str, Any]:
        key = question.key
        return {"options": [], "correct": key["answer"], **{n: key[n] for n in ("tolerance", "min", "max", "unit")}}

    def from_csv(self, cells: dict[str, Any]) -> dict[str, Any]:
        fields = {"answer": _cell_number(cells["correct"]), "unit": cells.get("unit", "")}
        for name in ("tolerance", "min", "max"):
            fields[name] = _cell_number(cells.get(name, ""))
        if fields["tolerance"] == "":
            fields["tolerance"] = 0
        return fields

    def public(self, question: Held, order: tuple[int, ...]) -> dict[str, Any]:
        key = question.key
        return {"min": key["min"], "max": key["max"], "unit": key["unit"]}

    def judge(self, question: Held, given: Mapping[str, Any], order: tuple[int, ...]) -> Judged:
        key = question.key
        value = _number(given.get("value"))
        if value is None or not key["min"] <= value <= key["max"]:
            raise BadAnswer(_("Give a number from %(min)s to %(max)s.") % {"min": key["min"], "max": key["max"]})
        credit = number_credit(value=value, answer=key["answer"], tolerance=key["tolerance"])
        return Judged(option=0, response=_tidy(value), credit=credit, right=credit > 0)

    def shown(self, question: Held, order: tuple[int, ...], option: int, response: Any) -> Any:
        return response

    def reveal(self, question: Held, order: tuple[int, ...], answers: Sequence[tuple[int, Any]]) -> dict[str, Any]:
        key = question.key
        values = [response for _option, response in answers if _number(response) is not None]
        within = sum(
            1 for value in values if number_credit(value=value, answer=key["answer"], tolerance=key["tolerance"]) > 0
        )
        return {
            "answer": key["answer"],
            "tolerance": key["tolerance"],
            "unit": key["unit"],
            "median": _tidy(statistics.median(values)) if values else None,
            "within": within,
        }

    def answer_text(self, question: Held) -> str:
        key = question.key
        band = f" ± {key['tolerance']}" if key["tolerance"] else ""
        return f"{key['answer']}{band} {key['unit']}".strip()

    def response_text(self, question: Held, option: int, response: Any) -> str:
        return "?" if response is None else f"{response} {question.key.get('unit', '')}".strip()

    def gate_asks(self, question: Held) -> list[GateAsk]:
        key = question.key
        value = " ".join(part for part in (str(_tidy(key["answer"])), key["unit"]) if part)
        band = f" (within ± {_tidy(key['tolerance'])})" if key["tolerance"] else ""
        return [yes_no_ask(question, f"Is {value} right{band}?")]
