"""`open`: a prompt and no right answer. A player sends up to `max_answers` short answers (a word or a few, up to 40
characters each); no points, and a player's streak neither grows nor breaks (a poll's rules). The reveal is the
room's answers as a word cloud: each answer folded as typed answers are (case, accents, punctuation and spaces:
"Café" = "cafe" = " CAFE "), one word per folded answer, sized by how many players sent it. Only the `CLOUD_WORDS`
most common are sent, so a room of 2,000 gets a frame of at most that many words. Words the host hid (`hidden`,
folded) and words of the word list (core/wordfilter.py) are in no reveal. The checker reads its text for claims
only: there is no answer to check."""

import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from core.wordfilter import blocked
from quiz.exceptions import InvalidQuestion
from quiz.kinds.base import BadAnswer, GateAsk, Held, Judged, Kind, Shape, claims_only_ask, whole_number
from quiz.kinds.typed import fold

MAX_WORD = 40
MAX_ANSWERS = 5
DEFAULT_ANSWERS = 3
CLOUD_WORDS = 50


def _max_answers(question: Held) -> int:
    return int((question.key or {}).get("max_answers", DEFAULT_ANSWERS))


def clean_answers(given: Mapping[str, Any], limit: int) -> list[str]:
    """The answers of a player's frame ({"texts": [...]} or {"text": "..."}), tidied of extra spaces and with a
    repeat (as folded) sent once; BadAnswer says what is wrong with any of them."""
    texts = given.get("texts", [given["text"]] if "text" in given else None)
    if not isinstance(texts, list) or not texts:
        raise BadAnswer(_("Type an answer."))
    if len(texts) > limit:
        raise BadAnswer(_("Send at most %(max)s answers.") % {"max": limit} if limit > 1 else _("Send one answer."))
    kept: dict[str, str] = {}
    for text in texts:
        if not isinstance(text, str) or not text.strip():
            raise BadAnswer(_("Type an answer."))
        if len(text) > MAX_WORD:
            raise BadAnswer(_("An answer is at most %(max)s characters.") % {"max": MAX_WORD})
        if any(unicodedata.category(char) in ("Cc", "Cf", "Co", "Cs") for char in text):
            raise BadAnswer(_("An answer cannot contain control or invisible characters."))
        tidy = " ".join(text.split())
        if not fold(tidy):
            raise BadAnswer(_("An answer needs a letter or a digit."))
        kept.setdefault(fold(tidy), tidy)
    return list(kept.values())


def word_cloud(answers: Iterable[Any], *, hidden: Iterable[str] = (), limit: int = CLOUD_WORDS) -> list[dict]:
    """The room's words, most sent first: {"word": its most common spelling, "key": folded, "count": players},
    without the hidden ones, at most `limit`."""
    hidden = set(hidden)
    counts: Counter[str] = Counter()
    spelled: dict[str, Counter[str]] = {}
    for response in answers:
        for text in response if isinstance(response, list) else ():
            key = fold(text) if isinstance(text, str) else ""
            if key and key not in hidden and not blocked(text):
                counts[key] += 1
                spelled.setdefault(key, Counter())[text] += 1
    return [
        {"word": spelled[key].most_common(1)[0][0], "key": key, "count": count}
        for key, count in counts.most_common(limit)
    ]


class Open(Kind):
    name = "open"
    label = gettext_lazy("Open answers (word cloud)")
    rule = gettext_lazy("No options: a prompt; each player sends 1 to 5 short answers, shown as a word cloud.")
    csv_correct = gettext_lazy("how many answers each player may send, 1 to 5 (empty: 3)")
    scored = False
    shuffled = False
    uses_options = False
    answer_field = "up_to"
    tallied = False
    writer_noun = "open questions (a word cloud: no right answer)"
    writer_hint = (
        "An open question asks each player for a word or a short phrase (an opinion, an association, a word for "
        f"today's lesson); max_answers is how many each player may send (1 to {MAX_ANSWERS})."
    )
    writer_example = {"max_answers": DEFAULT_ANSWERS}

    def clean(self, raw: Mapping[str, Any]) -> Shape:
        limit = raw.get("max_answers", DEFAULT_ANSWERS)
        if isinstance(limit, str) and limit.strip().isdigit():
            limit = int(limit)  # a CSV cell
        elif limit in ("", None):
            limit = DEFAULT_ANSWERS
        if not whole_number(limit) or not 1 <= limit <= MAX_ANSWERS:
            raise InvalidQuestion(_("max_answers must be a whole number from 1 to %(max)s") % {"max": MAX_ANSWERS})
        return Shape(key={"max_answers": limit})

    def writer_schema(self, *, lengths: bool = True) -> dict[str, dict[str, Any]]:
        return {"max_answers": {"type": "integer", "minimum": 1, "maximum": MAX_ANSWERS}}

    def as_json(self, question: Held) -> dict[str, Any]:
        return {"max_answers": _max_answers(question)}

    def csv_cells(self, question: Held) -> dict[str, Any]:
        return {"options": [], "correct": str(_max_answers(question))}

    def from_csv(self, cells: dict[str, Any]) -> dict[str, Any]:
        return {"max_answers": cells.get("correct") or DEFAULT_ANSWERS}

    def public(self, question: Held, order: tuple[int, ...]) -> dict[str, Any]:
        return {"up_to": _max_answers(question), "max_length": MAX_WORD}

    def judge(self, question: Held, given: Mapping[str, Any], order: tuple[int, ...]) -> Judged:
        texts = clean_answers(given, _max_answers(question))
        return Judged(option=0, response=texts, credit=0.0, right=False)

    def shown(self, question: Held, order: tuple[int, ...], option: int, response: Any) -> Any:
        return response

    def reveal(self, question: Held, order: tuple[int, ...], answers: Sequence[tuple[int, Any]]) -> dict[str, Any]:
        return self.reveal_hiding(question, order, answers, ())

    def reveal_hiding(
        self, question: Held, order: tuple[int, ...], answers: Sequence[tuple[int, Any]], hidden: Iterable[str]
    ) -> dict[str, Any]:
        return {"cloud": word_cloud((response for _option, response in answers), hidden=hidden)}

    def answer_text(self, question: Held) -> str:
        return ""

    def response_text(self, question: Held, option: int, response: Any) -> str:
        return " | ".join(response) if isinstance(response, list) else "?"

    def gate_asks(self, question: Held) -> list[GateAsk]:
        return [claims_only_ask(question)]
