"""Signed tokens that bring a player or a host back to their place after a reload or a restart, and the key of
a room's co-host link."""

from dataclasses import dataclass

from django.core import signing

PLAYER_SALT = "quizgate.player"
HOST_SALT = "quizgate.host"
COHOST_SALT = "quizgate.cohost"
MAX_TOKEN_LENGTH = 300
# Where a browser keeps its host tokens: the session, room code -> token.
HOST_TOKENS = "host_tokens"


@dataclass(frozen=True)
class HostGrant:
    room_code: str
    # None: the browser that created the room (never revoked). A number: a browser let in by the co-host link
    # of that generation; replacing the link (a newer generation) shuts it out.
    cohost_generation: int | None = None


def player_token(*, room_code: str, player_id: int) -> str:
    return signing.dumps({"room": room_code, "player": player_id}, salt=PLAYER_SALT)


def host_token(*, room_code: str, cohost_generation: int | None = None) -> str:
    data: dict = {"room": room_code}
    if cohost_generation is not None:
        data["cohost"] = cohost_generation
    return signing.dumps(data, salt=HOST_SALT)


def cohost_key(*, room_code: str, generation: int) -> str:
    """The secret in a room's co-host link. Another salt than the host token's: the key itself hosts nothing,
    it only lets a browser ask for a host token."""
    return signing.dumps({"room": room_code, "gen": generation}, salt=COHOST_SALT)


def _loads(token: object, salt: str) -> dict | None:
    if not isinstance(token, str) or len(token) > MAX_TOKEN_LENGTH:
        return None
    try:
        data = signing.loads(token, salt=salt)
    except signing.BadSignature:
        return None
    return data if isinstance(data, dict) else None


def read_player_token(token: object) -> tuple[str, int] | None:
    data = _loads(token, PLAYER_SALT)
    try:
        return str(data["room"]), int(data["player"])
    except (KeyError, TypeError, ValueError):
        return None


def read_host_token(token: object) -> HostGrant | None:
    data = _loads(token, HOST_SALT)
    try:
        cohost = data.get("cohost")
        return HostGrant(room_code=str(data["room"]), cohost_generation=None if cohost is None else int(cohost))
    except (AttributeError, KeyError, TypeError, ValueError):
        return None


def read_cohost_key(token: object) -> tuple[str, int] | None:
    data = _loads(token, COHOST_SALT)
    try:
        return str(data["room"]), int(data["gen"])
    except (KeyError, TypeError, ValueError):
        return None
