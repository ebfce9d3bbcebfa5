"""Signed tokens that bring a player or a host back to their place after a reload or a restart."""

from django.core import signing

PLAYER_SALT = "quizgate.player"
HOST_SALT = "quizgate.host"


def player_token(*, room_code: str, player_id: int) -> str:
    return signing.dumps({"room": room_code, "player": player_id}, salt=PLAYER_SALT)


def host_token(*, room_code: str) -> str:
    return signing.dumps({"room": room_code}, salt=HOST_SALT)


def read_player_token(token: object) -> tuple[str, int] | None:
    if not isinstance(token, str) or len(token) > 300:
        return None
    try:
        data = signing.loads(token, salt=PLAYER_SALT)
        return str(data["room"]), int(data["player"])
    except (signing.BadSignature, KeyError, TypeError, ValueError):
        return None


def read_host_token(token: object) -> str | None:
    if not isinstance(token, str) or len(token) > 300:
        return None
    try:
        return str(signing.loads(token, salt=HOST_SALT)["room"])
    except (signing.BadSignature, KeyError, TypeError):
        return None
