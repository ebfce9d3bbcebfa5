"""Which questions share a premise: the key terms (named entities, dates, numbers) two questions have in common.

Plain text rules, no model and no NLP library: a named entity is a run of capitalised words (question words and
other sentence starters left out), a date is a month with a year, a number is a number. Each term weighs 1 or 2;
two questions share a premise when the terms they have in common weigh at least `MIN_SHARED_WEIGHT`, so one
common year or one capitalised sentence opener is not enough, but a multi-word name, a full date, or a name
and a year are.
"""

import re
from collections.abc import Iterable
from dataclasses import dataclass

MIN_SHARED_WEIGHT = 2

MONTHS = {
    name: number
    for number, names in enumerate(
        [
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ],
        start=1,
    )
    for name in names
}
# Capitalised only because they open a sentence or a question: never part of a name.


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


STOPWORDS = _words(
    """
    a an the this that these those which what who whom whose when where why how whichever
    in on at of for by from to into onto with without within about after before during since until under over
    and but or nor so yet as because if than then though although while according
    is was are were be been being do does did has have had can could will would shall should may might must
    it its he she they them his her their we our you your i my me
    all both each every either neither none some any many most more less few one two three four five
    true false yes no not only also even just still
    """
)
# Part of a name ("Apple Cup", "Washington State") but too generic to tie two questions together alone.
GENERIC = _words(
    """
    name named called known famous first last next new old great north south east west
    university state city county river lake mount mountain island islands sea ocean street king queen saint st
    cup award prize team club war battle age era century year years day days
    """
)
_CONNECTORS = frozenset({"of", "the", "de", "da", "del", "der", "van", "von", "la", "le", "and", "du", "y"})
_WORD = r"[A-Z][\w'’\-.]*\w|[A-Z]"
_ENTITY = re.compile(rf"(?:{_WORD})(?:\s+(?:(?:{'|'.join(sorted(_CONNECTORS))})\s+)*(?:{_WORD}))*")
_MONTH_NAMES = "|".join(sorted(MONTHS, key=len, reverse=True))
_DATE = re.compile(
    rf"\b(?:(\d{{1,2}})\s+)?({_MONTH_NAMES})\.?\s+(?:(\d{{1,2}})(?:st|nd|rd|th)?,?\s+)?(\d{{4}})\b", re.IGNORECASE
)
_ISO_DATE = re.compile(r"\b(\d{4})-(\d{2})(?:-(\d{2}))?\b")
_NUMBER = re.compile(r"(?<![\w.])\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\w])|(?<![\w.])\d+(?:\.\d+)?(?![\w])")
_SENTENCE_END = re.compile(r"[.!?:;]\s+|\n+")
_POSSESSIVE = re.compile(r"['’]s?$")


@dataclass(frozen=True)
class KeyTerm:
    key: str  # "entity:apple cup", "date:2021-11", "year:2021", "number:40"
    label: str  # as written, for the reviewer
    weight: int


@dataclass(frozen=True)
class PremiseText:
    """One question as premise grouping reads it: its text, its explanation and its marked option."""

    question_id: int
    text: str
    explanation: str = ""
    marked: str = ""


def _add(found: dict[str, KeyTerm], term: KeyTerm) -> None:
    if term.key not in found or found[term.key].weight < term.weight:
        found[term.key] = term


def _clean_word(word: str) -> str:
    return _POSSESSIVE.sub("", word.strip(".-’'"))


def _entities(piece: str, found: dict[str, KeyTerm]) -> None:
    starts = {0} | {match.end() for match in _SENTENCE_END.finditer(piece)}
    for match in _ENTITY.finditer(piece):
        words = [_clean_word(word) for word in match.group(0).split()]
        at_start = match.start() in starts
        # Leading and trailing stopwords are not part of the name ("Which Apple Cup" -> "Apple Cup").
        while words and (words[0].casefold() in STOPWORDS or words[0].casefold() in _CONNECTORS):
            words.pop(0)
            at_start = False
        while words and (words[-1].casefold() in STOPWORDS or words[-1].casefold() in _CONNECTORS):
            words.pop()
        words = [word for word in words if word]
        if not words:
            continue
        if len(words) == 1 and (words[0].casefold() in MONTHS or words[0].casefold() in GENERIC or len(words[0]) < 2):
            continue
        names = [word for word in words if word[:1].isupper()]
        if len(names) > 1:
            label = " ".join(words)
            _add(found, KeyTerm(key=f"entity:{label.casefold()}", label=label, weight=2))
        # Each name in a run also counts alone ("Washington State" and "Washington" share "Washington"); a word
        # that may only be capitalised because it opens a sentence counts less.
        for word in names:
            if word.casefold() in GENERIC or word.casefold() in MONTHS or len(word) < 2:
                continue
            weight = 1 if (at_start and word == words[0] and len(names) == 1) else 2
            if len(names) > 1:
                weight = 1  # the whole run already carries the weight
            _add(found, KeyTerm(key=f"entity:{word.casefold()}", label=word, weight=weight))


def _dates_and_numbers(piece: str, found: dict[str, KeyTerm]) -> None:
    taken: list[tuple[int, int]] = []
    for match in _DATE.finditer(piece):
        day = match.group(1) or match.group(3)
        month = MONTHS[match.group(2).casefold().rstrip(".")]
        year = match.group(4)
        key = f"date:{year}-{month:02d}" + (f"-{int(day):02d}" if day else "")
        _add(found, KeyTerm(key=key, label=match.group(0).strip(), weight=2))
        _add(found, KeyTerm(key=f"year:{year}", label=year, weight=1))
        taken.append(match.span())
    for match in _ISO_DATE.finditer(piece):
        year, month, day = match.groups()
        _add(found, KeyTerm(key=f"date:{year}-{month}" + (f"-{day}" if day else ""), label=match.group(0), weight=2))
        _add(found, KeyTerm(key=f"year:{year}", label=year, weight=1))
        taken.append(match.span())
    for match in _NUMBER.finditer(piece):
        if any(start <= match.start() < end for start, end in taken):
            continue
        raw = match.group(0)
        value = raw.replace(",", "")
        if re.fullmatch(r"1\d{3}|20\d{2}", value):
            _add(found, KeyTerm(key=f"year:{value}", label=raw, weight=1))
        elif "." in value or len(value) >= 2:
            # One-digit counts ("3 players") tie too many unrelated questions together.
            number = value.rstrip("0").rstrip(".") if "." in value else value.lstrip("0") or "0"
            _add(found, KeyTerm(key=f"number:{number}", label=raw, weight=1))


def key_terms(*pieces: str) -> dict[str, KeyTerm]:
    """The key terms of some texts (a question, its explanation, its marked option), by normalised key."""
    found: dict[str, KeyTerm] = {}
    for piece in pieces:
        if not piece:
            continue
        _entities(piece, found)
        _dates_and_numbers(piece, found)
    return found


def question_terms(question: PremiseText) -> dict[str, KeyTerm]:
    return key_terms(question.text, question.explanation, question.marked)


def shared_terms(first: dict[str, KeyTerm], second: dict[str, KeyTerm]) -> list[KeyTerm]:
    """Terms in both, each at the lower of its two weights, heaviest first."""
    shared = [
        KeyTerm(key=key, label=first[key].label, weight=min(first[key].weight, second[key].weight))
        for key in first.keys() & second.keys()
    ]
    return sorted(shared, key=lambda term: (-term.weight, term.key))


def shares_premise(shared: list[KeyTerm], *, min_weight: int = MIN_SHARED_WEIGHT) -> bool:
    return sum(term.weight for term in shared) >= min_weight


def premise_group(
    origin: PremiseText, others: Iterable[PremiseText], *, min_weight: int = MIN_SHARED_WEIGHT
) -> list[tuple[PremiseText, list[KeyTerm]]]:
    """The other questions that share a premise with `origin`, each with the terms it shares, in the given order."""
    origin_terms = question_terms(origin)
    group = []
    for other in others:
        if other.question_id == origin.question_id:
            continue
        shared = shared_terms(origin_terms, question_terms(other))
        if shares_premise(shared, min_weight=min_weight):
            group.append((other, shared))
    return group
