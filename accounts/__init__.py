"""Hosts who sign in: Django's own accounts (a username and a password, no e-mail) that keep a host's rounds and
games across browsers. An account holds an owner key (core/owner_keys.py); signing in puts it in the browser's
session, and what that browser made anonymously moves under it. Players never sign in; anonymous hosting works
as before. Wrong passwords lock one account from one address (lockout.py, django-axes), at this sign-in and the
admin's; the admin site (admin_site.py) can ask staff for a one-time code (totp.py, django-otp).

May import: lobby, review, quiz, verifier, core. Nothing imports accounts but config.
"""
