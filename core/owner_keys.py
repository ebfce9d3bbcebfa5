"""The owner key: the secret a host's rounds, generation jobs and rooms are filed under. An anonymous browser
gets one of its own in its session; a signed-in host's session holds their account's (accounts/services.py),
so the same rounds and games follow them to every browser they sign in from."""

import secrets

OWNER_KEY = "owner_key"


def session_owner_key(session, *, create: bool = False) -> str:
    """The session's owner key ("" when it has none), made on first need when `create`."""
    key = session.get(OWNER_KEY, "")
    if not key and create:
        key = new_owner_key()
        session[OWNER_KEY] = key
    return key


def new_owner_key() -> str:
    return secrets.token_urlsafe(24)
