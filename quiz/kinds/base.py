"""What a question kind says about itself. Every kind is one module of this package, registered in `KINDS`
(quiz/kinds/__init__.py); nothing outside it asks which kind a question is.

A question of any kind is held the same way (quiz.validation.QuestionData, quiz.models.Question and the game's
quiz.selectors.QuestionFacts): its `text`, its `options` (the options to pick from, or the items to put in
order; empty for the kinds without), `correct_index` (the one right option of a `single` question; 0 for the
others) and `key` (what else the kind keeps: the accepted answers, the right value, …). A kind's methods take
any of the three: they read only those attributes.

What must stay secret until the reveal is whatever `public` leaves out: a phone's question frame is built from
`public`, its reveal from `reveal`.

How a model is asked to write one (quiz/generation/prompts.py builds the prompt and the reply's JSON schema from
these): `writer_noun` and `writer_hint` for the instructions, `writer_example` and `writer_schema` for the shape of
its own fields, and `from_writer` to take those fields, and only those, from what the model wrote."""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from django.utils.translation import gettext as _

from core.text import clean_line
from quiz.exceptions import InvalidQuestion

OPTION_LETTERS = "ABCDEF"
MIN_OPTIONS = 2
MAX_OPTIONS = 6
MAX_OPTION = 120


class Held(Protocol):
    text: str
    options: Sequence[str]
    correct_index: int
    key: Mapping[str, Any]


@dataclass(frozen=True)
class Shape:
    """What a kind's `clean` makes of a question's own fields."""

    options: tuple[str, ...] = ()
    correct_index: int = 0
    key: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class Judged:
    """A player's answer as it is stored: `option` (the round's index of the option chosen; 0 for the kinds
    without options), `response` (what else the answer was, in the round's terms; None for a pick of one
    option) and `credit`, the fraction of full marks it earns, 0 to 1. `right` is what counts as a right
    answer: it grows the player's streak."""

    option: int
    response: Any
    credit: float
    right: bool


@dataclass(frozen=True)
class GateAsk:
    """One single-choice question the checker is asked about a question (verifier.gate.GateItem takes it as
    it is, with the question's explanation): `text`, its `options` and the one marked right. A kind the checker
    cannot ask about as one such question is asked several (one per option of a `multi`, ...); the question's
    verdict is the worst of theirs (quiz/checking/kind_checks.py). `claim` is what this ask asks about the question, for
    the host's and the reviewer's words ("" when `text` is the question itself)."""

    text: str
    options: tuple[str, ...]
    correct_index: int
    claim: str = ""


YES, NO = 0, 1
YES_NO = ("Yes", "No")


def yes_no_ask(question: Held, claim: str, *, yes: bool = True) -> GateAsk:
    """Is `claim` true of the question? Asked as "{question} — {claim}", Yes or No, the one `yes` says marked."""
    return GateAsk(text=f"{question.text} — {claim}", options=YES_NO, correct_index=YES if yes else NO, claim=claim)


# What the checker is asked about a step with no answer to check (an open question, a slide): its claims only.
CLAIMS_ONLY = "Claims check only (no answer to check): is every factual claim in this text true?"


def claims_only_ask(question: Held) -> GateAsk:
    """The one ask of a step with no answer: are its title's and text's (its explanation's) claims true? The
    audit names it by `CLAIMS_ONLY`, so it says what was checked and that there was no answer to check."""
    return yes_no_ask(question, CLAIMS_ONLY)


class BadAnswer(Exception):
    """An answer of the wrong shape for its question: the message says what the player should send."""


def clean_text(value: Any, *, field: str, max_length: int, required: bool = True) -> str:
    if value is None:
        value = ""
    if not isinstance(value, str):
        raise InvalidQuestion(_("%(field)s must be text") % {"field": field})
    value = clean_line(value)  # no control character (NUL breaks PostgreSQL), single spaces
    if required and not value:
        raise InvalidQuestion(_("%(field)s is empty") % {"field": field})
    if len(value) > max_length:
        raise InvalidQuestion(_("%(field)s is longer than %(max)s characters") % {"field": field, "max": max_length})
    return value


def clean_options(raw: Any, *, field: str | None = None, minimum: int = MIN_OPTIONS) -> tuple[str, ...]:
    """A list of 2-6 distinct short texts (options, or items to order)."""
    field = field or _("options")
    if not isinstance(raw, list | tuple):
        raise InvalidQuestion(_("%(field)s must be a list") % {"field": field})
    options = tuple(
        clean_text(option, field=_("option %(number)s") % {"number": n}, max_length=MAX_OPTION)
        for n, option in enumerate(raw, start=1)
    )
    if not minimum <= len(options) <= MAX_OPTIONS:
        raise InvalidQuestion(
            _("a question needs %(min)s to %(max)s %(field)s, not %(count)s")
            % {"min": minimum, "max": MAX_OPTIONS, "field": field, "count": len(options)}
        )
    folded = [option.casefold() for option in options]
    if len(set(folded)) != len(folded):
        raise InvalidQuestion(_("two %(field)s are the same") % {"field": field})
    return options


def whole_number(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def text_schema(max_length: int, *, min_length: int = 1, lengths: bool = True) -> dict[str, Any]:
    """A JSON-Schema string; `lengths=False` leaves its lengths out, for servers that refuse string lengths."""
    schema: dict[str, Any] = {"type": "string"}
    if lengths:
        schema.update({"minLength": min_length} if min_length else {}, maxLength=max_length)
    return schema


def options_schema(*, minimum: int = MIN_OPTIONS, lengths: bool = True) -> dict[str, Any]:
    """The JSON-Schema of what `clean_options` accepts (its distinctness aside: a schema cannot fold case)."""
    return {
        "type": "array",
        "items": text_schema(MAX_OPTION, lengths=lengths),
        "minItems": minimum,
        "maxItems": MAX_OPTIONS,
    }


class Kind:
    """The defaults are those of a question answered by picking one of its options."""

    name = ""
    # What the editor and the review queue call it.
    label = ""
    # What a host writes for one (the editor's hint and the import page's help list each kind's), and what the
    # CSV's `correct` cell holds for it.
    rule: Any = ""
    csv_correct: Any = ""
    # Does a right answer score (a poll's does not, and does not break a streak either)?
    scored = True
    # Are its options shown in the room's own shuffled order (lobby.rules.machine.option_order)?
    shuffled = True
    # The editor (quiz/forms.py): does it fill the options A-F, and which of its fields holds the answer:
    # "correct" (one option's radio), "correct_many" (a box per option), "truth" (true or false), "answers"
    # (accepted answers), "value" (the number, its tolerance, min, max and unit), "up_to" (how many answers a
    # player may send), or none.
    uses_options = True
    answer_field = ""
    # Are its answers counted per option on the results page?
    tallied = True
    # Is it a question at all? A slide is not: no answer, no reveal, no number, not in the results.
    asks = True

    # What the writer's instructions call questions of this kind ("multiple-choice questions").
    writer_noun = ""
    # One line telling the model how to write one of its own fields.
    writer_hint = ""
    # Its own fields as the instructions show them, in the order of `writer_schema`.
    writer_example: Mapping[str, Any] = {}

    def clean(self, raw: Mapping[str, Any]) -> Shape:
        raise NotImplementedError

    def writer_schema(self, *, lengths: bool = True) -> dict[str, dict[str, Any]]:
        """The JSON-Schema of its own fields as a model writes them (after "question", before "explanation"), by
        name, each required, bounded as `clean` bounds them as far as a schema can; `lengths=False` leaves string
        lengths out."""
        raise NotImplementedError

    def from_writer(self, raw: Mapping[str, Any]) -> dict[str, Any]:
        """The fields of a model's item that `clean` is given: those its schema names, never a picture or a
        source the model made up."""
        return {name: raw[name] for name in self.writer_schema(lengths=False) if name in raw}

    def as_json(self, question: Held) -> dict[str, Any]:
        """Its own fields in the round JSON (after "question"; `kind` is added for every kind but `single`)."""
        raise NotImplementedError

    def csv_cells(self, question: Held) -> dict[str, Any]:
        """Its own fields as the CSV's cells: "options" (a list, for option_a…option_f), "correct" and, for a
        number, "tolerance", "min", "max", "unit"."""
        return {"options": list(question.options), "correct": ""}

    def from_csv(self, cells: dict[str, Any]) -> dict[str, Any]:
        """The CSV's cells (the same names, "options" a list) as the fields `clean` reads."""
        return {"options": cells["options"]}

    def arrange(self, order: tuple[int, ...]) -> tuple[int, ...]:
        """A room's shuffle of its options, as this kind shows them (an `order` question never in order)."""
        return order

    def public(self, question: Held, order: tuple[int, ...]) -> dict[str, Any]:
        """What a phone is shown of it while it is open, besides its text and picture."""
        return {"options": [question.options[original] for original in order]}

    def judge(self, question: Held, given: Mapping[str, Any], order: tuple[int, ...]) -> Judged:
        """A player's answer frame's fields, judged; raises BadAnswer when it is of the wrong shape."""
        raise NotImplementedError

    def shown(self, question: Held, order: tuple[int, ...], option: int, response: Any) -> Any:
        """A stored answer as the player gave it (the positions their room showed): for their phone."""
        return order.index(option) if 0 <= option < len(order) else option

    def reveal(self, question: Held, order: tuple[int, ...], answers: Sequence[tuple[int, Any]]) -> dict[str, Any]:
        """What the host and every phone see at the reveal, from the stored (option, response) of each answer."""
        raise NotImplementedError

    def reveal_hiding(
        self, question: Held, order: tuple[int, ...], answers: Sequence[tuple[int, Any]], hidden: Any
    ) -> dict[str, Any]:
        """`reveal` without the words the host hid (folded): only a kind that shows players' own words has any."""
        return self.reveal(question, order, answers)

    def crowd(self, question: Held, answers: Sequence[tuple[int, Any]]) -> tuple[list[int], int] | None:
        """The answers per option in the round's order and the marked option, for the crowd's verdict (did a
        clear majority pick another one?); None for a kind the crowd cannot overrule."""
        return None

    def option_texts(self, question: Held) -> list[str]:
        """Its options in the round's order as the results page lists them (none for a typed answer, …)."""
        return list(question.options) if self.tallied else []

    def marked(self, question: Held) -> set[int]:
        """The round's indexes of the options marked right."""
        return set()

    def tally(self, question: Held, answers: Sequence[tuple[int, Any]]) -> list[int]:
        """How many answers picked each option, in the round's order."""
        return distribution(question, answers) if self.tallied else []

    def answer_text(self, question: Held) -> str:
        """The right answer in words, for the results CSV, the audit and the review queue."""
        raise NotImplementedError

    def right_text(self, question: Held) -> str:
        """The right answer in words, without option letters (the audit's "correct_option")."""
        return self.answer_text(question)

    def response_text(self, question: Held, option: int, response: Any) -> str:
        """A stored answer in words (the round's letters, not a room's)."""
        raise NotImplementedError

    def gate_asks(self, question: Held) -> list[GateAsk]:
        """What the checker is asked about the question, as single-choice questions (each with the question's
        explanation); none: the checker does not check this kind, and its questions stay "not checked"."""
        return []


def letters(indexes: Sequence[int]) -> str:
    return " ".join(OPTION_LETTERS[i] if 0 <= i < len(OPTION_LETTERS) else "?" for i in indexes)


def option_words(question: Held, index: int) -> str:
    if 0 <= index < len(question.options):
        return f"{OPTION_LETTERS[index]}: {question.options[index]}"
    return "?"


def distribution(question: Held, answers: Sequence[tuple[int, Any]], *, count: int | None = None) -> list[int]:
    """Answers per option in the round's order; `count` options when the question holds none (true/false)."""
    counts = [0] * (len(question.options) if count is None else count)
    for option, _response in answers:
        if 0 <= option < len(counts):
            counts[option] += 1
    return counts
