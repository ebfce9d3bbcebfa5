"""Large uploads are refused before they are read whole: by `Content-Length` before a byte of the body is read, and
counted while they stream in. Against a real server process, with a raw socket that keeps sending until the server
answers: the answer comes while the client is still sending, the server process has read (its /proc/PID/io
`rchar`) only a fraction of the body, the answer is the 413 page in the page's language, and the server logs no
traceback."""

import re
import select
import socket
import time
import urllib.parse
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.support.servers import start_asgi

pytestmark = pytest.mark.django_db(transaction=True)

MIB = 1024 * 1024
HUGE = 50 * MIB
CHUNK = 64 * 1024
BOUNDARY = "----quizgate-upload-test"


@dataclass
class Answer:
    status: int
    text: str
    sent: int
    seconds: float
    # Bytes the server process read meanwhile (sockets and files), from /proc/PID/io.
    server_read: int = 0


def _read_by(pid: int) -> int:
    for line in Path(f"/proc/{pid}/io").read_text().splitlines():
        if line.startswith("rchar:"):
            return int(line.split()[1])
    raise AssertionError("no rchar")


@pytest.fixture
def server(tmp_path):
    log = tmp_path / "asgi.log"
    proc = start_asgi("asgi", log_path=log)
    proc.log = log
    yield proc
    proc.stop()


def _form(server) -> tuple[str, str]:
    """A csrftoken cookie and the form's token, from the generate page."""
    page = httpx.get(f"http://127.0.0.1:{server.port}/rounds/generate/", timeout=10)
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)
    return page.cookies["csrftoken"], token


def _read_answer(sock: socket.socket) -> bytes:
    data = b""
    while True:
        try:
            piece = sock.recv(65536)
        except ConnectionResetError:
            break
        if not piece:
            break
        data += piece
        head, _, body = data.partition(b"\r\n\r\n")
        match = re.search(rb"content-length: (\d+)", head, re.IGNORECASE)
        if match and len(body) >= int(match.group(1)):
            break
    return data


def _send(server, head: bytes, pieces, *, chunked: bool = False) -> Answer:
    """Send `head`, then the body's pieces until the server answers (or closes); count the body bytes sent."""
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=30)
    read_before = _read_by(server.popen.pid)
    started = time.monotonic()
    sock.sendall(head)
    sent = 0
    for piece in pieces:
        readable, _, _ = select.select([sock], [], [], 0)
        if readable:
            break
        frame = b"%x\r\n%s\r\n" % (len(piece), piece) if chunked else piece
        try:
            sock.sendall(frame)
        except (BrokenPipeError, ConnectionResetError):
            break
        sent += len(piece)
    else:
        if chunked:
            sock.sendall(b"0\r\n\r\n")
    answer = _read_answer(sock)
    seconds = time.monotonic() - started
    server_read = _read_by(server.popen.pid) - read_before
    sock.close()
    status_line, _, rest = answer.partition(b"\r\n")
    status = int(status_line.split()[1]) if status_line else 0
    text = rest.decode("utf-8", "replace")
    return Answer(status=status, text=text, sent=sent, seconds=seconds, server_read=server_read)


def _head(path: str, *, cookie: str, content_type: str, length: int | None, language: str = "en") -> bytes:
    lines = [
        f"POST {path} HTTP/1.1",
        "Host: 127.0.0.1",
        f"Cookie: csrftoken={cookie}",
        f"Content-Type: {content_type}",
        f"Accept-Language: {language}",
        f"Content-Length: {length}" if length is not None else "Transfer-Encoding: chunked",
    ]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def _pasted(server, cookie: str, token: str, text_bytes: int, *, language: str = "en") -> Answer:
    fields = {"csrfmiddlewaretoken": token, "topic": "", "count": "5", "difficulty": "medium", "language": "en"}
    start = (urllib.parse.urlencode(fields) + "&source_text=").encode()
    total = len(start) + text_bytes
    head = _head(
        "/rounds/generate/",
        cookie=cookie,
        content_type="application/x-www-form-urlencoded",
        length=total,
        language=language,
    )
    return _send(server, head, _pieces(start, text_bytes, fill=b"a"))


def _pieces(start: bytes, size: int, *, fill: bytes = b"x", end: bytes = b""):
    yield start
    block = fill * CHUNK
    for offset in range(0, size, CHUNK):
        yield block[: min(CHUNK, size - offset)]
    if end:
        yield end


def _file_parts(token: str, name: str) -> tuple[bytes, bytes]:
    fields = {"csrfmiddlewaretoken": token, "topic": "Birds", "count": "5", "difficulty": "medium", "language": "en"}
    start = b"".join(
        f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="{key}"\r\n\r\n{value}\r\n'.encode()
        for key, value in fields.items()
    )
    start += (
        f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="source_file"; filename="{name}"\r\n'
        "Content-Type: text/plain\r\n\r\n"
    ).encode()
    return start, f"\r\n--{BOUNDARY}--\r\n".encode()


def _log_problems(server) -> list[str]:
    return [line for line in server.log.read_text().splitlines() if "Traceback" in line or "ERROR" in line]


def test_fifty_mb_of_pasted_text_is_refused_at_once_in_the_pages_language(server):
    cookie, token = _form(server)
    # The baseline: a small valid paste, twice (the first warms the server up).
    _pasted(server, cookie, token, 200)
    small = _pasted(server, cookie, token, 200)
    assert small.status == 200

    refused = _pasted(server, cookie, token, HUGE)
    assert refused.status == 413, refused.text[:300]
    assert "at most 5.1 MB can be sent at once" in refused.text
    assert "Nothing was saved" in refused.text
    # Read whole before it was refused, it took 80 times the small one's time here (19 s in the report).
    assert refused.seconds < 20 * small.seconds, (refused.seconds, small.seconds)
    # The server answered from Content-Length, while the client was still sending, having read almost nothing.
    assert refused.sent < HUGE, "the whole body was sent before the answer"
    assert refused.server_read < MIB, f"the server read {refused.server_read} bytes"

    german = _pasted(server, cookie, token, HUGE, language="de")
    assert german.status == 413 and "höchstens 5.1 MB" in german.text
    spanish = _pasted(server, cookie, token, HUGE, language="es")
    assert spanish.status == 413 and "como máximo 5.1 MB" in spanish.text
    assert _log_problems(server) == []


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "streamed"])
def test_a_fifty_mb_file_is_refused_before_it_is_received(server, chunked):
    cookie, token = _form(server)
    start, end = _file_parts(token, "notes.txt")
    length = None if chunked else len(start) + HUGE + len(end)
    head = _head(
        "/rounds/generate/", cookie=cookie, content_type=f"multipart/form-data; boundary={BOUNDARY}", length=length
    )
    answer = _send(server, head, _pieces(start, HUGE, end=end), chunked=chunked)
    assert answer.status == 413, answer.text[:300]
    assert "at most 5.1 MB can be sent at once" in answer.text
    assert answer.sent < HUGE, "the whole body was sent before the answer"
    # Streamed, the body is read up to the cap (5.1 MB) and no further.
    limit = 6 * MIB if chunked else MIB
    assert answer.server_read < limit, f"the server read {answer.server_read} bytes ({answer.sent} sent)"
    assert _log_problems(server) == []
    # The server is fine: the next request is served.
    assert httpx.get(f"http://127.0.0.1:{server.port}/rounds/generate/", timeout=10).status_code == 200
