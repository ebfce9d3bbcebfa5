"""Which errors out of a consumer are its channel layer's trouble (the socket is closed with 1013, the phone comes
back) and which are a defect (raised, and logged as one)."""

import pytest
from redis.asyncio.connection import Connection

from lobby.realtime.socket_guard import is_layer_trouble

# What uvloop raised inside redis-py when a shard died while a room's subscription was being written.
CLOSED = "unable to perform operation on <TCPTransport closed=True reading=False 0x558aae6e9c00>; the handler is closed"


def _raised_from(module: str, message: str, kind: type[Exception] = RuntimeError) -> Exception:
    """The error as raised by a function of `module`."""
    namespace = {"__name__": module, "kind": kind}
    exec(f"def write():\n    raise kind({message!r})\n", namespace)  # noqa: S102 - a frame of that module
    with pytest.raises(kind) as raised:
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


async def test_a_write_on_a_connection_redis_py_already_dropped_is_the_layers_trouble():
    # redis-py's own write, on a connection another coroutine disconnected: its streams are gone.
    connection = Connection(host="127.0.0.1", port=1)
    with pytest.raises(AttributeError) as raised:
        await connection._send_packed_command([b"*1\r\n$4\r\nPING\r\n"])
    assert str(raised.value).startswith("'NoneType' object has no attribute")
    assert is_layer_trouble(raised.value)


def test_a_missing_attribute_anywhere_else_is_a_defect():
    gone = "'NoneType' object has no attribute 'writelines'"
    assert not is_layer_trouble(_raised_from("lobby.realtime.consumer", gone, AttributeError))
    assert not is_layer_trouble(AttributeError(gone))
