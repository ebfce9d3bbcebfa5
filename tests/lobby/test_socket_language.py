"""A phone's socket answers in the phone's language, whatever language the host's screen or another phone speaks."""

import pytest

from tests.support.communicator import Client

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]


async def test_each_socket_is_answered_in_its_own_language(room, sockets):
    created = await room()
    code = created.room.code
    await sockets.join(code, "Ada")
    cases = [
        ([(b"accept-language", b"de-DE,de;q=0.9")], "Jemand in diesem Spiel hat schon diesen Spitznamen"),
        (
            [(b"cookie", b"django_language=es"), (b"accept-language", b"de")],
            "Alguien en esta partida ya tiene ese apodo",
        ),
        ([], "Someone in this game already has that nickname"),
    ]
    for headers, expected in cases:
        async with Client(code, headers=headers) as phone:
            await phone.send(type="join", nickname="ada")
            error = await phone.error()
            assert error["code"] == "nickname_taken"
            assert error["message"].startswith(expected), error
