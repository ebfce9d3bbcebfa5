import pytest

from core.i18n import language_from_scope

pytestmark = pytest.mark.django_db


def _scope(cookie: str | None = None, accept: str | None = None) -> dict:
    headers = [(b"accept-language", accept.encode())] if accept else []
    return {"cookies": {"django_language": cookie} if cookie else {}, "headers": headers}


@pytest.mark.parametrize(
    ("cookie", "accept", "expected"),
    [
        (None, None, "en"),
        (None, "de-DE,de;q=0.9,en;q=0.5", "de"),
        (None, "fr-FR,es;q=0.8", "es"),  # the first language we speak
        ("es", "de-DE", "es"),  # the switch's choice wins over the browser's
        ("xx", "de", "de"),  # a cookie naming no language of ours is ignored
        (None, "fr, *", "en"),
    ],
)
def test_a_socket_speaks_the_language_its_page_was_chosen_in(cookie, accept, expected):
    assert language_from_scope(_scope(cookie, accept)) == expected


def test_a_socket_reads_the_switch_from_its_cookie_header():
    scope = {"headers": [(b"cookie", b"sessionid=abc; django_language=de"), (b"accept-language", b"es")]}
    assert language_from_scope(scope) == "de"


def test_the_language_switch_is_remembered(client):
    page = client.get("/")
    assert '<html lang="en">' in page.content.decode()
    assert 'name="language"' in page.content.decode()
    switched = client.post("/i18n/setlang/", {"language": "de", "next": "/"})
    assert switched.status_code == 302 and switched["Location"] == "/"
    assert client.cookies["django_language"].value == "de"
    assert '<html lang="de">' in client.get("/").content.decode()


def test_the_browser_language_is_used_until_one_is_chosen(client):
    assert '<html lang="es">' in client.get("/", HTTP_ACCEPT_LANGUAGE="es-ES,es;q=0.9").content.decode()


def test_the_javascript_catalogue_is_served(client):
    reply = client.get("/jsi18n/")
    assert reply.status_code == 200 and "gettext" in reply.content.decode()
