"""The WebSocket Origin check compares scheme, host and port: a page on another port of an allowed host (any local
program) must not open a player's socket."""

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from config.asgi import application
from tests.support.communicator import Sockets
from tests.support.servers import start_asgi

pytestmark = pytest.mark.django_db(transaction=True)


async def _connects(sockets: Sockets, path: str, headers: list[tuple[bytes, bytes]], *, scheme: str = "ws") -> bool:
    comm = sockets.communicator(application, path, headers=headers, ip="198.51.100.4")
    comm.scope["scheme"] = scheme
    connected, _ = await comm.connect()
    await comm.disconnect()
    return connected


# (origin, host, scheme of the request, extra headers) -> accepted?
CASES = [
    pytest.param("http://127.0.0.1:8000", "127.0.0.1:8000", "ws", [], True, id="same-origin"),
    pytest.param("http://127.0.0.1:9999", "127.0.0.1:8000", "ws", [], False, id="another-port"),
    pytest.param("http://127.0.0.1", "127.0.0.1:8000", "ws", [], False, id="default-port-vs-8000"),
    pytest.param("http://localhost:80", "localhost", "ws", [], True, id="default-port-spelled-out"),
    pytest.param("HTTP://LocalHost", "localhost", "ws", [], True, id="case-insensitive"),
    pytest.param("https://127.0.0.1:8000", "127.0.0.1:8000", "ws", [], False, id="https-page-plain-ws"),
    pytest.param("http://localhost", "localhost", "wss", [], False, id="http-page-wss"),
    pytest.param("https://localhost", "localhost", "wss", [], True, id="https-wss"),
    pytest.param(
        "https://localhost", "localhost", "ws", [(b"x-forwarded-proto", b"https")], True, id="tls-at-the-proxy"
    ),
    pytest.param("http://evil.example", "evil.example", "ws", [], False, id="host-not-allowed"),
    pytest.param("http://evil.example", "localhost", "ws", [], False, id="foreign-site"),
    pytest.param(None, "localhost", "ws", [], False, id="no-origin"),
    pytest.param("null", "localhost", "ws", [], False, id="null-origin"),
    pytest.param("http://localhost", None, "ws", [], False, id="no-host-header"),
    pytest.param("http://[::1]:8000", "[::1]:8000", "ws", [], True, id="ipv6-same-origin"),
    pytest.param("http://[::1]:9999", "[::1]:8000", "ws", [], False, id="ipv6-another-port"),
]


@pytest.mark.parametrize(("origin", "host", "scheme", "extra", "accepted"), CASES)
async def test_an_origin_is_accepted_only_when_scheme_host_and_port_match(
    origin, host, scheme, extra, accepted, sockets
):
    headers = [*extra]
    if origin is not None:
        headers.append((b"origin", origin.encode()))
    if host is not None:
        headers.append((b"host", host.encode()))
    assert await _connects(sockets, "/ws/room/ABCDEF/", headers, scheme=scheme) is accepted


async def test_an_origin_listed_in_csrf_trusted_origins_is_accepted_exactly(settings, sockets):
    settings.CSRF_TRUSTED_ORIGINS = ["https://quiz.example.org"]
    host = (b"host", b"127.0.0.1:8000")
    assert await _connects(sockets, "/ws/room/ABCDEF/", [(b"origin", b"https://quiz.example.org"), host])
    assert await _connects(sockets, "/ws/room/ABCDEF/", [(b"origin", b"https://quiz.example.org:443"), host])
    assert not await _connects(sockets, "/ws/room/ABCDEF/", [(b"origin", b"https://quiz.example.org:8443"), host])
    assert not await _connects(sockets, "/ws/room/ABCDEF/", [(b"origin", b"http://quiz.example.org"), host])


async def test_the_generation_socket_checks_the_origin_too(sockets):
    foreign = [(b"origin", b"http://127.0.0.1:9999"), (b"host", b"127.0.0.1:8000")]
    assert not await _connects(sockets, "/ws/generation/1/?t=x", foreign)
    comm = sockets.communicator(
        application,
        "/ws/generation/1/?t=x",
        headers=[(b"origin", b"http://127.0.0.1:8000"), (b"host", b"127.0.0.1:8000")],
        ip="198.51.100.4",
    )
    connected, code = await comm.connect()
    # Past the origin check the consumer itself answers: this page's token is wrong.
    assert not connected and code == 4403
    await comm.disconnect()


async def test_a_real_server_refuses_another_port_and_accepts_its_own_origin(tmp_path):
    server = start_asgi("asgi", log_path=tmp_path / "asgi.log")
    try:
        url = f"{server.ws_base}/ws/room/ABCDEF/"
        with pytest.raises(InvalidStatus) as refused:
            await connect(url, origin="http://127.0.0.1:9999", open_timeout=5)
        assert refused.value.response.status_code == 403
        with pytest.raises(InvalidStatus):
            await connect(url, origin=f"https://127.0.0.1:{server.port}", open_timeout=5)
        ws = await connect(url, origin=f"http://127.0.0.1:{server.port}", open_timeout=5)
        await ws.send('{"type": "ping"}')
        assert '"pong"' in await ws.recv()
        await ws.close()
    finally:
        server.stop()
