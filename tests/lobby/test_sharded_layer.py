"""The channel layer sharded over two Redis servers (CHANNEL_LAYER_REDIS_URLS): two processes play one game, each
room event reaching every player wherever their socket is, with the layer's channels spread over both servers."""

import pytest
import redis.asyncio as redis
from asgiref.sync import sync_to_async
from channels_redis.utils import _consistent_hash
from django.conf import settings

from lobby import events
from tests.support.peer import Peer
from tests.support.servers import start_asgi, start_redis


def _shard(group: str) -> int:
    """The server of the two that the layer keeps `group` on (channels_redis's own hash of its Redis name)."""
    prefix = settings.CHANNEL_LAYERS["default"]["CONFIG"]["prefix"]
    return _consistent_hash(f"{prefix}__group__{group}", 2)


pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not settings.REDIS_URL, reason="several processes need the Redis channel layer (REDIS_URL)"),
]


async def test_a_game_across_two_processes_on_a_layer_sharded_over_two_redis_servers(make_room, tmp_path):
    shards = [start_redis(), start_redis()]
    urls = [f"redis://127.0.0.1:{shard.port}/0" for shard in shards]
    env = {"CHANNEL_LAYER_REDIS_URLS": ",".join(urls)}
    servers = [start_asgi(f"asgi-{n}", log_path=tmp_path / f"asgi-{n}.log", env=env) for n in (1, 2)]
    clients = [redis.Redis.from_url(url) for url in urls]
    try:
        # A room whose two groups (the room's and its hosts') the layer puts on different servers: then each server
        # holds some of the game's channels, whatever the processes' own channels (random names) hash to. With any
        # room, all of them once landed on one server, and the check below failed on a game that worked.
        for _ in range(100):
            created = await sync_to_async(make_room)(timer_seconds=30)
            code = created.room.code
            if _shard(events.room_group(code)) != _shard(events.host_group(code)):
                break
        host = await Peer(servers[0].ws_base, code).open()
        await host.send(type="host", token=created.host_token)
        await host.state(phase="lobby")
        peers = []
        for n in range(6):
            peer = await Peer(servers[n % 2].ws_base, code).open()
            await peer.send(type="join", nickname=f"P{n}")
            await peer.until(lambda m: m["type"] == "joined")
            peers.append(peer)
        await host.until(lambda m: m["type"] == "state" and m["player_count"] == 6)
        # Each server holds some of the layer's channels (every socket's own, the room's groups).
        subscribed = [await client.pubsub_channels() for client in clients]
        assert all(subscribed), subscribed
        await host.send(type="start", phase="lobby", index=-1)
        for peer in peers:
            await peer.state(phase="question", question_index=0)
        for n, peer in enumerate(peers):
            await peer.send(type="answer", question=0, option=n % 2)
        await host.send(type="close", phase="question", index=0)
        for peer in [host, *peers]:
            await peer.state(phase="reveal", question_index=0)
        for peer in [host, *peers]:
            await peer.close()
    finally:
        for client in clients:
            await client.aclose()
        for server in servers:
            server.stop()
        for shard in shards:
            shard.stop()
