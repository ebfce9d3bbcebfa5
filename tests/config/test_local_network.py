"""`make run` serves the local network: started with the Makefile's own environment, the host's page shows the
machine's LAN address in the join link and QR code, a request addressed to that host is served, debug pages stay
off, and a socket from a foreign origin is still refused. All traffic goes to loopback; the LAN address only
travels in the Host and Origin headers."""

import re
import socket
import subprocess
import sys
import time

import httpx
import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from core.lan import lan_address
from lobby.pages.views import qr_svg
from tests.support.servers import REPO, free_port

# A documentation address, used only when this machine has no network for core.lan to find.
FALLBACK_LAN = "192.0.2.77"


def make_run_env() -> dict[str, str]:
    """The variables `make run` sets, read from the Makefile (so this test follows any change to it)."""
    text = (REPO / "Makefile").read_text()
    line = re.search(r"^RUN_ENV := (.+)$", text, re.MULTILINE)
    assert line, "the Makefile's run target no longer sets RUN_ENV"
    assert "$(RUN_ENV) $(PY) -m config.serve --host $(RUN_HOST)" in text
    assert re.search(r"^RUN_HOST \?= 0\.0\.0\.0$", text, re.MULTILINE), "make run should listen on the network"
    return dict(pair.split("=", 1) for pair in line.group(1).split())


@pytest.fixture(scope="module")
def lan_server(tmp_path_factory):
    home = tmp_path_factory.mktemp("make-run")
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "DJANGO_READ_DOT_ENV_FILE": "0"}
    env.update(make_run_env())
    assert env["DJANGO_DEBUG"] == "0"
    env["DJANGO_SECRET_KEY_FILE"] = str(home / ".local-secret")
    (home / ".local-secret").write_text("a-generated-secret-for-this-test-only-" + "x" * 20)
    env["DATABASE_URL"] = f"sqlite:///{home / 'db.sqlite3'}"
    address = lan_address()
    if address is None:
        env["QUIZ_LAN_ADDRESS"] = address = FALLBACK_LAN
    for command in (["migrate", "--noinput", "-v", "0"], ["load_packs"]):
        subprocess.run([sys.executable, "manage.py", *command], cwd=REPO, env=env, check=True, capture_output=True)
    port = free_port()
    log = open(home / "server.log", "wb")  # noqa: SIM115 - closed below
    popen = subprocess.Popen(
        [sys.executable, "-m", "config.serve", "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"],
        cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    deadline = time.monotonic() + 30
    while True:
        assert popen.poll() is None, (home / "server.log").read_text()
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            assert time.monotonic() < deadline, "the server did not listen"
            time.sleep(0.1)
    yield {"port": port, "lan": address, "log": home / "server.log"}
    popen.terminate()
    popen.wait(10)
    log.close()


def _host_a_game(port: int) -> tuple[str, str]:
    """The host, on this machine (loopback), creates a room from a sample pack: (code, host page HTML)."""
    with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10) as host:
        home = host.get("/")
        assert home.status_code == 200
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', home.text).group(1)
        source = re.search(r'name="source" value="(pack:\d+)"', home.text).group(1)
        created = host.post("/", data={"csrfmiddlewaretoken": token, "source": source, "timer_seconds": "20"})
        assert created.status_code == 302, created.text[:300]
        page = host.get(created.headers["location"])
        assert page.status_code == 200
        return created.headers["location"].rstrip("/").rsplit("/", 1)[1], page.text


def test_the_join_link_and_qr_code_carry_the_lan_address(lan_server):
    port, lan = lan_server["port"], lan_server["lan"]
    code, page = _host_a_game(port)
    join_url = f"http://{lan}:{port}/play/{code}/"
    assert f'class="join-url">{join_url}</' in page
    assert qr_svg(join_url, title=f"QR code to join game {code}") in page
    assert "127.0.0.1" not in page


def test_a_phone_addressing_the_lan_host_is_served_without_debug_pages(lan_server):
    port, lan = lan_server["port"], lan_server["lan"]
    code, _ = _host_a_game(port)
    phone_host = {"Host": f"{lan}:{port}"}
    with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10, headers=phone_host) as phone:
        play = phone.get(f"/play/{code}/")
        assert play.status_code == 200 and f"Join game {code}" in play.text
        assert "strict-transport-security" not in play.headers  # plain http on the LAN
        home = phone.get("/")
        assert "Secure" not in home.headers["set-cookie"]  # the CSRF cookie works over http
        missing = phone.get("/no-such-page/")
        assert missing.status_code == 404 and "URLconf" not in missing.text and "DEBUG" not in missing.text
        assert phone.get("/favicon.ico").status_code == 200
        assert phone.get("/static/js/host.js").status_code == 200  # WhiteNoise, with debug off
    with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10, headers={"Host": "evil.example"}) as other:
        assert other.get("/").status_code == 400


async def _phone_socket(port: int, lan: str, origin: str):
    """A WebSocket addressed to the LAN host, carried over a socket connected to loopback."""
    carrier = socket.create_connection(("127.0.0.1", port), timeout=5)
    return await connect(f"ws://{lan}:{port}/ws/room/ABCDEF/", sock=carrier, origin=origin, open_timeout=5)


async def test_the_lan_origin_opens_a_socket_and_a_foreign_origin_is_refused(lan_server):
    port, lan = lan_server["port"], lan_server["lan"]
    ws = await _phone_socket(port, lan, f"http://{lan}:{port}")
    await ws.send('{"type": "ping"}')
    assert '"pong"' in await ws.recv()
    await ws.close()
    for foreign in ("http://evil.example", f"http://{lan}:9999", f"https://{lan}:{port}"):
        with pytest.raises(InvalidStatus) as refused:
            await _phone_socket(port, lan, foreign)
        assert refused.value.response.status_code == 403, foreign


def test_the_server_says_where_phones_join(settings):
    from config.serve import banner

    settings.QUIZ_LOCAL_NETWORK = True
    settings.QUIZ_LAN_ADDRESS = FALLBACK_LAN
    settings.QUIZ_PUBLIC_URL = ""
    assert banner(["--host", "0.0.0.0", "--port", "8000"]) == (
        f"Quizgate on http://127.0.0.1:8000/\nPhones on this network join at http://{FALLBACK_LAN}:8000/ (the QR code)"
    )
    assert "Only this machine" in banner(["--host", "127.0.0.1", "--port=8000"])
    settings.QUIZ_PUBLIC_URL = "https://quiz.example.org"
    assert banner(["--host", "0.0.0.0"]).endswith("Players join at https://quiz.example.org")


def test_make_run_bound_to_this_machine_never_links_to_the_lan_address(tmp_path):
    """`make run RUN_HOST=127.0.0.1` with QUIZ_LAN_ADDRESS set: the join link is the address the page was opened
    at, not the LAN address no phone could reach (the banner already says only this machine can join)."""
    run_line = re.search(r"^\t(.+) -m config\.serve --host \$\(RUN_HOST\)", (REPO / "Makefile").read_text(), re.M)
    assert run_line and "QUIZ_BIND_HOST=$(RUN_HOST)" in run_line.group(1).split()
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "DJANGO_READ_DOT_ENV_FILE": "0", **make_run_env()}
    env.update(DJANGO_SETTINGS_MODULE="config.settings", DJANGO_SECRET_KEY="x" * 50)
    env["DATABASE_URL"] = f"sqlite:///{tmp_path / 'db.sqlite3'}"
    env["QUIZ_LAN_ADDRESS"] = FALLBACK_LAN
    script = (
        "import django; django.setup()\n"
        "from django.test import RequestFactory\n"
        "from core.lan import shareable_url\n"
        "opened = RequestFactory().get('/', HTTP_HOST='127.0.0.1:8000', SERVER_PORT='8000')\n"
        "print(shareable_url(opened, '/play/ABCDEF/'))\n"
    )

    def link(bind: str) -> str:
        ran = subprocess.run(
            [sys.executable, "-c", script],
            cwd=REPO, env={**env, "QUIZ_BIND_HOST": bind}, capture_output=True, text=True, check=True,
        )  # fmt: skip
        return ran.stdout.strip()

    assert link("0.0.0.0") == f"http://{FALLBACK_LAN}:8000/play/ABCDEF/"
    assert link("127.0.0.1") == "http://127.0.0.1:8000/play/ABCDEF/"
    assert link("localhost") == "http://127.0.0.1:8000/play/ABCDEF/"
