"""The one validation every question goes through, however it enters: pack, form, CSV, JSON, model."""

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from django.utils.translation import gettext as _

from quiz.exceptions import InvalidQuestion
from quiz.images import QuestionImage, clean_image

MIN_OPTIONS = 2
MAX_OPTIONS = 6
MAX_TEXT = 300
MAX_OPTION = 120
MAX_EXPLANATION = 500
MAX_SOURCE = 500
OPTION_LETTERS = "ABCDEF"


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
    text: str
    options: tuple[str, ...]
    correct_index: int
    explanation: str = ""
    source: str = ""
    # A picture shown with the question (quiz/images.py); the checker never sees it.
    image: QuestionImage | None = None

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["options"] = list(self.options)
        data["image"] = {"name": self.image.name, "alt": self.image.alt} if self.image else None
        return data


def _clean_text(value: Any, *, field: str, max_length: int, required: bool) -> str:
    if value is None:
        value = ""
    if not isinstance(value, str):
        raise InvalidQuestion(_("%(field)s must be text") % {"field": field})
    value = " ".join(value.split())
    if required and not value:
        raise InvalidQuestion(_("%(field)s is empty") % {"field": field})
    if len(value) > max_length:
        raise InvalidQuestion(_("%(field)s is longer than %(max)s characters") % {"field": field, "max": max_length})
    return value


def parse_correct(value: Any, option_count: int) -> int:
    """The marked option as a 0-based index, from an int index or a letter A-F / 1-based digit string."""
    if isinstance(value, bool):
        raise InvalidQuestion(_("the correct option must be an index or a letter"))
    if isinstance(value, int):
        index = value
    elif isinstance(value, str) and value.strip():
        token = value.strip().upper()
        if len(token) == 1 and token in OPTION_LETTERS:
            index = OPTION_LETTERS.index(token)
        elif token.isdigit():
            index = int(token) - 1
        else:
            raise InvalidQuestion(
                _("the correct option %(value)r is not a letter A-F or a number 1-6") % {"value": value.strip()}
            )
    else:
        raise InvalidQuestion(_("the correct option is missing"))
    if not 0 <= index < option_count:
        raise InvalidQuestion(_("the correct option points past the %(count)s options") % {"count": option_count})
    return index


def clean_question(raw: Mapping[str, Any]) -> QuestionData:
    """Validate one question. `correct_index` is 0-based; `correct` (letter or 1-based) is also read."""
    if not isinstance(raw, Mapping):
        raise InvalidQuestion(_("a question must be an object"))
    text = _clean_text(raw.get("text", raw.get("question")), field=_("question"), max_length=MAX_TEXT, required=True)
    options_raw = raw.get("options")
    if not isinstance(options_raw, list | tuple):
        raise InvalidQuestion(_("options must be a list"))
    options = tuple(
        _clean_text(option, field=_("option %(number)s") % {"number": n}, max_length=MAX_OPTION, required=True)
        for n, option in enumerate(options_raw, start=1)
    )
    if not MIN_OPTIONS <= len(options) <= MAX_OPTIONS:
        raise InvalidQuestion(
            _("a question needs %(min)s to %(max)s options, not %(count)s")
            % {"min": MIN_OPTIONS, "max": MAX_OPTIONS, "count": len(options)}
        )
    folded = [option.casefold() for option in options]
    if len(set(folded)) != len(folded):
        raise InvalidQuestion(_("two options are the same"))
    if "correct_index" in raw:
        correct = raw["correct_index"]
        if not isinstance(correct, int) or isinstance(correct, bool):
            raise InvalidQuestion(_("correct_index must be a whole number"))
        if not 0 <= correct < len(options):
            raise InvalidQuestion(_("the correct option points past the %(count)s options") % {"count": len(options)})
    else:
        correct = parse_correct(raw.get("correct"), len(options))
    explanation = _clean_text(
        raw.get("explanation"), field=_("explanation"), max_length=MAX_EXPLANATION, required=False
    )
    source = _clean_text(raw.get("source"), field=_("source"), max_length=MAX_SOURCE, required=False)
    image = clean_image(raw.get("image"))
    return QuestionData(
        text=text, options=options, correct_index=correct, explanation=explanation, source=source, image=image
    )
