"""`typed`: the player types the answer; one or more accepted answers.

Matching forgives case, accents, punctuation and spaces anywhere ("São Paulo" = "sao paulo" = "Sao-Paulo"), and
in an answer of 6 letters or more one typo: one letter wrong, missing or extra, or two neighbours swapped
("Canbera", "Canberar", "Cnaberra" for "Canberra"). The reveal shows the accepted answer and the room's most
common answers, as text; the host can hide any of them with one click (lobby/services/words.py)."""

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from rapidfuzz.distance import OSA

from core.text import clean_line
from core.wordfilter import blocked, fold
from quiz.exceptions import InvalidQuestion
from quiz.kinds.base import BadAnswer, GateAsk, Held, Judged, Kind, Shape, clean_text, text_schema, yes_no_ask

MAX_ANSWERS = 10
MAX_TYPED = 100
# An accepted answer this long (folded) forgives one typo.
TYPO_FROM = 6
COMMON_SHOWN = 5


def typed_matches(typed: str, accepted: Sequence[str]) -> bool:
    answer = fold(typed)
    if not answer:
        return False
    for candidate in map(fold, accepted):
        if answer == candidate:
            return True
        if len(candidate.replace(" ", "")) >= TYPO_FROM and OSA.distance(answer, candidate, score_cutoff=1) <= 1:
            return True
    return False


class Typed(Kind):
    name = "typed"
    label = gettext_lazy("Type the answer")
    rule = gettext_lazy("No options: the accepted answers, the usual one first (up to 10).")
    csv_correct = gettext_lazy("the accepted answers, separated by |")
    uses_options = False
    answer_field = "answers"
    shuffled = False
    tallied = False
    writer_noun = "questions answered by typing"
    writer_hint = (
        "The answer is short (a word, a name or a number) and the player types it; answers lists every spelling "
        f"that must count as right, the usual one first (1 to {MAX_ANSWERS})."
    )
    writer_example = {"answers": ["...", "..."]}

    def clean(self, raw: Mapping[str, Any]) -> Shape:
        answers = raw.get("answers")
        if isinstance(answers, str):
            answers = [part for part in answers.split("|")]  # a CSV cell: "Canberra | canberra city"
        if not isinstance(answers, list | tuple) or not answers:
            raise InvalidQuestion(_("a typed-answer question needs a list of accepted answers"))
        if len(answers) > MAX_ANSWERS:
            raise InvalidQuestion(_("at most %(max)s accepted answers") % {"max": MAX_ANSWERS})
        cleaned = [
            clean_text(answer, field=_("accepted answer %(number)s") % {"number": n}, max_length=MAX_TYPED)
            for n, answer in enumerate(answers, start=1)
        ]
        if not all(fold(answer) for answer in cleaned):
            raise InvalidQuestion(_("an accepted answer has no letters or digits"))
        return Shape(key={"answers": cleaned})

    def writer_schema(self, *, lengths: bool = True) -> dict[str, dict[str, Any]]:
        return {
            "answers": {
                "type": "array",
                "items": text_schema(MAX_TYPED, lengths=lengths),
                "minItems": 1,
                "maxItems": MAX_ANSWERS,
            }
        }

    def as_json(self, question: Held) -> dict[str, Any]:
        return {"answers": list(question.key["answers"])}

    def csv_cells(self, question: Held) -> dict[str, Any]:
        return {"options": [], "correct": self.answer_text(question)}

    def from_csv(self, cells: dict[str, Any]) -> dict[str, Any]:
        return {"answers": cells["correct"]}

    def public(self, question: Held, order: tuple[int, ...]) -> dict[str, Any]:
        return {"max_length": MAX_TYPED}

    def judge(self, question: Held, given: Mapping[str, Any], order: tuple[int, ...]) -> Judged:
        text = given.get("text")
        if not isinstance(text, str):
            raise BadAnswer(_("Type an answer."))
        if len(text) > MAX_TYPED:
            raise BadAnswer(_("An answer is at most %(max)s characters.") % {"max": MAX_TYPED})
        text = clean_line(text)  # what a column can hold and a screen can show, whoever called
        if not text:
            raise BadAnswer(_("Type an answer."))
        right = typed_matches(text, question.key["answers"])
        return Judged(option=0, response=text, credit=1.0 if right else 0.0, right=right)

    def shown(self, question: Held, order: tuple[int, ...], option: int, response: Any) -> Any:
        return response

    def reveal(self, question: Held, order: tuple[int, ...], answers: Sequence[tuple[int, Any]]) -> dict[str, Any]:
        return self.reveal_hiding(question, order, answers, ())

    def reveal_hiding(
        self, question: Held, order: tuple[int, ...], answers: Sequence[tuple[int, Any]], hidden: Iterable[str]
    ) -> dict[str, Any]:
        """The accepted answers and the room's most common ones (`key`: folded, what the host's hide sends),
        without those the host hid: the next most common takes a hidden one's place."""
        hidden = set(hidden)
        groups: Counter[str] = Counter()
        spelled: dict[str, Counter[str]] = {}
        for _option, response in answers:
            # A word the list refuses never reaches the big screen (core/wordfilter.py), nor one the host hid.
            key = fold(response) if isinstance(response, str) else ""
            if key and key not in hidden and not blocked(response):
                groups[key] += 1
                spelled.setdefault(key, Counter())[response] += 1
        common = [
            {
                "text": spelled[key].most_common(1)[0][0],
                "key": key,
                "count": count,
                "right": typed_matches(key, question.key["answers"]),
            }
            for key, count in groups.most_common(COMMON_SHOWN)
        ]
        return {"answers": list(question.key["answers"]), "common": common}

    def answer_text(self, question: Held) -> str:
        return " | ".join(question.key["answers"])

    def response_text(self, question: Held, option: int, response: Any) -> str:
        return response if isinstance(response, str) else "?"

    def gate_asks(self, question: Held) -> list[GateAsk]:
        # One ask per accepted answer: a wrong one would mark a wrong answer right.
        return [yes_no_ask(question, f"Is “{answer}” a right answer?") for answer in question.key["answers"]]
