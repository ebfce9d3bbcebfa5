"""Generated friendly names: the words (kind, filtered, short enough for a number after them), the generator
(unique in a room, a number once every name is taken) and a room with them on, joined over the real socket in
three languages."""

import random

import pytest
from channels.db import database_sync_to_async

from core.wordfilter import blocked
from lobby.models import Room
from lobby.rules import name_words
from lobby.rules.friendly_names import DRAWS, all_names, friendly_name, language_of
from lobby.rules.nicknames import NICKNAME_MAX, clean_nickname
from lobby.services import JoinIn, players_join
from quiz.models import Round
from tests.factories import RoomFactory, RoundFactory
from tests.support.communicator import Client

WORDS = {
    "en": (name_words.ENGLISH_ADJECTIVES, name_words.ENGLISH_ANIMALS),
    "de": (name_words.GERMAN_ADJECTIVES, [animal for animal, _gender in name_words.GERMAN_ANIMALS]),
    "es": (
        [form for forms in name_words.SPANISH_ADJECTIVES for form in forms],
        [animal for animal, _gender in name_words.SPANISH_ANIMALS],
    ),
}


@pytest.mark.parametrize("language", ["en", "de", "es"])
def test_each_language_has_forty_kind_words_of_each_and_every_name_passes_the_filter(language):
    adjectives, animals = WORDS[language]
    assert len(set(adjectives)) >= 40 and len(set(animals)) >= 40
    assert [word for word in [*adjectives, *animals] if blocked(word)] == []
    names = all_names(language)
    assert len(names) >= 40 * 40
    assert [name for name in names if blocked(name)] == []
    # Room for " 99" after any of them, and each a nickname the join would take as it is.
    assert max(map(len, names)) <= NICKNAME_MAX - 3
    assert all(clean_nickname(f"{name} 99")[0] == f"{name} 99" for name in names)
    assert len({name.casefold() for name in names}) == len(names)


def test_german_adjectives_take_their_animals_gender_and_spanish_names_put_the_animal_first():
    german = set(all_names("de"))
    assert {"Mutiger Otter", "Mutige Eule", "Mutiges Pferd", "Leiser Fuchs", "Leise Maus"} <= german
    assert "Mutige Otter" not in german and "Mutiger Eule" not in german
    spanish = set(all_names("es"))
    assert {"Nutria valiente", "Zorro rápido", "Cebra rápida", "Oso sabio"} <= spanish
    assert "Cebra rápido" not in spanish and "Valiente nutria" not in spanish
    assert "Brave Otter" in all_names("en")


def test_a_page_language_picks_the_names_language():
    assert [language_of(code) for code in ("de", "de-at", "ES", "en-gb", "fr", None, 3)] == [
        "de", "de", "es", "en", "en", "en", "en",
    ]  # fmt: skip


def test_a_name_is_never_one_the_room_has_even_when_only_one_is_left():
    names = all_names("en")
    rng = random.Random(7)
    taken = {name.casefold() for name in names[1:]}  # all but the first: random draws keep missing it
    assert friendly_name("en", taken, rng) == names[0]
    # A room filling up one name at a time gets every name once before any number.
    taken, given = set(), []
    for _player in range(len(names)):
        name = friendly_name("en", taken, rng)
        assert name.casefold() not in taken
        taken.add(name.casefold())
        given.append(name)
    assert sorted(given) == sorted(names)


def test_more_players_than_names_get_a_number_the_first_one_free():
    names = all_names("es")
    taken = {name.casefold() for name in names}
    rng = random.Random(3)
    first = friendly_name("es", taken, rng)
    base, number = first.rsplit(" ", 1)
    assert base in names and number == "2"
    taken.add(first.casefold())
    # The same base drawn again goes on to 3; every numbered name stays unique and within a nickname's length.
    again = friendly_name("es", taken, random.Random(3))
    assert again == f"{base} 3"
    for _player in range(300):
        name = friendly_name("es", taken, rng)
        assert name.casefold() not in taken and len(name) <= NICKNAME_MAX
        taken.add(name.casefold())


def test_the_draws_are_bounded_before_the_free_names_are_listed():
    class Counting(random.Random):
        draws = 0

        def choice(self, seq):
            self.draws += 1
            return super().choice(seq)

    names = all_names("de")
    rng = Counting(1)
    friendly_name("de", {name.casefold() for name in names[:-1]}, rng)
    assert rng.draws <= DRAWS + 1


@pytest.mark.django_db
def test_a_room_with_friendly_names_ignores_the_nickname_sent_and_names_each_player_in_their_language():
    room = RoomFactory(friendly_names=True)
    joins = [
        JoinIn(code=room.code, nickname="Scheiße", language="de"),  # not read: no error, a made-up name
        JoinIn(code=room.code, nickname=None, language="es"),
        JoinIn(code=room.code, nickname="", language="en"),
        JoinIn(code=room.code, nickname="Ann", language="en"),
    ]
    results = players_join(joins)
    names = [result.player.nickname for result in results]
    assert names[0] in all_names("de") and names[1] in all_names("es")
    assert names[2] in all_names("en") and names[3] in all_names("en")
    assert len({name.casefold() for name in names}) == 4
    # A room without them reads the nickname as always.
    plain = RoomFactory()
    assert [str(r) if isinstance(r, Exception) else r.player.nickname for r in players_join(
        [JoinIn(code=plain.code, nickname="Ann", language="de"), JoinIn(code=plain.code, nickname="", language="de")]
    )] == ["Ann", "Choose a nickname of 1 to 20 characters."]  # fmt: skip


@pytest.mark.django_db(transaction=True)
async def test_phones_joining_over_the_socket_get_names_in_their_pages_language(sockets):
    room = await database_sync_to_async(RoomFactory)(friendly_names=True)
    got = {}
    for language in ("de", "es", "en", "en"):
        phone = await sockets.open(Client(room.code, headers=[(b"accept-language", language.encode())]))
        await phone.send(type="join", nickname="")
        joined = await phone.until(lambda m: m["type"] == "joined")
        got.setdefault(language, []).append(joined["player"]["nickname"])
    assert got["de"][0] in all_names("de") and got["es"][0] in all_names("es")
    assert all(name in all_names("en") for name in got["en"]) and got["en"][0] != got["en"][1]


@pytest.mark.django_db
def test_the_host_turns_friendly_names_on_when_creating_the_room_and_the_join_page_asks_no_nickname(client):
    round_ = RoundFactory(title="Names quiz")
    Round.objects.filter(pk=round_.pk).update(owner_key="browser-1")
    session = client.session
    session["owner_key"] = "browser-1"
    session.save()
    assert "Friendly names" in client.get("/").content.decode()
    client.post("/", {"source": f"round:{round_.pk}", "timer_seconds": 20, "friendly_names": "on"})
    client.post("/", {"source": f"round:{round_.pk}", "timer_seconds": 20})
    friendly, plain = Room.objects.filter(round=round_).order_by("pk")
    assert (friendly.friendly_names, plain.friendly_names) == (True, False)
    page = client.get(f"/play/{friendly.code}/", HTTP_ACCEPT_LANGUAGE="de").content.decode()
    assert 'id="nickname"' not in page and "Du bekommst einen freundlichen Namen" in page
    assert 'id="nickname"' in client.get(f"/play/{plain.code}/").content.decode()
