"""What a nickname may be: at most NICKNAME_MAX characters as a person counts them (grapheme clusters, so
"👩🏽‍🚀" or "🏳️‍🌈" is one), any emoji sequence (joiners, flags, skin tones, variation selectors, keycaps), and
nothing a person cannot see: no control, private-use, unassigned or invisible character outside an emoji."""

import regex

from core.wordfilter import blocked
from lobby.exceptions import NicknameBlocked, NicknameCharacters, NicknameInvalid

NICKNAME_MAX = 20
# The longest emoji sequences are 10 code points (a kiss with two skin tones); a letter with more marks stacked
# on it than that is drawn over the names around it.
GRAPHEME_MAX_CODE_POINTS = 10
# What the nickname column holds: NICKNAME_MAX clusters of the longest kind.
NICKNAME_MAX_CODE_POINTS = NICKNAME_MAX * GRAPHEME_MAX_CODE_POINTS

_GRAPHEME = regex.compile(r"\X")
_NEVER = regex.compile(r"[\p{Cc}\p{Cs}\p{Co}\p{Cn}]")
_INVISIBLE = regex.compile(r"[\p{Cf}\p{Default_Ignorable_Code_Point}]")
_VARIATION_SELECTOR = regex.compile(r"[\uFE00-\uFE0F\U000E0100-\U000E01EF]")
# What makes a cluster an emoji: its joiners, tags and selectors are then part of the picture.
_EMOJI = regex.compile(r"[\p{Extended_Pictographic}\p{Regional_Indicator}\u20E3]")
_BLANK = regex.compile(r"[\s\u2800]")  # whitespace, and the braille blank that draws as nothing


def graphemes(text: str) -> list[str]:
    return _GRAPHEME.findall(text)


def _cluster_is_visible(cluster: str) -> bool:
    if len(cluster) > GRAPHEME_MAX_CODE_POINTS:
        return False
    if not _INVISIBLE.search(cluster) or _EMOJI.search(cluster):
        return True
    # A variation selector after a letter (a CJK ideograph's variant) is still that letter.
    rest = _VARIATION_SELECTOR.sub("", cluster)
    return bool(rest) and not _INVISIBLE.search(rest) and len(rest) < len(cluster)


def clean_nickname(raw: object) -> tuple[str, str]:
    """The nickname as shown (runs of whitespace made one space) and the key that makes it unique in a room
    (casefolded, cut to the key column's NICKNAME_MAX code points). Raises NicknameInvalid for a wrong length,
    NicknameCharacters for a character a person cannot see."""
    if not isinstance(raw, str):
        raise NicknameInvalid()
    nickname = " ".join(raw.split())
    if _NEVER.search(nickname):
        raise NicknameCharacters()
    clusters = graphemes(nickname)
    if not all(_cluster_is_visible(cluster) for cluster in clusters):
        raise NicknameCharacters()
    if not 1 <= len(clusters) <= NICKNAME_MAX:
        raise NicknameInvalid()
    if not _BLANK.sub("", nickname):
        raise NicknameCharacters()
    if blocked(nickname):
        raise NicknameBlocked()
    # casefold() can lengthen a name ("ß" -> "ss"); the key column holds NICKNAME_MAX code points.
    return nickname, nickname.casefold()[:NICKNAME_MAX]
