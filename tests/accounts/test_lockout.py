"""Wrong passwords lock one account from one address, at the hosts' sign-in and the admin's login alike, for a
while the page states; other accounts behind the same address, and the same account elsewhere, sign in."""

import re
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.db.models import F
from django.test import Client
from django.utils import timezone

from tests.factories import HostUserFactory

pytestmark = pytest.mark.django_db

PASSWORD = "correct horse battery"
SCHOOL = "203.0.113.7"  # one NAT address for a whole school


def _sign_in(browser: Client, username: str, password: str = PASSWORD, **headers):
    return browser.post("/accounts/sign-in/", {"username": username, "password": password}, **headers)


def _admin_login(browser: Client, username: str, password: str, **extra):
    return browser.post("/admin/login/?next=/admin/", {"username": username, "password": password, **extra})


def _staff(username: str = "rita", password: str = PASSWORD, *, superuser: bool = False):
    make = get_user_model().objects.create_superuser if superuser else get_user_model().objects.create_user
    return make(username=username, password=password, is_staff=True)


def _signed_in(browser: Client) -> bool:
    return "_auth_user_id" in browser.session


def _minutes_shown(page: str) -> int:
    found = re.search(r"locked here for (\d+) more minutes?", page)
    assert found, page
    return int(found.group(1))


def _age_attempts(minutes: float) -> None:
    """As if the wrong passwords had been typed `minutes` earlier (the wait is counted from the latest)."""
    from axes.models import AccessAttempt

    AccessAttempt.objects.update(attempt_time=F("attempt_time") - timedelta(minutes=minutes))


def test_thirty_wrong_admin_passwords_then_the_right_one_is_refused_while_locked():
    _staff("rita")
    browser = Client(REMOTE_ADDR=SCHOOL)
    codes = [_admin_login(browser, "rita", f"guess {n}").status_code for n in range(30)]
    assert codes[:4] == [200] * 4 and set(codes[4:]) == {429}  # the 5th wrong password locks
    refused = _admin_login(browser, "rita", PASSWORD)
    page = refused.content.decode()
    assert refused.status_code == 429 and not _signed_in(browser)
    assert "Too many wrong passwords for this account from your network" in page
    assert _minutes_shown(page) == 15 and 14 * 60 < int(refused["Retry-After"]) <= 15 * 60
    assert browser.get("/admin/")["Location"].startswith("/admin/login/")
    # The 25 tries while locked did not make the wait longer; when it has passed the right password works.
    _age_attempts(15)
    assert _admin_login(browser, "rita", PASSWORD).status_code == 302 and _signed_in(browser)
    assert browser.get("/admin/").status_code == 200


def test_a_host_sign_in_lockout_locks_the_account_from_that_address_only():
    HostUserFactory(username="pupil-target", password=PASSWORD)
    HostUserFactory(username="teacher", password=PASSWORD)
    pupil = Client(REMOTE_ADDR=SCHOOL)
    codes = [_sign_in(pupil, "pupil-target", f"guess {n}").status_code for n in range(10)]
    assert codes[:4] == [200] * 4 and set(codes[4:]) == {429}
    # The right password from that address is refused too ...
    locked = _sign_in(Client(REMOTE_ADDR=SCHOOL), "pupil-target")
    assert locked.status_code == 429 and "locked here" in locked.content.decode()
    # ... but another teacher behind the same address signs in, and so does the account from home.
    teacher = Client(REMOTE_ADDR=SCHOOL)
    assert _sign_in(teacher, "teacher").status_code == 302 and _signed_in(teacher)
    home = Client(REMOTE_ADDR="198.51.100.20")
    assert _sign_in(home, "pupil-target").status_code == 302 and _signed_in(home)


def test_a_mistyped_password_before_the_right_one_does_not_add_up_to_a_lockout():
    HostUserFactory(username="mara", password=PASSWORD)
    for _ in range(3):
        for _ in range(4):
            assert _sign_in(Client(), "mara", "wrong").status_code == 200
        assert _sign_in(Client(), "mara").status_code == 302  # the right password starts the count again


def test_the_sign_in_page_shows_the_wait_as_it_counts_down_in_the_pages_language():
    HostUserFactory(username="mara", password=PASSWORD)
    browser = Client(REMOTE_ADDR=SCHOOL)
    for _ in range(5):
        last = _sign_in(browser, "mara", "wrong")
    page = last.content.decode()
    assert last.status_code == 429 and _minutes_shown(page) == 15
    assert "Other accounts can still sign in." in page and 'role="alert"' in page
    assert 'value="mara"' in page  # the name stays in the form
    _age_attempts(10)
    later = _sign_in(browser, "mara")
    assert later.status_code == 429 and _minutes_shown(later.content.decode()) == 5
    assert 290 <= int(later["Retry-After"]) <= 300
    _age_attempts(4.5)
    assert _minutes_shown(_sign_in(browser, "mara").content.decode()) == 1
    german = _sign_in(browser, "mara", HTTP_ACCEPT_LANGUAGE="de").content.decode()
    assert "Zu viele falsche Passwörter für dieses Konto" in german and "noch 1 Minute" in german
    spanish = _sign_in(browser, "mara", HTTP_ACCEPT_LANGUAGE="es").content.decode()
    assert "Demasiadas contraseñas incorrectas para esta cuenta" in spanish and "1 minuto más" in spanish
    _age_attempts(1)
    assert _sign_in(browser, "mara").status_code == 302


def test_the_admin_lists_the_locked_account_for_staff_and_an_operator_unlocks_it(capsys):
    from django.core.management import call_command

    HostUserFactory(username="mara", password=PASSWORD)
    for _ in range(5):
        _sign_in(Client(REMOTE_ADDR=SCHOOL), "mara", "wrong")
    _staff("root", superuser=True)
    admin = Client()
    assert _admin_login(admin, "root", PASSWORD).status_code == 302
    index = admin.get("/admin/").content.decode()
    assert "/admin/axes/accessattempt/" in index
    listed = admin.get("/admin/axes/accessattempt/").content.decode()
    assert "mara" in listed and SCHOOL in listed
    call_command("axes_reset_username", "mara")
    assert _sign_in(Client(REMOTE_ADDR=SCHOOL), "mara").status_code == 302


def test_password_checks_in_flight_count_toward_the_limit(rf):
    """Guesses sent at once: each check in flight counts as a wrong password until it is done, so no more are
    compared with the password than the limit allows (the burst across processes: test_lockout_processes.py)."""
    from accounts.lockout import password_check_slot

    HostUserFactory(username="mara", password=PASSWORD)
    for _ in range(3):
        _sign_in(Client(REMOTE_ADDR=SCHOOL), "mara", "wrong")

    def request():
        return rf.post("/accounts/sign-in/", REMOTE_ADDR=SCHOOL)

    with (
        password_check_slot(request=request(), username="mara") as fourth,
        password_check_slot(request=request(), username="mara") as fifth,
    ):
        with password_check_slot(request=request(), username="mara") as sixth:
            assert (fourth, fifth, sixth) == (True, True, False)
        with password_check_slot(request=request(), username="teacher") as another_account:
            assert another_account
    with password_check_slot(request=request(), username="mara") as after:
        assert after  # the checks ended without a wrong password: 3 so far


def test_an_ipv6_client_is_one_address_across_its_64():
    HostUserFactory(username="mara", password=PASSWORD)
    for n in range(5):
        _sign_in(Client(REMOTE_ADDR=f"2001:db8:1:2::{n + 1:x}"), "mara", "wrong")
    assert _sign_in(Client(REMOTE_ADDR="2001:db8:1:2:ffff::9"), "mara").status_code == 429
    assert _sign_in(Client(REMOTE_ADDR="2001:db8:1:3::1"), "mara").status_code == 302


# -- one-time codes for the admin (ADMIN_REQUIRE_TOTP) ----------------------------------------------------------


def _code(url: str) -> str:
    """The code an authenticator app shows now for an otpauth:// URL (RFC 6238, as the app computes it)."""
    import base64
    from urllib.parse import parse_qs, urlsplit

    from django_otp.oath import totp

    secret = parse_qs(urlsplit(url).query)["secret"][0]
    return f"{totp(base64.b32decode(secret + '=' * (-len(secret) % 8))):06d}"


def _enrol(username: str, *args: str) -> str:
    from io import StringIO

    from django.core.management import call_command

    out = StringIO()
    call_command("totp_enrol", username, *args, stdout=out)
    printed = out.getvalue()
    url = re.search(r"otpauth://totp/\S+", printed).group(0)
    assert url.startswith("otpauth://totp/Quizgate") and "issuer=Quizgate" in url
    assert "█" in printed or "▀" in printed  # the QR code, drawn for a terminal
    return url


def test_with_the_setting_off_a_password_alone_opens_the_admin():
    _staff("rita", superuser=True)
    browser = Client()
    page = browser.get("/admin/login/").content.decode()
    assert "One-time code" not in page
    assert _admin_login(browser, "rita", PASSWORD).status_code == 302
    assert browser.get("/admin/").status_code == 200


def test_with_the_setting_on_the_admin_asks_for_the_enrolled_apps_code(settings):
    settings.ADMIN_REQUIRE_TOTP = True
    _staff("rita", superuser=True)
    browser = Client()
    assert "One-time code" in browser.get("/admin/login/").content.decode()
    # Not enrolled yet: refused, and told how to enrol.
    refused = _admin_login(browser, "rita", PASSWORD, otp_token="123456")
    assert refused.status_code == 200 and not _signed_in(browser)
    assert "manage.py totp_enrol rita" in refused.content.decode()

    url = _enrol("rita")
    no_code = _admin_login(browser, "rita", PASSWORD)
    assert not _signed_in(browser) and "Enter the one-time code" in no_code.content.decode()
    wrong = _admin_login(browser, "rita", PASSWORD, otp_token="000000" if _code(url) != "000000" else "111111")
    assert not _signed_in(browser) and "not right or has expired" in wrong.content.decode()
    wrong_password = _admin_login(browser, "rita", "guess", otp_token=_code(url))
    assert not _signed_in(browser) and "correct username and password" in wrong_password.content.decode()
    from axes.models import AccessAttempt

    stored = AccessAttempt.objects.get(username="rita").post_data
    assert _code(url) not in stored and "guess" not in stored and "otp_token=****" in stored

    from django_otp.plugins.otp_totp.models import TOTPDevice

    # The wrong code slowed the device's next try (django-otp: 1 s, 2 s, 4 s, ...): as if that second had passed.
    TOTPDevice.objects.update(throttling_failure_timestamp=timezone.now() - timedelta(seconds=10))
    assert _admin_login(browser, "rita", PASSWORD, otp_token=_code(url)).status_code == 302
    assert browser.get("/admin/").status_code == 200


def test_with_the_setting_on_a_staff_session_without_a_code_is_not_let_into_the_admin(settings):
    settings.ADMIN_REQUIRE_TOTP = True
    staff = _staff("rita", superuser=True)
    _enrol("rita")
    browser = Client()
    browser.force_login(staff)  # e.g. signed in at the hosts' sign-in, which asks for no code
    assert browser.get("/admin/")["Location"].startswith("/admin/login/")
    assert "not authorized to access this page" in browser.get("/admin/login/").content.decode()


def test_only_staff_are_enrolled_and_replace_removes_the_lost_phone():
    from django.core.management import CommandError, call_command
    from django_otp.plugins.otp_totp.models import TOTPDevice

    HostUserFactory(username="mara", password=PASSWORD)
    with pytest.raises(CommandError, match="not staff"):
        call_command("totp_enrol", "mara")
    with pytest.raises(CommandError, match="No account is called"):
        call_command("totp_enrol", "nobody")
    staff = _staff("rita")
    first = _enrol("rita")
    second = _enrol("rita", "--replace")
    assert first != second and TOTPDevice.objects.filter(user=staff).count() == 1
