"""The word list (core/wordfilter.py): English, German and Spanish words refused however they are spelled, never
as part of a longer word, the host's own words added by a setting, and the filter off by a setting; a nickname,
a team name and the big screen's words go through it."""

import pytest

from core.wordfilter import blocked
from lobby.exceptions import NotNow
from lobby.services.teams import teams_settings_clean
from quiz.kinds.open import word_cloud
from tests.support.communicator import Client

REFUSED = ["fuck", "F.U.C.K", "f u c k", "Scheiße", "Schei-sse", "ARSCHLOCH 99", "mierda", "Gilipollas", "la puta"]
# A letter alone, "late" and "S M" are innocent: the list's "a$$" and "s&m" must not fold into them.
FINE = ["Ann", "Scunthorpe", "Hanna Schmidt", "class assistant", "Mía", "Jürgen", "👩🏽‍🚀", "a", "late", "S M"]


@pytest.mark.parametrize("text", REFUSED)
def test_listed_words_are_refused_in_each_language_however_spelled(text):
    assert blocked(text)


@pytest.mark.parametrize("text", FINE)
def test_ordinary_names_pass(text):
    assert not blocked(text)


def test_the_host_adds_words_and_can_turn_the_filter_off(settings):
    settings.QUIZ_WORD_FILTER_EXTRA = ["Pickle Rick", "Muggle"]
    assert blocked("pickle  rick") and blocked("MÜGGLE") and not blocked("pickle")
    settings.QUIZ_WORD_FILTER = False
    assert not blocked("fuck") and not blocked("Muggle")


def test_the_big_screens_words_and_team_names_go_through_it():
    assert [entry["key"] for entry in word_cloud([["Mierda", "sol"], ["mierda"]])] == ["sol"]
    with pytest.raises(NotNow, match="A team name has a word"):
        teams_settings_clean(teams_mode="named", team_names="Lions\nArschloch")


@pytest.mark.django_db(transaction=True)
async def test_a_filtered_nickname_is_refused_at_join_in_each_language(room):
    code = (await room()).room.code
    cases = [
        ([(b"accept-language", b"de-DE,de;q=0.9")], "Scheiße", "Dieser Spitzname enthält ein Wort"),
        ([(b"cookie", b"django_language=es")], "Mierda", "Ese apodo tiene una palabra"),
        ([], "Fuck you", "That nickname has a word that cannot go on the big screen"),
    ]
    for headers, nickname, expected in cases:
        async with Client(code, headers=headers) as phone:
            await phone.send(type="join", nickname=nickname)
            error = await phone.error()
            assert error["code"] == "nickname_invalid" and error["message"].startswith(expected), error
