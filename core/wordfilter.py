"""Words a class may not put on a projector: nicknames, team names and the players' own words the host screen
shows (an open question's cloud, a typed answer's common answers) are checked against a word list for English,
German and Spanish: the dictionaries the `glin-profanity` package ships (MIT licence, on PyPI), plus the words
of the QUIZ_WORD_FILTER_EXTRA setting; QUIZ_WORD_FILTER=0 turns the check off.

Text is compared folded (no case, no accents, no punctuation: "Schei-ße" is "schei sse" ~ "scheisse"), each
word of it, the whole of it, and the whole without spaces ("f u c k" and "f.u.c.k" too), never as a part of a
longer word ("Scunthorpe" is fine)."""

import functools
import json
import unicodedata
from importlib import resources

from django.conf import settings

LANGUAGES = ("english", "german", "spanish")


def fold(text: str) -> str:
    """No accents, no case, no punctuation, single spaces (what typed answers are matched by)."""
    kept = []
    for char in unicodedata.normalize("NFKD", text):
        category = unicodedata.category(char)
        if category == "Mn":
            continue
        kept.append(" " if category[0] in "PSZ" else char)
    return " ".join("".join(kept).casefold().split())


@functools.cache
def _shipped() -> frozenset[str]:
    folder = resources.files("glin_profanity").joinpath("data", "dictionaries")
    words: set[str] = set()
    for language in LANGUAGES:
        listed = json.loads(folder.joinpath(f"{language}.json").read_text("utf-8"))["words"]
        # Spellings with symbols ("a$$", "s&m") fold into other words ("a", "s m"): text is compared folded, so
        # they would refuse an innocent "a"; their plain spellings are listed too.
        words.update(fold(word) for word in listed if all(char.isalnum() or char in " -'" for char in word))
    return frozenset(word for word in words if len(word) > 1)


def _extra() -> frozenset[str]:
    return frozenset(fold(word) for word in settings.QUIZ_WORD_FILTER_EXTRA if fold(word))


def blocked(text: object) -> bool:
    """Whether `text` holds a word of the list (always False with the filter off)."""
    if not settings.QUIZ_WORD_FILTER or not isinstance(text, str):
        return False
    folded = fold(text)
    if not folded:
        return False
    words = _shipped() | _extra()
    padded = f" {folded} "
    if folded in words or folded.replace(" ", "") in words:
        return True
    return any(token in words for token in folded.split()) or any(
        f" {word} " in padded for word in words if " " in word
    )
