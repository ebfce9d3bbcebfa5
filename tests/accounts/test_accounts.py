"""Hosts who sign in keep their rounds and games across browsers; anonymous hosting is what it was."""

import uuid

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from accounts.models import HostAccount
from accounts.services import account_take_browser
from lobby.models import Room
from lobby.services import cohost_link_key
from quiz.models import GenerationJob, Round
from tests.factories import GenerationJobFactory, HostUserFactory, PlayerFactory, RoomFactory, RoundFactory

pytestmark = pytest.mark.django_db

CSV = """question,option_a,option_b,option_c,option_d,correct,explanation,source
What is 6 x 7?,42,36,48,56,A,Six times seven.,arithmetic
How many sides does a hexagon have?,Five,Six,Seven,Eight,B,Six.,geometry
"""
PASSWORD = "correct horse battery"


@pytest.fixture(autouse=True)
def fresh_rate_limits(settings):
    settings.RATELIMIT_KEY_PREFIX = f"ratelimit-test-{uuid.uuid4().hex}"


def _anonymous_round_and_game(browser: Client) -> tuple[Round, Room]:
    """What a host does without an account: import a round, create a game from it, play it to the end."""
    upload = SimpleUploadedFile("round.csv", CSV.encode(), content_type="text/csv")
    response = browser.post("/rounds/import/", {"title": "Staff quiz", "format": "csv", "file": upload})
    assert response.status_code == 200 and "Imported 2 questions" in response.content.decode()
    round_ = Round.objects.get(title="Staff quiz")
    response = browser.post("/", {"source": f"round:{round_.pk}", "timer_seconds": 20})
    room = Room.objects.get(round=round_)
    assert response["Location"] == f"/host/{room.code}/"
    PlayerFactory(room=room, nickname="Ada")
    Room.objects.filter(pk=room.pk).update(phase="finished", question_index=1)
    return round_, room


def _sign_up(browser: Client, username: str, password: str = PASSWORD):
    return browser.post("/accounts/sign-up/", {"username": username, "password1": password, "password2": password})


def _sign_in(browser: Client, username: str, password: str = PASSWORD):
    return browser.post("/accounts/sign-in/", {"username": username, "password": password})


def test_what_a_browser_made_follows_the_host_who_signs_up_to_another_browser():
    laptop = Client()
    round_, room = _anonymous_round_and_game(laptop)
    response = _sign_up(laptop, "mara")
    assert response.status_code == 302 and response["Location"] == "/games/"
    page = laptop.get("/games/").content.decode()
    assert "This browser&#x27;s 1 round and 1 game are now in your account." in page
    assert room.code in page

    classroom = Client()  # another browser: nothing there until the host signs in
    assert room.code not in classroom.get("/games/").content.decode()
    assert "Staff quiz" not in classroom.get("/rounds/").content.decode()
    assert _sign_in(classroom, "mara").status_code == 302
    assert "Staff quiz" in classroom.get("/rounds/").content.decode()
    assert classroom.get(f"/rounds/{round_.pk}/edit/").status_code == 200
    assert f'value="round:{round_.pk}"' in classroom.get("/").content.decode()  # playable from the home page
    games = classroom.get("/games/").content.decode()
    assert room.code in games and "Staff quiz" in games and "finished" in games
    results = classroom.get(f"/host/{room.code}/results/")
    assert results.status_code == 200 and "Ada" in results.content.decode()
    csv = classroom.get(f"/host/{room.code}/results.csv")
    assert csv.status_code == 200 and "1,Ada,0" in csv.content.decode()


def test_another_account_sees_neither_the_round_nor_the_game():
    laptop = Client()
    round_, room = _anonymous_round_and_game(laptop)
    _sign_up(laptop, "mara")
    other = Client()
    _sign_up(other, "olek")
    assert "Staff quiz" not in other.get("/rounds/").content.decode()
    assert other.get(f"/rounds/{round_.pk}/edit/").status_code == 404
    assert other.get(f"/rounds/{round_.pk}/export.csv").status_code == 404
    assert room.code not in other.get("/games/").content.decode()
    denied = other.get(f"/host/{room.code}/results/")
    assert denied.status_code == 403 and "not hosting game" in denied.content.decode()
    assert other.get(f"/host/{room.code}/results.csv").status_code == 403
    assert other.get(f"/host/{room.code}/").status_code == 403


def test_the_owner_signed_in_elsewhere_hosts_an_unfinished_game():
    laptop = Client()
    _sign_up(laptop, "mara")
    round_ = RoundFactory(owner_key=laptop.session["owner_key"])
    laptop.post("/", {"source": f"round:{round_.pk}", "timer_seconds": 20})
    room = Room.objects.get(round=round_)
    tablet = Client()
    _sign_in(tablet, "mara")
    page = tablet.get(f"/host/{room.code}/")
    assert page.status_code == 200 and 'data-token="' in page.content.decode()


def test_signing_in_takes_this_browsers_rounds_into_an_existing_account():
    HostUserFactory(username="mara", password=PASSWORD)
    browser = Client()
    round_, room = _anonymous_round_and_game(browser)
    before = browser.session.session_key
    assert _sign_in(browser, "mara").status_code == 302
    assert browser.session.session_key != before  # a new session key at sign-in
    key = HostAccount.objects.get(user__username="mara").owner_key
    assert Round.objects.get(pk=round_.pk).owner_key == key
    assert Room.objects.get(pk=room.pk).owner_key == key


def test_signing_out_leaves_nothing_of_the_account_in_the_browser():
    browser = Client()
    round_, room = _anonymous_round_and_game(browser)
    _sign_up(browser, "mara")
    assert browser.get("/accounts/sign-out/").status_code == 405  # a link cannot sign anyone out
    response = browser.post("/accounts/sign-out/")
    assert response.status_code == 302 and response["Location"] == "/"
    assert "Staff quiz" not in browser.get("/rounds/").content.decode()
    assert room.code not in browser.get("/games/").content.decode()
    assert browser.get(f"/host/{room.code}/results/").status_code == 403


def test_anonymous_past_games_are_this_browsers():
    browser = Client()
    _, room = _anonymous_round_and_game(browser)
    page = browser.get("/games/").content.decode()
    assert room.code in page and "sign up" in page
    assert browser.get(f"/host/{room.code}/results/").status_code == 200
    assert room.code not in Client().get("/games/").content.decode()


def test_a_weak_or_mistyped_password_is_refused_with_a_reason():
    browser = Client()
    page = _sign_up(browser, "mara", "12345678").content.decode()
    assert "This password is too common." in page and "This password is entirely numeric." in page
    page = browser.post(
        "/accounts/sign-up/", {"username": "mara", "password1": PASSWORD, "password2": PASSWORD + "x"}
    ).content.decode()
    assert "The two password fields didn’t match." in page
    HostUserFactory(username="olek")
    assert "A user with that username already exists." in _sign_up(browser, "olek").content.decode()
    assert not HostAccount.objects.filter(user__username="mara").exists()


def test_sign_in_needs_the_pages_csrf_token():
    HostUserFactory(username="mara", password=PASSWORD)
    browser = Client(enforce_csrf_checks=True)
    assert _sign_in(browser, "mara").status_code == 403
    page = browser.get("/accounts/sign-in/")
    token = page.cookies["csrftoken"].value
    response = browser.post(
        "/accounts/sign-in/", {"username": "mara", "password": PASSWORD, "csrfmiddlewaretoken": token}
    )
    assert response.status_code == 302


def test_changing_the_password():
    browser = Client()
    _sign_up(browser, "mara")
    assert browser.get("/accounts/password/").status_code == 200
    new = "another long passphrase"
    response = browser.post(
        "/accounts/password/", {"old_password": PASSWORD, "new_password1": new, "new_password2": new}
    )
    assert response.status_code == 302 and response["Location"] == "/games/"
    assert "Your password is changed." in browser.get("/games/").content.decode()  # still signed in here
    assert "mara" in browser.get("/games/").content.decode()
    assert _sign_in(Client(), "mara").status_code == 200  # the old one no longer works
    assert _sign_in(Client(), "mara", new).status_code == 302
    assert Client().get("/accounts/password/")["Location"].startswith("/accounts/sign-in/")


def test_a_browser_holding_another_accounts_key_gives_nothing_away():
    mara, olek = HostUserFactory(username="mara"), HostUserFactory(username="olek")
    maras_key = HostAccount.objects.get(user=mara).owner_key
    round_ = RoundFactory(owner_key=maras_key)
    room = RoomFactory(owner_key=maras_key)
    GenerationJobFactory(owner_key=maras_key)
    taken = account_take_browser(user=olek, browser_key=maras_key, host_tokens={})
    assert (taken.rounds, taken.rooms) == (0, 0)
    assert Round.objects.get(pk=round_.pk).owner_key == maras_key
    assert Room.objects.get(pk=room.pk).owner_key == maras_key
    assert GenerationJob.objects.get().owner_key == maras_key


def test_a_browsers_generation_jobs_move_with_its_rounds():
    olek = HostUserFactory(username="olek")
    GenerationJobFactory(owner_key="anonymous-browser")
    RoundFactory(owner_key="anonymous-browser")
    taken = account_take_browser(user=olek, browser_key="anonymous-browser", host_tokens={})
    assert taken.rounds == 1 and GenerationJob.objects.get().owner_key == taken.owner_key


def test_the_owner_hosts_even_where_a_replaced_co_host_link_had_let_the_browser_in():
    laptop = Client()
    _sign_up(laptop, "mara")
    room = RoomFactory(owner_key=laptop.session["owner_key"])
    tablet = Client()
    tablet.get(f"/host/{room.code}/?key={cohost_link_key(room=room)}")  # in by the co-host link, then signed in
    _sign_in(tablet, "mara")
    Room.objects.filter(pk=room.pk).update(cohost_generation=1)  # the link replaced
    assert tablet.get(f"/host/{room.code}/").status_code == 200
    stranger = Client()
    stranger.get(f"/host/{room.code}/?key={cohost_link_key(room=Room.objects.get(pk=room.pk))}")
    assert stranger.get(f"/host/{room.code}/results/").status_code == 200  # a co-host is a host
    Room.objects.filter(pk=room.pk).update(cohost_generation=2)
    assert stranger.get(f"/host/{room.code}/results/").status_code == 403  # a co-host's replaced link: out


def test_signing_up_or_in_goes_back_where_the_host_was_but_never_off_the_site():
    browser = Client()
    response = browser.post(
        "/accounts/sign-up/?next=/rounds/",
        {"username": "mara", "password1": PASSWORD, "password2": PASSWORD, "next": "/rounds/"},
    )
    assert response["Location"] == "/rounds/"
    other = Client()
    response = other.post(
        "/accounts/sign-up/",
        {"username": "olek", "password1": PASSWORD, "password2": PASSWORD, "next": "https://evil.example/"},
    )
    assert response["Location"] == "/games/"
    response = Client().post("/accounts/sign-in/", {"username": "mara", "password": PASSWORD, "next": "//evil.example"})
    assert response["Location"] == "/games/"
