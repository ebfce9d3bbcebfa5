"""What a person sees: a host who mistypes their password five times is told the account is locked here and for
how long, while a colleague at the next desk (the same address) signs in; a staff member signs in to the admin
with a password and their authenticator app's code. Real Chromium pages, the real ASGI app."""

import base64
import re
from urllib.parse import parse_qs, urlsplit

import pytest
from django.contrib.auth import get_user_model
from django_otp.oath import totp
from playwright.sync_api import expect

from tests.browser.page_checks import check_page
from tests.browser.test_axe import AxeAudit
from tests.factories import HostUserFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PASSWORD = "a long and unusual passphrase"


@pytest.fixture
def hosts(transactional_db):
    """Made before the browser starts: Playwright's sync API runs an event loop, and Django refuses ORM calls
    from a thread with a running loop."""
    HostUserFactory(username="mara", password=PASSWORD)
    HostUserFactory(username="teacher", password=PASSWORD)


@pytest.fixture
def staff_code(transactional_db, settings) -> str:
    """A superuser with an enrolled authenticator app, the admin asking for codes; the code the app shows now."""
    from accounts.totp import totp_enrol  # here, so that the code before it fails the test, not its collection

    settings.ADMIN_REQUIRE_TOTP = True
    staff = get_user_model().objects.create_superuser(username="rita", password=PASSWORD)
    url = totp_enrol(user=staff).url
    secret = parse_qs(urlsplit(url).query)["secret"][0]
    return f"{totp(base64.b32decode(secret + '=' * (-len(secret) % 8))):06d}"


def _sign_in(page, live_url: str, username: str, password: str) -> None:
    page.goto(f"{live_url}/accounts/sign-in/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Sign in").click()


def test_a_mistyping_host_is_told_the_wait_and_a_colleague_behind_the_same_address_signs_in(hosts, live_url, browser):
    audit = AxeAudit()
    host = browser.new_context(viewport={"width": 1366, "height": 768}).new_page()
    for n in range(4):
        _sign_in(host, live_url, "mara", f"mistyped {n}")
        expect(host.get_by_role("alert")).to_contain_text("do not match an account")
    _sign_in(host, live_url, "mara", "mistyped again")
    alert = host.get_by_role("alert")
    expect(alert).to_contain_text("Too many wrong passwords for this account from your network")
    expect(alert).to_contain_text("locked here for 15 more minutes")
    expect(host.get_by_label("Username")).to_have_value("mara")
    check_page(host, "accounts-locked")
    audit.check(host, "sign-in-locked")
    _sign_in(host, live_url, "mara", PASSWORD)  # the right password now: still refused
    expect(host.get_by_role("alert")).to_contain_text("locked here for")
    expect(host).to_have_url(f"{live_url}/accounts/sign-in/")

    colleague = browser.new_context().new_page()
    _sign_in(colleague, live_url, "teacher", PASSWORD)
    expect(colleague).to_have_url(f"{live_url}/games/")

    german = browser.new_context(locale="de-DE").new_page()
    german.goto(f"{live_url}/accounts/sign-in/")
    german.get_by_label("Benutzername").fill("mara")
    german.get_by_label("Passwort").fill(PASSWORD)
    german.get_by_role("button", name="Anmelden").click()
    expect(german.get_by_role("alert")).to_contain_text(re.compile(r"Es ist hier noch 1[45] Minuten gesperrt"))
    audit.assert_clean()


def test_with_one_time_codes_required_staff_sign_in_to_the_admin_with_their_apps_code(staff_code, live_url, browser):
    page = browser.new_context(viewport={"width": 1366, "height": 768}).new_page()
    page.goto(f"{live_url}/admin/")
    page.get_by_label("Username").fill("rita")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page.locator(".errornote")).to_contain_text("Enter the one-time code your authenticator app shows")
    expect(page).to_have_url(re.compile(r"/admin/login/"))
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_label("One-time code").fill(staff_code)
    page.get_by_role("button", name="Log in").click()
    expect(page).to_have_url(f"{live_url}/admin/")
    expect(page.get_by_role("link", name="Access attempts")).to_be_visible()  # the lockouts, for staff
