"""The lobby's pages through Django's test client: create a game, join it, play, host, download the results."""

import re
import uuid

import pytest
from channels.db import database_sync_to_async
from django.conf import settings
from django.utils import translation

from lobby import services
from lobby.models import Room
from quiz.models import Round
from tests.support.communicator import Client


@pytest.fixture(autouse=True)
def _the_default_language_after_each_test():
    """A request with a language cookie leaves that language active in this thread: the next test starts in
    the default one."""
    yield
    translation.activate(settings.LANGUAGE_CODE)


pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def fresh_rate_limits(settings):
    """Per-IP counters live in the cache, which outlives a test: a fresh key prefix starts them at zero."""
    settings.RATELIMIT_KEY_PREFIX = f"ratelimit-test-{uuid.uuid4().hex}"


def _own_round(client, make_round) -> Round:
    """A round of this browser's own (its session's owner key)."""
    round_ = make_round(title="Friday quiz")
    Round.objects.filter(pk=round_.pk).update(owner_key="browser-1")
    session = client.session
    session["owner_key"] = "browser-1"
    session.save()
    return round_


def _hosting(client, make_round) -> Room:
    round_ = _own_round(client, make_round)
    response = client.post("/", {"source": f"round:{round_.pk}", "timer_seconds": 20})
    room = Room.objects.get(round=round_)
    assert response.status_code == 302 and response["Location"] == f"/host/{room.code}/"
    return room


def test_the_home_page_offers_this_browsers_rounds(client, make_round):
    round_ = _own_round(client, make_round)
    page = client.get("/").content.decode()
    assert "Friday quiz" in page and f'value="round:{round_.pk}"' in page
    assert "Friday quiz" not in client.__class__().get("/").content.decode()  # not another browser's


def test_creating_a_game_from_a_round_opens_its_host_screen(client, make_round):
    room = _hosting(client, make_round)
    page = client.get(f"/host/{room.code}/").content.decode()
    assert room.code in page and f"http://testserver/play/{room.code}/" in page  # the join link
    assert "<svg" in page  # its QR code
    assert (room.timer_seconds, room.question_count, room.phase) == (20, 3, "lobby")


def test_a_round_of_another_browser_cannot_be_played(client, make_round):
    other = make_round()
    response = client.post("/", {"source": f"round:{other.pk}", "timer_seconds": 20})
    assert response.status_code == 200 and "That pack or round no longer exists." in response.content.decode()
    assert not Room.objects.exists()


def test_only_the_browser_that_created_the_game_can_host_it_or_download_its_results(client, make_round):
    room = _hosting(client, make_round)
    stranger = client.__class__()
    assert stranger.get(f"/host/{room.code}/").status_code == 403
    assert stranger.get(f"/host/{room.code}/results.csv").status_code == 403
    services.player_join(code=room.code, nickname="Ada")
    response = client.get(f"/host/{room.code}/results.csv")
    assert response.status_code == 200 and response["Content-Type"] == "text/csv; charset=utf-8"
    assert response["Content-Disposition"] == f'attachment; filename="quizgate-{room.code}.csv"'
    assert response.content.decode().splitlines()[1].startswith("1,Ada,0")


def test_join_sends_a_known_code_to_its_game_and_an_unknown_one_home(client, make_room):
    code = make_room().room.code
    response = client.get("/join/", {"code": f" {code.lower()} "})  # typed loosely
    assert response.status_code == 302 and response["Location"] == f"/play/{code}/"
    response = client.get("/join/", {"code": "AAAAAA"}, follow=True)
    assert response.redirect_chain == [("/", 302)]
    assert "There is no game with that code" in response.content.decode()


def test_the_player_page_of_an_unknown_game_says_so(client, make_room):
    code = make_room().room.code
    assert client.get(f"/play/{code}/").status_code == 200
    response = client.get("/play/AAAAAA/")
    assert response.status_code == 404 and "AAAAAA" in response.content.decode()


async def test_wrong_codes_asked_for_as_pages_use_up_the_guesses_of_a_join_over_the_socket(client, make_room, settings):
    """One code-guess limit for the pages and the socket: an address that has guessed ten codes by URL cannot
    go on guessing by joining, not even with a right code."""
    settings.RATELIMIT_CODE_GUESSES_PER_IP = (10, 60)
    code = (await database_sync_to_async(make_room)()).room.code

    def guess_pages():
        return [client.get(f"/play/AAAAA{n}/", REMOTE_ADDR="198.51.100.7").status_code for n in range(2, 9)] + [
            client.get(f"/host/AAAAB{n}/", REMOTE_ADDR="198.51.100.7").status_code for n in range(2, 5)
        ]

    assert await database_sync_to_async(guess_pages)() == [404] * 10
    async with Client(code, ip="198.51.100.7") as guesser:
        await guesser.send(type="join", nickname="Eve")
        assert (await guesser.error())["code"] == "rate_limited"
    async with Client(code, ip="198.51.100.8") as neighbour:  # another address is not held back
        await neighbour.send(type="join", nickname="Ann")
        assert (await neighbour.until(lambda m: m["type"] == "joined"))["player"]["nickname"] == "Ann"


@pytest.mark.parametrize(
    ("language", "finished"),
    [("en", "This game has finished"), ("de", "Dieses Spiel ist zu Ende"), ("es", "Esta partida ha terminado")],
)
def test_a_finished_game_says_so_instead_of_showing_the_join_form(client, make_room, language, finished):
    room = make_room().room
    client.cookies["django_language"] = language
    assert 'id="join-form"' in client.get(f"/play/{room.code}/").content.decode()
    Room.objects.filter(pk=room.pk).update(phase="finished")
    page = client.get(f"/play/{room.code}/").content.decode()
    assert finished in page and 'id="join-form"' not in page and 'id="nickname"' not in page


@pytest.mark.parametrize(
    ("language", "join", "cohost"),
    [
        ("en", "QR code to join game", "QR code to co-host game"),
        ("de", "QR-Code zum Beitreten zu Spiel", "QR-Code zum Mitmoderieren von Spiel"),
        ("es", "Código QR para unirse a la partida", "Código QR para ser coanfitrión de la partida"),
    ],
)
def test_the_qr_codes_title_is_in_the_pages_language(client, make_room, language, join, cohost):
    """The QR code's <title> is its tooltip and what a screen reader says of it."""
    created = make_room()
    code = created.room.code
    client.cookies["django_language"] = language
    session = client.session
    session["host_tokens"] = {code: created.host_token}
    session.save()
    host_page = client.get(f"/host/{code}/").content.decode()
    assert f"<title>{join} {code}</title>" in host_page
    assert f"<title>{cohost} {code}</title>" in client.get(f"/host/{code}/cohost/").content.decode()


@pytest.mark.parametrize(
    ("language", "first", "says"),
    [
        ("de", "Allgemeinwissen", ["(Fragen auf Deutsch)", "(Fragen auf Englisch)", "(Fragen auf Spanisch)"]),
        ("es", "Cultura general", ["(preguntas en Español)", "(preguntas en Inglés)", "(preguntas en Alemán)"]),
        ("en", "Arts and literature", ["(questions in English)", "(questions in German)", "(questions in Spanish)"]),
    ],
)
def test_the_home_page_offers_the_packs_in_its_language_first_and_says_each_packs_language(
    client, language, first, says
):
    from tests.factories import PackFactory

    PackFactory(title="Arts and literature", language="en")
    PackFactory(title="Allgemeinwissen", language="de")
    PackFactory(title="Cultura general", language="es")
    PackFactory(title="World geography", language="en")
    client.cookies["django_language"] = language
    page = client.get("/").content.decode()
    titles = [m.split(">", 1)[1] for m in re.findall(r"<strong[^>]*>[^<]+(?=</strong>)", page)]
    assert titles[0] == first, titles
    assert re.search(rf'value="pack:\d+"\s+checked>\s*<strong lang="{language}">{first}<', page)
    for text in says:
        assert text in page
