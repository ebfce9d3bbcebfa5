"""Enrol an authenticator app for a staff account: prints the otpauth:// URL and its QR code to scan. The admin
asks for the app's one-time code when ADMIN_REQUIRE_TOTP is on (README, Accounts)."""

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from accounts.totp import NotStaff, totp_enrol


class Command(BaseCommand):
    help = "Enrol an authenticator app (TOTP) for a staff account and print the QR code to scan."

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--name", default="authenticator", help="what the device is called in the admin")
        parser.add_argument(
            "--replace", action="store_true", help="remove the account's other TOTP devices first (a lost phone)"
        )
        parser.add_argument("--no-qr", action="store_true", help="print only the otpauth:// URL")

    def handle(self, *args, username, name, replace, no_qr, **options):
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise CommandError(f"No account is called {username!r} (usernames are case-sensitive).")
        try:
            enrolled = totp_enrol(user=user, name=name, replace=replace)
        except NotStaff:
            raise CommandError(
                f"{username!r} is not staff: only staff sign in to the admin. Make it staff first "
                "(manage.py createsuperuser, or the admin's Users page)."
            ) from None
        if not no_qr:
            self.stdout.write(enrolled.qr_text())
        self.stdout.write(enrolled.url)
        self.stdout.write(
            f"Scan the code (or paste the URL) into an authenticator app on {username}'s phone. The URL holds the "
            "secret: do not keep it anywhere else."
        )
        if replace:
            self.stdout.write("The account's other TOTP devices were removed.")
