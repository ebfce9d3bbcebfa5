"""The shareable link: the public URL when set, the LAN address for a page opened on loopback, else as opened."""

import ipaddress

from django.test import RequestFactory

from core.lan import lan_address, shareable_url


def test_the_detected_address_is_not_loopback():
    address = lan_address()
    assert address is None or not ipaddress.ip_address(address).is_loopback


def test_a_page_opened_on_loopback_links_to_the_lan_address(settings):
    settings.QUIZ_LAN_ADDRESS, settings.QUIZ_PUBLIC_URL = "192.168.1.20", ""
    settings.ALLOWED_HOSTS = ["127.0.0.1", "localhost", "192.168.1.20", "quiz.lan"]
    for host in ("127.0.0.1:8000", "localhost:8000"):
        request = RequestFactory().get("/host/ABCDEF/", HTTP_HOST=host, SERVER_PORT="8000")
        assert shareable_url(request, "/play/ABCDEF/") == "http://192.168.1.20:8000/play/ABCDEF/"
    # Opened at another name already (the LAN address, a local DNS name): that one works for phones too.
    request = RequestFactory().get("/host/ABCDEF/", HTTP_HOST="quiz.lan:8000", SERVER_PORT="8000")
    assert shareable_url(request, "/play/ABCDEF/") == "http://quiz.lan:8000/play/ABCDEF/"


def test_the_public_url_wins_and_without_a_lan_address_the_link_is_as_opened(settings):
    settings.ALLOWED_HOSTS = ["127.0.0.1"]
    settings.QUIZ_LAN_ADDRESS, settings.QUIZ_PUBLIC_URL = "192.168.1.20", "https://quiz.example.org/"
    request = RequestFactory().get("/host/ABCDEF/", HTTP_HOST="127.0.0.1:8000")
    assert shareable_url(request, "/play/ABCDEF/") == "https://quiz.example.org/play/ABCDEF/"
    settings.QUIZ_LAN_ADDRESS, settings.QUIZ_PUBLIC_URL = "", ""
    assert shareable_url(request, "/play/ABCDEF/") == "http://127.0.0.1:8000/play/ABCDEF/"
