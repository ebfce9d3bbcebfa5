"""Reading the model's reply: each question as soon as its closing brace streams in (`ItemExtractor`), the
whole reply read defensively when the stream showed none (`parse_reply`), and each item through the project's
one validation. Bounded in time and memory whatever the reply holds."""

import itertools
import json
import re
import unicodedata
from collections.abc import Sequence
from typing import Any

from django.utils.translation import gettext as _

from quiz.exceptions import InvalidQuestion
from quiz.kinds import DEFAULT, read_kind
from quiz.validation import MAX_SOURCE, QuestionData, clean_question

# A question sits at most this deep in a reply ({"quiz": {"questions": [{...}]}} and a stray brace): deeper
# objects are never parsed, so a hostile nesting costs neither quadratic parsing nor Python's recursion limit.
MAX_ITEM_DEPTH = 4
# Longer than any question clean_question accepts, even JSON-escaped: a longer object is never parsed.
MAX_ITEM_CHARS = 64 * 1024
# The whole-reply fallback reads only this much of a reply that the streaming reader found nothing in, from
# at most this many opening brackets: a reply of brackets alone must not cost a parse from each one.
FALLBACK_MAX_CHARS = 256 * 1024
FALLBACK_MAX_STARTS = 64


def _looks_like_question(value: Any) -> bool:
    return isinstance(value, dict) and ("options" in value or "question" in value or "text" in value)


# Characters that can change the reader's state; everything between them is skipped at C speed.
_SIGNIFICANT = re.compile(r'["\\{}\[\]]')


class ItemExtractor:
    """Finds each complete question object in a streamed JSON reply as soon as its closing brace arrives.

    Tolerates code fences and chatty text around the JSON: it tracks strings and brackets, and an object
    counts as a question when it is an element of an array and has question-like keys.

    Linear in the reply and bounded in memory, whatever the reply holds: it keeps the reply's beginning (what
    the whole-reply fallback reads) and the text of the objects still open, never the whole reply; brackets
    deeper than MAX_ITEM_DEPTH are only counted; an object longer than MAX_ITEM_CHARS is never parsed.
    """

    def __init__(self) -> None:
        self._head: list[str] = []
        self._head_length = 0
        # The reply from `_tail_start` on: enough to parse every object still open.
        self._tail = ""
        self._tail_start = 0
        self._length = 0
        self._stack: list[tuple[str, int]] = []
        self._deeper = 0
        self._in_string = False
        self._escaped = False

    @property
    def text(self) -> str:
        """The reply's first FALLBACK_MAX_CHARS characters (all of any reply a model could mean)."""
        return "".join(self._head)

    def feed(self, chunk: str) -> list[dict[str, Any]]:
        base = self._length
        self._length += len(chunk)
        if self._head_length < FALLBACK_MAX_CHARS:
            kept = chunk[: FALLBACK_MAX_CHARS - self._head_length]
            self._head.append(kept)
            self._head_length += len(kept)
        self._tail += chunk
        found: list[dict[str, Any]] = []
        position = 0
        if self._escaped and chunk:
            self._escaped = False
            position = 1
        while (match := _SIGNIFICANT.search(chunk, position)) is not None:
            offset = match.start()
            char = chunk[offset]
            position = offset + 1
            if self._in_string:
                if char == "\\":
                    if position < len(chunk):
                        position += 1
                    else:
                        self._escaped = True
                elif char == '"':
                    self._in_string = False
            elif char == '"':
                self._in_string = True
            elif char in "{[":
                if len(self._stack) <= MAX_ITEM_DEPTH:
                    self._stack.append((char, base + offset))
                else:
                    self._deeper += 1
            elif char in "}]":
                if self._deeper:
                    self._deeper -= 1
                elif self._stack:
                    item = self._closed(char, end=base + offset + 1)
                    if item is not None:
                        found.append(item)
        self._trim_tail()
        return found

    def _closed(self, char: str, *, end: int) -> dict[str, Any] | None:
        opener, start = self._stack.pop()
        if char != "}" or opener != "{" or not self._stack or self._stack[-1][0] != "[":
            return None
        if start < self._tail_start:
            return None  # longer than MAX_ITEM_CHARS: no question is
        try:
            value = json.loads(self._tail[start - self._tail_start : end - self._tail_start])
        except (ValueError, RecursionError):
            return None
        return value if _looks_like_question(value) else None

    def _trim_tail(self) -> None:
        open_items = [
            start
            for depth, (opener, start) in enumerate(self._stack)
            if opener == "{" and depth and self._stack[depth - 1][0] == "["
        ]
        keep_from = max(min(open_items, default=self._length), self._length - MAX_ITEM_CHARS)
        if keep_from > self._tail_start:
            self._tail = self._tail[keep_from - self._tail_start :]
            self._tail_start = keep_from


_FENCE = re.compile(r"```[a-zA-Z]*\s*\n?(.*?)```", re.DOTALL)


def parse_reply(text: str) -> list[Any]:
    """The questions of a whole reply, read defensively: code fences, the outermost JSON value, trailing text."""
    text = text[:FALLBACK_MAX_CHARS]
    candidates = [match.group(1) for match in _FENCE.finditer(text)] + [text]
    decoder = json.JSONDecoder()
    for candidate in candidates:
        starts = (index for index, char in enumerate(candidate) if char in "{[")
        for index in itertools.islice(starts, FALLBACK_MAX_STARTS):
            try:
                value, _end = decoder.raw_decode(candidate, index)
            except (ValueError, RecursionError):
                continue
            questions = _questions_in(value)
            if questions is not None:
                return questions
    return []


def _questions_in(value: Any) -> list[Any] | None:
    if isinstance(value, dict):
        for key in ("questions", "items", "quiz"):
            if isinstance(value.get(key), list):
                # Every item of the model's list, objects or not: one that is not an object is counted invalid
                # with its reason, not dropped unseen.
                return list(value[key])
        return [value] if _looks_like_question(value) else None
    if isinstance(value, list) and any(isinstance(item, dict) for item in value):
        return [item for item in value if isinstance(item, dict)]
    return None


def clean_item(raw: Any, *, grounded: bool, kinds: Sequence[str] = (DEFAULT,)) -> QuestionData:
    """One model item through the project's one validation; raises InvalidQuestion with the reason. Its `kind`
    (none: the default) must be one of `kinds`, those the host asked for; only the fields that kind's schema
    names are read (never a picture or a source the model made up)."""
    if not isinstance(raw, dict):
        return clean_question(raw)  # refused: "a question must be an object"
    kind = read_kind(raw)
    if kind.name not in kinds:
        raise InvalidQuestion(
            _("a question of kind %(kind)r, which this round did not ask for (asked for: %(kinds)s)")
            % {"kind": kind.name, "kinds": ", ".join(kinds)}
        )
    item = {key: raw[key] for key in ("question", "text") if key in raw}
    item |= kind.from_writer(raw)
    item["kind"] = kind.name
    item["explanation"] = raw.get("explanation") or ""
    if grounded:
        support = raw.get("support")
        if not isinstance(support, str) or not support.strip():
            raise InvalidQuestion("no supporting sentence from the source")
        support = " ".join(support.split())
        item["source"] = support if len(support) <= MAX_SOURCE else support[: MAX_SOURCE - 1] + "…"
    return clean_question(item)


# "Who is the first planet…" and "What is the first planet…" ask the same thing: a leading question word, with
# its "is/are/was/were" (or the "'s" of "what's"), says nothing about which question it is.
_LEADING_QUESTION_WORDS = re.compile(r"^(?:who|what|which)(?: (?:is|are|was|were|s))? ")


def dedupe_key(text: str) -> str:
    """What two questions share when they repeat each other: case, punctuation, spacing and a leading
    "who/what/which is/are/was" set aside (compatibility forms folded too: "ﬁ" is "fi")."""
    words = " ".join(re.sub(r"[^\w\s]|_", " ", unicodedata.normalize("NFKC", text).casefold()).split())
    return _LEADING_QUESTION_WORDS.sub("", words, count=1)
