"""Which errors out of a consumer are its channel layer's trouble (the socket is closed with 1013, the phone comes
back) and which are a defect (raised, and logged as one)."""

import pytest

from lobby.realtime.socket_guard import is_layer_trouble

# What uvloop raised inside redis-py when a shard died while a room's subscription was being written.
CLOSED = "unable to perform operation on <TCPTransport closed=True reading=False 0x558aae6e9c00>; the handler is closed"


def _raised_from(module: str, message: str) -> RuntimeError:
    """The RuntimeError as raised by a function of `module`."""
    namespace = {"__name__": module}
    exec(f"def write():\n    raise RuntimeError({message!r})\n", namespace)  # noqa: S102 - a frame of that module
    with pytest.raises(RuntimeError) as raised:
        namespace["write"]()
    return raised.value


def test_a_write_on_the_dead_shards_closed_connection_is_the_layers_trouble():
    assert is_layer_trouble(_raised_from("redis.asyncio.connection", CLOSED))
    assert is_layer_trouble(_raised_from("channels_redis.pubsub", CLOSED))


def test_the_same_words_from_anywhere_else_are_a_defect():
    assert not is_layer_trouble(_raised_from("lobby.realtime.fanout", CLOSED))
    assert not is_layer_trouble(RuntimeError(CLOSED))


def test_other_runtime_errors_inside_redis_are_a_defect():
    assert not is_layer_trouble(_raised_from("redis.asyncio.connection", "dictionary changed size during iteration"))
