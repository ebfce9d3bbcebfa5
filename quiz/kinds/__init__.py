"""Question kinds: the one place that knows a question's shape (quiz/kinds/base.py says what a kind is).

`single` (one right option), `true_false`, `multi` (several right), `typed` (type the answer), `order` (put in
order), `number`, `poll`, `open` (a word cloud) and `slide` (asks nothing). A question's `kind` names one; an
empty or absent one is `single`, so every round file and pack from before kinds reads as it did. Adding a kind:
a module here with a `Kind` subclass, its line in `KINDS`, and its drawing in static/js/kinds.js."""

from collections.abc import Mapping
from typing import Any

from django.utils.translation import gettext as _

from quiz.exceptions import InvalidQuestion
from quiz.kinds.base import BadAnswer, GateAsk, Judged, Kind, Shape
from quiz.kinds.multi import Multi
from quiz.kinds.number import Number
from quiz.kinds.open import Open
from quiz.kinds.order import Order
from quiz.kinds.poll import Poll
from quiz.kinds.single import Single, parse_correct
from quiz.kinds.slide import Slide
from quiz.kinds.true_false import TrueFalse
from quiz.kinds.typed import Typed

DEFAULT = "single"
KINDS: dict[str, Kind] = {
    kind.name: kind for kind in (Single(), TrueFalse(), Multi(), Typed(), Order(), Number(), Poll(), Open(), Slide())
}


def kind_named(name: str | None) -> Kind:
    return KINDS[name or DEFAULT]


def kind_of(question: Any) -> Kind:
    """The kind of a question, a question's data or a game's facts (anything with a `kind`)."""
    return KINDS.get(getattr(question, "kind", "") or DEFAULT, KINDS[DEFAULT])


def kind_choices() -> list[tuple[str, Any]]:
    """(name, label) of every kind, the labels translated when shown."""
    return [(kind.name, kind.label) for kind in KINDS.values()]


def kinds_with(**attributes: Any) -> list[str]:
    """The names of the kinds whose attributes have these values (the editor shows a field for those)."""
    return [kind.name for kind in KINDS.values() if all(getattr(kind, k) == v for k, v in attributes.items())]


def read_kind(raw: Mapping[str, Any]) -> Kind:
    name = raw.get("kind") or DEFAULT
    if not isinstance(name, str) or name not in KINDS:
        raise InvalidQuestion(
            _("unknown question kind %(kind)r (one of: %(kinds)s)") % {"kind": name, "kinds": ", ".join(KINDS)}
        )
    return KINDS[name]


__all__ = [
    "DEFAULT",
    "KINDS",
    "BadAnswer",
    "GateAsk",
    "Judged",
    "Kind",
    "Shape",
    "kind_choices",
    "kind_named",
    "kind_of",
    "kinds_with",
    "parse_correct",
    "read_kind",
]
