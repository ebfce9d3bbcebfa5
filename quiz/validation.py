"""The one validation every question goes through, however it enters: pack, form, CSV, JSON, model."""

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from django.utils.translation import gettext as _

from quiz.exceptions import InvalidQuestion
from quiz.kinds import DEFAULT, parse_correct, read_kind
from quiz.kinds.base import MAX_OPTION, MAX_OPTIONS, MIN_OPTIONS, OPTION_LETTERS, clean_text
from quiz.pictures.images import QuestionImage, clean_image

__all__ = [
    "LANGUAGES",
    "MAX_EXPLANATION",
    "MAX_OPTION",
    "MAX_OPTIONS",
    "MAX_SECONDS",
    "MAX_SOURCE",
    "MIN_SECONDS",
    "MAX_TEXT",
    "MIN_OPTIONS",
    "OPTION_LETTERS",
    "QuestionData",
    "clean_question",
    "parse_correct",
]

MAX_TEXT = 300
MAX_EXPLANATION = 500
MAX_SOURCE = 500
# A question's own time (Kahoot!'s limits run from 5 to 240 seconds).
MIN_SECONDS = 5
MAX_SECONDS = 240


# The languages a round can be written and checked in (code -> the name the model is told).
LANGUAGES = {
    "en": "English",
    "fr": "French",
    "de": "German",
    "es": "Spanish",
    "it": "Italian",
    "nl": "Dutch",
    "pt": "Portuguese",
    "pl": "Polish",
    "sv": "Swedish",
}


@dataclass(frozen=True)
class QuestionData:
    """A question of any kind (quiz/kinds/base.py says how each kind uses `options`, `correct_index` and `key`)."""

    text: str
    options: tuple[str, ...]
    correct_index: int
    explanation: str = ""
    source: str = ""
    # A picture shown with the question (quiz/pictures/images.py); the checker never sees it.
    image: QuestionImage | None = None
    kind: str = DEFAULT
    key: Mapping[str, Any] = field(default_factory=dict, hash=False)  # compared, not hashed (a dict)
    # The question's own time in seconds, used instead of the room's timer; None: the room's.
    seconds: int | None = None

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["options"] = list(self.options)
        data["key"] = dict(self.key)
        data["image"] = {"name": self.image.name, "alt": self.image.alt} if self.image else None
        return data


def clean_question(raw: Mapping[str, Any]) -> QuestionData:
    """Validate one question of any kind (`kind` absent: `single`, whose `correct_index` is 0-based and whose
    `correct`, a letter or a 1-based number, is also read)."""
    if not isinstance(raw, Mapping):
        raise InvalidQuestion(_("a question must be an object"))
    text = clean_text(raw.get("text", raw.get("question")), field=_("question"), max_length=MAX_TEXT)
    kind = read_kind(raw)
    shape = kind.clean(raw)
    explanation = clean_text(raw.get("explanation"), field=_("explanation"), max_length=MAX_EXPLANATION, required=False)
    source = clean_text(raw.get("source"), field=_("source"), max_length=MAX_SOURCE, required=False)
    image = clean_image(raw.get("image"))
    seconds = clean_seconds(raw.get("seconds"))
    return QuestionData(
        text=text,
        options=shape.options,
        correct_index=shape.correct_index,
        explanation=explanation,
        source=source,
        image=image,
        kind=kind.name,
        key=dict(shape.key or {}),
        seconds=seconds,
    )


def clean_seconds(value: Any) -> int | None:
    """A question's own time: absent, null or "" for the room's timer, else MIN_SECONDS to MAX_SECONDS."""
    if value is None or value == "":
        return None
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidQuestion(_("the time per question must be a whole number of seconds"))
    if not MIN_SECONDS <= value <= MAX_SECONDS:
        raise InvalidQuestion(
            _("the time per question must be %(min)s to %(max)s seconds, not %(value)s")
            % {"min": MIN_SECONDS, "max": MAX_SECONDS, "value": value}
        )
    return value
