"""Generated friendly names: in a room whose host turned them on, each player gets a random "adjective animal" in
their phone's language ("Brave Otter", "Mutiger Otter", "Nutria valiente"; the words are in lobby/rules/name_words.py),
unique in the room. When every name of the language is taken (a room of more players than names) a number
follows a name ("Brave Otter 2"), the first one free."""

import functools
import random
from collections.abc import Container

from lobby.rules.name_words import (
    ENGLISH_ADJECTIVES,
    ENGLISH_ANIMALS,
    GERMAN_ADJECTIVES,
    GERMAN_ANIMALS,
    GERMAN_ENDINGS,
    SPANISH_ADJECTIVES,
    SPANISH_ANIMALS,
)

LANGUAGES = ("en", "de", "es")
# Random draws before the free names are listed: a room far from full finds a free one in a draw or two.
DRAWS = 20
_random = random.SystemRandom()


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


@functools.cache
def all_names(language: str) -> tuple[str, ...]:
    """Every name of a language (en, de, es), each once."""
    if language == "de":
        names = [
            f"{_capital(stem + GERMAN_ENDINGS[gender])} {animal}"
            for stem in GERMAN_ADJECTIVES
            for animal, gender in GERMAN_ANIMALS
        ]
    elif language == "es":
        names = [
            f"{_capital(animal)} {forms[0] if gender == 'm' else forms[1]}"
            for forms in SPANISH_ADJECTIVES
            for animal, gender in SPANISH_ANIMALS
        ]
    else:
        names = [f"{adjective} {animal}" for adjective in ENGLISH_ADJECTIVES for animal in ENGLISH_ANIMALS]
    return tuple(dict.fromkeys(names))


def language_of(code: object) -> str:
    """The names' language for a page's language code ("de-at" -> "de"); English for any other."""
    base = code.split("-")[0].lower() if isinstance(code, str) else ""
    return base if base in LANGUAGES else "en"


def friendly_name(language: object, taken: Container[str], rng: random.Random | None = None) -> str:
    """A name of `language` whose casefolded form is not in `taken` (the room's names, casefolded)."""
    rng = rng or _random
    names = all_names(language_of(language))
    for _draw in range(DRAWS):
        name = rng.choice(names)
        if name.casefold() not in taken:
            return name
    free = [name for name in names if name.casefold() not in taken]
    if free:
        return rng.choice(free)
    base = rng.choice(names)
    number = 2
    while f"{base} {number}".casefold() in taken:
        number += 1
    return f"{base} {number}"
