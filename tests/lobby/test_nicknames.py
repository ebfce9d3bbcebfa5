"""Nicknames count what a person sees and take any emoji, but nothing a person cannot see."""

import pytest

from lobby import services
from lobby.exceptions import NicknameCharacters, NicknameInvalid
from lobby.rules.nicknames import clean_nickname

EMOJI_NAMES = [
    "🦊🎉 Zoë 👩🏽‍🚀",  # a joiner and a skin tone
    "🏳️‍🌈 Rainbow",  # a variation selector and a joiner
    "🇪🇸 🇩🇪 Flags",  # regional indicators
    "🏴󠁧󠁢󠁳󠁣󠁴󠁿 Scot",  # a tag sequence
    "1️⃣ Keycap",
    "👩🏽‍❤️‍💋‍👨🏿",  # ten code points, one picture
    "👨‍👩‍👧‍👦" * 20,  # twenty families: 20 characters as a person counts them
    "Zoë" + "🧑🏿‍🦱" * 17,
]


@pytest.mark.parametrize("name", EMOJI_NAMES)
def test_any_emoji_sequence_is_a_nickname(name):
    assert clean_nickname(name)[0] == name


def test_the_length_counts_what_a_person_sees():
    assert clean_nickname("e\u0301" * 20)[0] == "e\u0301" * 20  # 40 code points, 20 letters
    with pytest.raises(NicknameInvalid) as refused:
        clean_nickname("👍" * 21)
    assert type(refused.value) is NicknameInvalid and "1 to 20" in str(refused.value)


@pytest.mark.parametrize(
    "name",
    [
        "Ada\u200b",  # zero-width space
        "A\u200dda",  # a joiner between letters
        "\u2060Ada",  # word joiner
        "Ad\u00ada",  # soft hyphen
        "Ada\u202e",  # right-to-left override
        "\u3164",  # Hangul filler: a name that draws as nothing
        "\u3164\u3164 \u115f",
        "\u2800\u2800",  # braille blank
        "\ufe0f",  # a variation selector on its own
        "Ada\x07",
        "Ada\ue000",  # private use
        "Z" + "\u0336" * 12,  # marks stacked over the names around it
    ],
)
def test_control_and_invisible_characters_are_refused_with_a_message_that_says_so(name):
    with pytest.raises(NicknameCharacters, match="invisible or control"):
        clean_nickname(name)


@pytest.mark.django_db
def test_an_emoji_nickname_joins_a_room_and_is_stored_whole(make_room):
    room = make_room().room
    for name in EMOJI_NAMES:
        assert services.player_join(code=room.code, nickname=name).player.nickname == name
    assert sorted(room.players.values_list("nickname", flat=True)) == sorted(EMOJI_NAMES)
