"""Remove and block: the host takes a player out, and the phone that held that place cannot join the room again
under another name (it names its last place when it joins); a plain removal leaves it free to join again."""

import pytest

from tests.support.communicator import Client

pytestmark = pytest.mark.django_db(transaction=True)


async def test_a_blocked_phone_cannot_rejoin_under_a_new_name(room, sockets, host_socket):
    created = await room()
    host = await host_socket(created)
    code = created.room.code
    ann, joined = await sockets.join(code, "Ann")
    ben, ben_joined = await sockets.join(code, "Ben")
    await host.send(type="remove", player=joined["player"]["id"], block=True)
    assert (await ann.error())["code"] == "removed"
    async with Client(code, headers=[(b"accept-language", b"es")]) as again:
        await again.send(type="join", nickname="Totally New", previous=joined["token"])
        error = await again.error()
        assert (error["code"], error["message"]) == (
            "blocked",
            "El anfitrión te ha quitado de esta partida y no puedes volver a unirte.",
        )
        await again.send(type="resume", token=joined["token"])
        assert (await again.error())["code"] == "removed"
    # A plain removal does not block: Ben's phone joins again under a new name.
    await host.send(type="remove", player=ben_joined["player"]["id"])
    assert (await ben.error())["code"] == "removed"
    async with Client(code) as back:
        await back.send(type="join", nickname="Ben again", previous=ben_joined["token"])
        assert (await back.until(lambda m: m["type"] == "joined"))["player"]["nickname"] == "Ben again"
