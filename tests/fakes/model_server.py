"""A scripted model API on loopback: real HTTP/1.1 over a real socket, run in a background thread.

Routes are plain handlers `(request, server) -> Reply`; two ship here (System One and OpenAI-compatible chat
completions with logprobs) and more can be added with `server.route(...)` (e.g. streamed chat completions).
A test scripts behaviour through `server.script`: latency, per-question probabilities and faults.
The server counts requests in flight and remembers the highest count it saw.

The blind question (which option is correct, asked without the marked answer) is a System One request whose
question is of type `choice`, or a chat request whose system message asks for "one letter". It is scripted
per question with `script.choice_texts` (option text -> probability: by content, wherever the option is shown) or
`script.choices` (shown letter -> probability: by position); unscripted, the option the same question's checks
request marked gets `default_probability` and the others share the rest (`default_choice="A"`: option A does,
whatever it is). `blind_fault(s)` and `blind_latenc(y|ies)` apply
to blind requests only, `check_faults` to the other requests only; `fault(s)` and `latenc(y|ies)` to every request.

A chat request whose system message asks for "one JSON object" is the `judge` backend's: it is answered with a
JSON report in the message text (no logprobs), scripted with the same probabilities and choices, and
`judge_claims`, `judge_fix`, `judge_option`, `judge_reply` (how the report is written: clean, fenced, in prose,
a field missing, 11, "0.9", cut at the completion limit...), `refuse_formats` (response_format types answered
with HTTP 400), `refuse_temperature` and `reasoning_tokens`.
"""

import asyncio
import contextlib
import gzip
import json
import math
import socket
import struct
import threading
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

from tests.fakes import bombs

SCHEMA_DIR = Path(__file__).resolve().parent / "schemas"
SYSTEMONE_REQUEST_SCHEMA = json.loads((SCHEMA_DIR / "system-one-request-v1.schema.json").read_text())
SYSTEMONE_RESPONSE_SCHEMA = json.loads((SCHEMA_DIR / "system-one-response-v1.schema.json").read_text())
_request_validator = Draft202012Validator(SYSTEMONE_REQUEST_SCHEMA)
_response_validator = Draft202012Validator(SYSTEMONE_RESPONSE_SCHEMA)

FAULTS = (
    "500",
    "429",
    "302",
    "non_json",
    "truncated",
    "missing_answers",
    "missing_question",
    "missing_probability",
    "not_a_number",
    "nan",
    "out_of_range",
    "huge",
    "huge_chunked",
    "trickle",
    "close",
    "no_logprobs",
    # Compressed replies (each decodes to bombs.BOMB_DECODED_BYTES of zeros, unless named otherwise).
    "gzip_gzip_bomb",
    "gzip_bomb",
    "deflate_bomb",
    "br_encoded",
    "gzip_small",
    "gzip_bomb_500",
    # A well-formed JSON body nested DEEP_NESTING levels deep (past any recursive parser's limit).
    "deep_nesting",
    # The reply's headers and half its body, then the connection is reset (RST): a connection lost mid-body.
    "reset_mid_body",
)
HUGE_BYTES = 2 * 1024 * 1024
DEEP_NESTING = 100_000
REASONS = {200: "OK", 302: "Found", 400: "Bad Request", 401: "Unauthorized", 404: "Not Found", 422: "Unprocessable"}


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class Reply:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str = "application/json"
    # Announce this Content-Length but send only half the body, then close: a truncated reply.
    truncate: bool = False
    # Send the body with chunked transfer encoding (no Content-Length), `chunk_delay` seconds between chunks;
    # an endless iterator sends until the client goes away.
    chunks: Iterable[bytes] | None = None
    chunk_delay: float = 0.0
    # Send the body one byte at a time, this many seconds apart.
    trickle_delay: float | None = None
    # Close the connection without answering at all.
    close_without_reply: bool = False
    # Announce the whole body, send half of it, then reset the connection (a lost connection, not a clean close).
    reset_mid_body: bool = False

    @classmethod
    def json(cls, data: Any, status: int = 200, headers: dict[str, str] | None = None) -> "Reply":
        return cls(status=status, body=json.dumps(data).encode(), headers=headers or {})


@dataclass
class Script:
    """What the server does for the current test. Keys of `probabilities`, `faults` and `latencies` are
    substrings looked for in the request's document (System One) or its last user message (chat)."""

    latency: float = 0.0
    latencies: dict[str, float] = field(default_factory=dict)
    fault: str | None = None
    faults: dict[str, str] = field(default_factory=dict)
    # Faults for the checks' requests only (not the blind question's).
    check_faults: dict[str, str] = field(default_factory=dict)
    # A float applies to every check of that question; a dict maps a System One question name, or a
    # substring of a chat prompt, to the probability of "true"/"Yes".
    probabilities: dict[str, float | dict[str, float]] = field(default_factory=dict)
    default_probability: float = 0.9
    expected_api_key: str | None = None
    # The model id the replies say served them; None echoes the one asked for (a server that moved answers
    # with its own id, and a local OpenAI-compatible server answers any name with its own).
    served_model: str | None = None
    trickle_delay: float = 0.05
    # Chat completions: which tokens carry the Yes and No mass, and how much of the total they hold.
    yes_tokens: tuple[str, ...] = ("Yes",)
    no_tokens: tuple[str, ...] = ("No",)
    yes_no_mass: float = 0.98
    # Chat completions: send exactly these (token, logprob) pairs as top_logprobs.
    top_logprobs: list[tuple[str, float]] | None = None
    # The blind question: per question (substring), a letter or {letter: probability}; a letter means that
    # option gets `default_probability`. A letter left out of a dict is left out of the reply.
    choices: dict[str, str | dict[str, float]] = field(default_factory=dict)
    # Unscripted, the blind checker answers the option the checks' request of the same question marked (a
    # checker that knows the right option, wherever it is shown); a letter here answers by position instead
    # ("A": a checker that always says A, whatever A is).
    default_choice: str | None = None
    blind_fault: str | None = None
    blind_faults: dict[str, str] = field(default_factory=dict)
    blind_latency: float | None = None
    blind_latencies: dict[str, float] = field(default_factory=dict)
    # Chat completions of the blind question: how a letter is written as a token ("{}" -> "B", " {}" -> " B"),
    # how much of the total mass the letters hold, or exactly these (token, logprob) pairs.
    letter_format: str = "{}"
    letter_mass: float = 0.97
    blind_top_logprobs: list[tuple[str, float]] | None = None
    # The judge backend's reports (see the module docstring and JUDGE_REPLIES).
    judge_claims: list[str] = field(default_factory=list)
    judge_fix: str = ""
    judge_option: str | None = None
    judge_reply: str = "clean"
    judge_replies: dict[str, str] = field(default_factory=dict)
    refuse_formats: frozenset[str] = frozenset()
    refuse_temperature: bool = False
    reasoning_tokens: int | None = None
    # The reply's usage: reported as counted (False: System One's counts, or a chat reply's `usage`, left out), or
    # replaced by `usage_override` (nonsense
    # counts, say). Every usage sent is kept in `usage_sent` as (kind "check" or "blind", usage).
    report_usage: bool = True
    usage_override: dict[str, Any] | None = None
    usage_sent: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    def systemone_usage(self, kind: str, counted: dict[str, Any]) -> dict[str, Any]:
        """The reply's `usage`: the published schema requires the object, its counts may be left out."""
        if not self.report_usage:
            return {}
        usage = dict(self.usage_override) if self.usage_override is not None else counted
        self.usage_sent.append((kind, usage))
        return usage

    def judge_reply_for(self, text: str) -> str:
        return self._match(self.judge_replies, text) or self.judge_reply

    # The blind question answered by content, whatever order the options are shown in: per question (substring),
    # {option text: probability}; an option not named gets 0. Checked before `choices` (see choice_by_text).
    choice_texts: dict[str, dict[str, float]] = field(default_factory=dict)
    # A checker that knows the answers: question text -> (the right option's text, the true explanation). A
    # question found here is answered by content: the marked option and the explanation get `oracle_high` when
    # they are the right ones and `oracle_low` when not, and the blind question names the right option.
    oracle: dict[str, tuple[str, str]] = field(default_factory=dict)
    oracle_high: float = 0.95
    oracle_low: float = 0.05

    def oracle_probability(self, text: str, check: str) -> float | None:
        """What the oracle says about this check of the question in `text` (a document as JSON, or a chat prompt
        holding one); None when the question is not the oracle's."""
        document = _document_of(text)
        if not isinstance(document, dict) or str(document.get("question", "")) not in self.oracle:
            return None
        right, explanation = self.oracle[str(document["question"])]
        if "explanation_true" in check or "claim in the explanation" in check:
            return self.oracle_high if str(document.get("explanation", "")) == explanation else self.oracle_low
        options = document.get("options") if isinstance(document.get("options"), dict) else {}
        letter = str(document.get("marked_correct_option", "")).split(".", 1)[0]
        return self.oracle_high if options.get(letter) == right else self.oracle_low

    def oracle_choice(self, text: str) -> dict[str, float] | None:
        document = _document_of(text)
        if not isinstance(document, dict) or str(document.get("question", "")) not in self.oracle:
            return None
        right = self.oracle[str(document["question"])][0]
        return {right: self.oracle_high}

    def _match(self, table: dict[str, Any], text: str) -> Any:
        for needle, value in table.items():
            if needle in text:
                return value
        return None

    def latency_for(self, text: str) -> float:
        value = self._match(self.latencies, text)
        return self.latency if value is None else value

    def fault_for(self, text: str) -> str | None:
        return self._match(self.faults, text) or self.fault

    def check_fault_for(self, text: str) -> str | None:
        return self._match(self.check_faults, text) or self.fault_for(text)

    def blind_fault_for(self, text: str) -> str | None:
        return self._match(self.blind_faults, text) or self.blind_fault or self.fault_for(text)

    def blind_latency_for(self, text: str) -> float:
        value = self._match(self.blind_latencies, text)
        if value is not None:
            return value
        return self.blind_latency if self.blind_latency is not None else self.latency_for(text)

    def choice_for(
        self, text: str, letters: list[str], options: dict[str, str] | None = None, known: str | None = None
    ) -> dict[str, float]:
        """The blind answer's probability per option letter for the question in `text`; `options` (shown letter
        -> option text) lets `choice_texts` answer by content, and `known` (the marked option's text) the
        unscripted default."""
        options = options or {}
        oracle = self.oracle_choice(text)
        if oracle is not None and options:
            return {letter: float(oracle.get(option, 0.0)) for letter, option in options.items()}
        by_text = choice_by_text(self.choice_texts, text, options)
        if by_text is not None:
            return by_text
        value = self._match(self.choices, text)
        if isinstance(value, dict):
            return {letter: float(p) for letter, p in value.items()}
        known_at = next((letter for letter, option in options.items() if option == known), None)
        picked = value if isinstance(value, str) else (self.default_choice or known_at or "A")
        others = [letter for letter in letters if letter != picked]
        rest = (1 - self.default_probability) / len(others) if others else 0.0
        return {letter: (self.default_probability if letter == picked else rest) for letter in letters}

    def probability_for(self, text: str, check: str) -> float:
        if self.oracle and (known := self.oracle_probability(text, check)) is not None:
            return known
        value = self._match(self.probabilities, text)
        if value is None:
            return self.default_probability
        if isinstance(value, dict):
            found = value.get(check)
            if found is None:
                found = self._match(value, check)
            return self.default_probability if found is None else found
        return value


def _document_of(text: str) -> Any:
    """The question document in a System One request's document (JSON) or a chat prompt (a ```json block)."""
    try:
        return json.loads(text)
    except ValueError:
        return document_in(text)


def choice_by_text(table: dict[str, dict[str, float]], text: str, options: dict[str, str]) -> dict[str, float] | None:
    """A checker that knows the options by their text: the scripted probability of each option, at whatever letter
    it is shown. None when `table` scripts nothing for this question."""
    for needle, by_option in table.items():
        if needle in text and options:
            return {letter: float(by_option.get(option, 0.0)) for letter, option in options.items()}
    return None


def marked_text(document: Any) -> tuple[str, str] | None:
    """(question, marked option's text) from a checks' document, or None (a blind or unreadable one)."""
    try:
        label = str(document["marked_correct_option"]).split(".", 1)[0]
        return str(document["question"]), str(document["options"][label])
    except (KeyError, TypeError, IndexError):
        return None


async def known_answer(server: "ModelServer", question: str, *, wait: float = 0.3) -> str | None:
    """The marked option of `question` as its checks' request showed it; the gate sends both at once, so the
    blind request may arrive a moment before."""
    deadline = time.monotonic() + wait
    while question not in server.marked and (left := deadline - time.monotonic()) > 0:
        seen = server.marked_seen
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(seen.wait(), left)
    return server.marked.get(question)


def remember_marked(server: "ModelServer", document: Any) -> None:
    marked = marked_text(document)
    if marked is not None:
        server.marked[marked[0]] = marked[1]
        seen, server.marked_seen = server.marked_seen, asyncio.Event()
        seen.set()


def document_in(prompt: str) -> Any:
    try:
        return json.loads(prompt.split("```json\n", 1)[1].split("\n```", 1)[0])
    except (IndexError, ValueError):
        return None


def options_in(prompt: str) -> dict[str, str]:
    """The shown options (letter -> text) of the JSON document in a chat prompt; {} when it cannot be read."""
    try:
        document = json.loads(prompt.split("```json\n", 1)[1].split("\n```", 1)[0])
        return {str(letter): str(text) for letter, text in document["options"].items()}
    except (IndexError, ValueError, KeyError, TypeError, AttributeError):
        return {}


Handler = Callable[[Request, "ModelServer"], Awaitable[Reply]]


class ModelServer:
    def __init__(self) -> None:
        self.script = Script()
        self.requests: list[Request] = []
        self.schema_errors: list[str] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self.port = 0
        # question text -> the marked option's text, as the checks' requests showed it (the blind default).
        self.marked: dict[str, str] = {}
        self.marked_seen = asyncio.Event()
        self._routes: dict[tuple[str, str], Handler] = {
            ("POST", "/v1/systemone"): systemone_handler,
            ("POST", "/v1/chat/completions"): chat_completions_handler,
        }
        self._lock = threading.Lock()
        self._ready = threading.Event()
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def route(self, method: str, path: str, handler: Handler) -> None:
        self._routes[(method.upper(), path)] = handler

    def requests_to(self, path: str) -> list[Request]:
        with self._lock:
            return [request for request in self.requests if request.path == path]

    def check_requests(self, path: str = "/v1/systemone") -> list[Request]:
        """Requests that asked the checks (not the blind question)."""
        return [request for request in self.requests_to(path) if not is_blind_request(request)]

    def blind_requests(self, path: str = "/v1/systemone") -> list[Request]:
        return [request for request in self.requests_to(path) if is_blind_request(request)]

    def reset_counters(self) -> None:
        with self._lock:
            self.requests.clear()
            self.max_in_flight = self.in_flight

    def start(self) -> "ModelServer":
        self._thread = threading.Thread(target=asyncio.run, args=(self._main(),), name="model-server", daemon=True)
        self._thread.start()
        if not self._ready.wait(5):
            raise RuntimeError("the model server did not start")
        return self

    def stop(self) -> None:
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        if self._thread is not None:
            self._thread.join(5)

    async def _main(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        server = await asyncio.start_server(self._connection, "127.0.0.1", 0)
        self.port = server.sockets[0].getsockname()[1]
        self._ready.set()
        await self._stop.wait()
        server.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await server.wait_closed()

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            first = await reader.read(1)
            if first == b"\x16":
                # A TLS ClientHello on this plain-HTTP port: answer in plain text, as real servers do.
                writer.write(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
                await writer.drain()
                return
            prefix = first
            while prefix:
                request = await _read_request(reader, prefix)
                prefix = b""
                if request is None:
                    return
                if not await self._answer(request, reader, writer):
                    return
                prefix = await reader.read(1)
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
            return
        finally:
            self._tasks.discard(task)
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _answer(self, request: Request, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        with self._lock:
            self.requests.append(request)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            handler = self._routes.get((request.method, request.path))
            if handler is None:
                reply = Reply.json({"error": f"no route {request.method} {request.path}"}, 404)
            else:
                reply = await handler(request, self)
                delay = reply.headers.pop("x-fake-latency", None)
                if delay and not await _sleep_unless_gone(reader, float(delay)):
                    return False
            return await _write_reply(reader, writer, reply)
        finally:
            with self._lock:
                self.in_flight -= 1


async def _read_request(reader: asyncio.StreamReader, prefix: bytes) -> Request | None:
    try:
        head = prefix + await reader.readuntil(b"\r\n\r\n")
    except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
        return None
    lines = head.decode("latin-1").split("\r\n")
    method, target, _version = lines[0].split(" ", 2)
    headers = {}
    for line in lines[1:]:
        if ":" in line:
            name, value = line.split(":", 1)
            headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length", "0") or 0)
    body = await reader.readexactly(length) if length else b""
    return Request(method=method.upper(), path=target.split("?", 1)[0], headers=headers, body=body)


async def _sleep_unless_gone(reader: asyncio.StreamReader, seconds: float) -> bool:
    """Wait as a slow model would, but notice a client that gave up (so it stops counting as in flight)."""
    eof = asyncio.ensure_future(reader.read(1))
    try:
        done, _ = await asyncio.wait({eof}, timeout=seconds)
    finally:
        if not eof.done():
            eof.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await eof
    return not (done and eof.result() == b"")


async def _write_reply(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, reply: Reply) -> bool:
    """Write one response; False when the connection must close afterwards (or the client went away)."""
    if reply.close_without_reply:
        return False
    head = [f"HTTP/1.1 {reply.status} {REASONS.get(reply.status, 'Status')}"]
    headers = {"content-type": reply.content_type, **reply.headers}
    keep_open = not (reply.truncate or reply.trickle_delay or reply.reset_mid_body)
    if reply.chunks is not None:
        headers["transfer-encoding"] = "chunked"
    else:
        headers["content-length"] = str(len(reply.body))
    headers["connection"] = "keep-alive" if keep_open else "close"
    head += [f"{name}: {value}" for name, value in headers.items()]
    writer.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1"))
    await writer.drain()
    if reply.chunks is not None:
        for chunk in reply.chunks:
            if reply.chunk_delay:
                await asyncio.sleep(reply.chunk_delay)
            if reader.at_eof():
                return False
            writer.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
            await writer.drain()
        writer.write(b"0\r\n\r\n")
    elif reply.truncate or reply.reset_mid_body:
        writer.write(reply.body[: len(reply.body) // 2])
        if reply.reset_mid_body:
            await writer.drain()
            _reset(writer)
            return False
    elif reply.trickle_delay:
        for index in range(len(reply.body)):
            if reader.at_eof():
                return False
            writer.write(reply.body[index : index + 1])
            await writer.drain()
            # Notice at once a client that gave up, so it stops counting as in flight.
            if not await _sleep_unless_gone(reader, reply.trickle_delay):
                return False
    else:
        writer.write(reply.body)
    await writer.drain()
    return keep_open


def _reset(writer: asyncio.StreamWriter) -> None:
    """Drop the connection with a TCP reset (SO_LINGER 0), as a crashed server or a middlebox does."""
    sock = writer.get_extra_info("socket")
    if sock is not None:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.transport.abort()


def _with_latency(reply: Reply, latency: float) -> Reply:
    if latency > 0:
        reply.headers["x-fake-latency"] = str(latency)
    return reply


def _generic_fault(fault: str, good: bytes, script: Script) -> Reply | None:
    if fault == "500":
        return Reply.json({"error": {"message": "internal error"}}, 500)
    if fault == "429":
        return Reply.json({"error": {"message": "rate limited"}}, 429, headers={"retry-after": "1"})
    if fault == "302":
        return Reply(status=302, headers={"location": "/elsewhere"}, content_type="text/plain")
    if fault == "non_json":
        return Reply(body=b"<html><body>Bad gateway</body></html>", content_type="text/html")
    if fault == "truncated":
        return Reply(body=good, truncate=True)
    if fault == "close":
        return Reply(close_without_reply=True)
    if fault == "reset_mid_body":
        return Reply(body=good, reset_mid_body=True)
    if fault == "deep_nesting":
        return Reply(body=b"[" * DEEP_NESTING + b"]" * DEEP_NESTING)
    if fault == "trickle":
        return Reply(body=good, trickle_delay=script.trickle_delay)
    if fault == "gzip_gzip_bomb":
        return Reply(body=bombs.gzip_bomb(layers=2), headers={"content-encoding": "gzip, gzip"})
    if fault == "gzip_bomb":
        return Reply(body=bombs.gzip_bomb(), headers={"content-encoding": "gzip"})
    if fault == "deflate_bomb":
        return Reply(body=bombs.deflate_bomb(), headers={"content-encoding": "deflate"})
    if fault == "br_encoded":
        # Brotli is not installed here, so the body is just bytes; a client must refuse it from its header.
        return Reply(body=b"\x1b\xff\xff" * 512, headers={"content-encoding": "br"})
    if fault == "gzip_small":
        # A well-formed answer, merely compressed: refused all the same (nothing is ever decoded).
        return Reply(body=gzip.compress(good), headers={"content-encoding": "gzip"})
    if fault == "gzip_bomb_500":
        return Reply(status=500, body=bombs.gzip_bomb(), headers={"content-encoding": "gzip"})
    if fault in ("huge", "huge_chunked"):
        padded = good[:-1] + b', "padding": "' + b"x" * HUGE_BYTES + b'"}'
        if fault == "huge":
            return Reply(body=padded)
        return Reply(chunks=[padded[i : i + 65536] for i in range(0, len(padded), 65536)])
    return None


async def systemone_handler(request: Request, server: ModelServer) -> Reply:
    script = server.script
    try:
        body = request.json()
    except ValueError:
        server.schema_errors.append("systemone: the request body is not JSON")
        return Reply.json({"error": "not JSON"}, 422)
    errors = sorted(_request_validator.iter_errors(body), key=lambda error: list(error.path))
    if errors:
        server.schema_errors.extend(f"systemone: {'/'.join(map(str, e.path)) or '<root>'}: {e.message}" for e in errors)
        return Reply.json({"error": "request does not match system-one-request-v1", "detail": errors[0].message}, 422)
    auth = request.headers.get("authorization", "")
    if not auth.startswith("Bearer ") or (script.expected_api_key and auth != f"Bearer {script.expected_api_key}"):
        return Reply.json({"error": "unauthorized"}, 401)
    document_text = json.dumps(body["document"], ensure_ascii=False)
    if any(question["type"] == "choice" for question in body["questions"].values()):
        known = None
        scripted = script._match(script.choice_texts, document_text) or script._match(script.choices, document_text)
        if script.default_choice is None and scripted is None and isinstance(body["document"], dict):
            known = await known_answer(server, str(body["document"].get("question", "")))
        return _systemone_choice(body, document_text, script, known)
    remember_marked(server, body["document"])
    names = list(body["questions"])
    answers: dict[str, Any] = {
        name: {"type": "noul", "noul": script.probability_for(document_text, name)} for name in names
    }
    reply_data: dict[str, Any] = {"model": script.served_model or body["model"], "answers": answers}
    reply_data["usage"] = script.systemone_usage(
        "check", {"input_tokens": 100 + len(document_text) // 4, "output_tokens": 2 * len(names)}
    )
    fault = script.check_fault_for(document_text)
    if fault == "missing_answers":
        del reply_data["answers"]
    elif fault == "missing_question":
        del answers[names[-1]]
    elif fault == "missing_probability":
        del answers[names[0]]["noul"]
    elif fault == "not_a_number":
        answers[names[0]]["noul"] = "0.9"
    elif fault == "nan":
        answers[names[0]]["noul"] = math.nan
    elif fault == "out_of_range":
        answers[names[0]]["noul"] = 1.5
    elif fault is None:
        response_errors = list(_response_validator.iter_errors(reply_data))
        assert not response_errors, f"the fake's own reply breaks the response schema: {response_errors[0].message}"
    good = json.dumps(reply_data).encode()
    reply = (fault and _generic_fault(fault, good, script)) or Reply(body=good)
    return _with_latency(reply, script.latency_for(document_text))


def _systemone_choice(body: dict[str, Any], document_text: str, script: Script, known: str | None) -> Reply:
    """Every `choice` question answered with the scripted probabilities over its criteria keys."""
    answers: dict[str, Any] = {}
    for name, question in body["questions"].items():
        if question["type"] != "choice":
            answers[name] = {"type": "noul", "noul": script.probability_for(document_text, name)}
            continue
        keys = list(question["criteria"])
        criteria = {key: str(value) for key, value in question["criteria"].items()}
        probabilities = {
            key: p for key, p in script.choice_for(document_text, keys, criteria, known).items() if key in keys
        }
        pick = max(probabilities, key=probabilities.get) if probabilities else keys[0]
        answers[name] = {
            "type": "choice",
            "choice": pick,
            "confidence": probabilities.get(pick, 0.0),
            "probabilities": probabilities,
        }
    names = list(answers)
    first = answers[names[0]]
    reply_data: dict[str, Any] = {"model": script.served_model or body["model"], "answers": answers}
    reply_data["usage"] = script.systemone_usage(
        "blind", {"input_tokens": 100 + len(document_text) // 4, "output_tokens": 2 * len(names)}
    )
    fault = script.blind_fault_for(document_text)
    first_key = next(iter(first.get("probabilities") or {}), None)
    if fault == "missing_answers":
        del reply_data["answers"]
    elif fault == "missing_question":
        del answers[names[-1]]
    elif fault == "missing_probability":
        first.pop("probabilities", None)
    elif fault in ("not_a_number", "nan", "out_of_range") and first_key is not None:
        first["probabilities"][first_key] = {"not_a_number": "0.9", "nan": math.nan, "out_of_range": 1.5}[fault]
    elif fault is None:
        response_errors = list(_response_validator.iter_errors(reply_data))
        assert not response_errors, f"the fake's own reply breaks the response schema: {response_errors[0].message}"
    good = json.dumps(reply_data).encode()
    reply = (fault and _generic_fault(fault, good, script)) or Reply(body=good)
    return _with_latency(reply, script.blind_latency_for(document_text))


def _top_logprobs(script: Script, probability: float) -> list[dict[str, Any]]:
    if script.top_logprobs is not None:
        pairs = script.top_logprobs
    else:
        yes_share = probability * script.yes_no_mass / len(script.yes_tokens)
        no_share = (1 - probability) * script.yes_no_mass / len(script.no_tokens)
        pairs = [(token, yes_share) for token in script.yes_tokens] + [(token, no_share) for token in script.no_tokens]
        rest = 1 - script.yes_no_mass
        pairs += [("Maybe", rest / 2), ("The", rest / 2)]
        pairs = [(token, math.log(mass)) for token, mass in pairs if mass > 0]
    pairs = sorted(pairs, key=lambda pair: pair[1], reverse=True)[:20]
    return [{"token": token, "logprob": logprob, "bytes": list(token.encode())} for token, logprob in pairs]


def _letters_in(prompt: str) -> list[str]:
    """The option letters of the JSON document in a blind prompt (A-D when it cannot be read)."""
    try:
        document = json.loads(prompt.split("```json\n", 1)[1].split("\n```", 1)[0])
        return list(document["options"])
    except (IndexError, ValueError, KeyError, TypeError):
        return ["A", "B", "C", "D"]


def _letter_logprobs(script: Script, prompt: str, known: str | None = None) -> list[dict[str, Any]]:
    if script.blind_top_logprobs is not None:
        pairs = script.blind_top_logprobs
    else:
        choice = script.choice_for(prompt, _letters_in(prompt), options_in(prompt), known)
        pairs = [(script.letter_format.format(letter), p * script.letter_mass) for letter, p in choice.items()]
        rest = 1 - script.letter_mass
        pairs += [("The", rest / 2), ("Option", rest / 2)]
        pairs = [(token, math.log(mass)) for token, mass in pairs if mass > 0]
    pairs = sorted(pairs, key=lambda pair: pair[1], reverse=True)[:20]
    return [{"token": token, "logprob": logprob, "bytes": list(token.encode())} for token, logprob in pairs]


def is_blind_request(request: Request) -> bool:
    try:
        body = request.json()
    except ValueError:
        return False
    if not isinstance(body, dict):
        return False
    if request.path == "/v1/systemone":
        questions = body.get("questions")
        return isinstance(questions, dict) and any(
            isinstance(q, dict) and q.get("type") == "choice" for q in questions.values()
        )
    return is_letter_request(body)


def is_letter_request(body: dict[str, Any]) -> bool:
    system = next((m.get("content", "") for m in body.get("messages", []) if m.get("role") == "system"), "")
    return isinstance(system, str) and "one letter" in system


def is_judge_request(body: dict[str, Any]) -> bool:
    system = next((m.get("content", "") for m in body.get("messages", []) if m.get("role") == "system"), "")
    return isinstance(system, str) and "one JSON object" in system


# The checks a judge prompt can ask about, in the order a report lists them.
JUDGE_CHECKS = (
    "answer_correct",
    "explanation_true",
    "supported",
    "answers_question",
    "unsupported_detail",
    "contradiction",
)
# How a scripted judge writes its report (`Script.judge_reply`).
JUDGE_REPLIES = (
    "clean",  # the JSON object alone
    "fenced",  # inside a ```json fence, with a line before it
    "prose",  # inside a sentence, braces in the prose around it
    "missing_probability",  # the first check's probability left out
    "missing_claims",  # unsupported_claims and suggested_fix left out
    "eleven",  # 11 for the first check (a 0-10 scale)
    "string",  # "0.9" (text) for the first check
    "nan",  # NaN for the first check
    "truncated",  # cut mid-object at the completion limit (finish_reason "length")
    "thought_out",  # no text at all: a reasoning model that spent every token thinking
    "no_json",  # prose only
    "refusal",  # an empty message with a refusal
    "deep_nesting",  # the message text a JSON array nested DEEP_NESTING levels deep
)


def _judge_checks_in(prompt: str) -> list[str]:
    return [name for name in JUDGE_CHECKS if f'"{name}"' in prompt]


async def judge_handler(body: dict[str, Any], prompt: str, server: ModelServer) -> Reply:
    script = server.script
    blind = is_letter_request(body)
    document = document_in(prompt)
    if not blind:
        # Even a request refused below has shown the marked option: the blind default may go by it at once.
        remember_marked(server, document)
    fmt = (body.get("response_format") or {}).get("type", "text")
    if fmt in script.refuse_formats:
        message = f"response_format type {fmt!r} is not supported by this server"
        return Reply.json({"error": {"message": message, "type": "invalid_request_error"}}, 400)
    if script.refuse_temperature and "temperature" in body:
        message = "Unsupported value: 'temperature' does not support 0 with this model. Only the default (1) is."
        return Reply.json({"error": {"message": message, "type": "invalid_request_error"}}, 400)
    if "max_tokens" in body:
        server.schema_errors.append("judge: max_tokens sent (reasoning models take max_completion_tokens)")
    if blind:
        letters = _letters_in(prompt)
        # Unscripted, the judge knows the answer the question's report request marked, wherever it is shown.
        known = None
        scripted = script._match(script.choice_texts, prompt) or script._match(script.choices, prompt)
        if script.default_choice is None and scripted is None and isinstance(document, dict):
            known = await known_answer(server, str(document.get("question", "")))
        choice = script.choice_for(prompt, letters, options_in(prompt), known)
        pick = max(choice, key=choice.get)
        report: dict[str, Any] = {"answer": pick, "probability": choice[pick]}
        checks = ["probability"]
    else:
        checks = _judge_checks_in(prompt)
        report = {name: script.probability_for(prompt, name) for name in checks}
        report.update(
            unsupported_claims=list(script.judge_claims),
            suggested_fix=script.judge_fix,
            suggested_option=script.judge_option,
        )
    if fmt == "json_schema":
        schema = body["response_format"]["json_schema"]["schema"]
        errors = list(Draft202012Validator(schema).iter_errors(report))
        if errors:
            server.schema_errors.append(f"judge: the scripted report breaks the request's schema: {errors[0].message}")
    style = script.judge_reply_for(prompt)
    first = "probability" if blind else (checks[0] if checks else "answer_correct")
    if style == "missing_probability":
        report.pop(first, None)
    elif style == "missing_claims":
        report.pop("unsupported_claims", None)
        report.pop("suggested_fix", None)
    elif style == "eleven":
        report[first] = 11
    elif style == "string":
        report[first] = "0.9"
    text = json.dumps(report, allow_nan=True)
    if style == "nan":
        text = text.replace(json.dumps(report[first]), "NaN", 1)
    finish = "stop"
    refusal = None
    if style == "fenced":
        text = f"Here is the report:\n```json\n{json.dumps(report, indent=2)}\n```\n"
    elif style == "prose":
        text = f"Sure {{as asked}}: the report is {text} and that is all."
    elif style == "truncated":
        text, finish = text[: len(text) // 2], "length"
    elif style == "thought_out":
        text, finish = "", "length"
    elif style == "no_json":
        text = "I think the question is fine."
    elif style == "refusal":
        text, refusal = "", "I can't help with that."
    elif style == "deep_nesting":
        text = "[" * DEEP_NESTING + "]" * DEEP_NESTING
    completion_tokens = max(1, len(text) // 4) + (script.reasoning_tokens or 0)
    usage: dict[str, Any] = {
        "prompt_tokens": 50 + len(prompt) // 4,
        "completion_tokens": completion_tokens,
        "total_tokens": 50 + len(prompt) // 4 + completion_tokens,
    }
    if script.reasoning_tokens is not None:
        usage["completion_tokens_details"] = {"reasoning_tokens": script.reasoning_tokens}
    reply_data = {
        "id": f"chatcmpl-fake-{len(server.requests)}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": script.served_model or body["model"],
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text, "refusal": refusal},
                "logprobs": None,
                "finish_reason": finish,
            }
        ],
        "usage": usage,
    }
    fault = script.blind_fault_for(prompt) if blind else script.check_fault_for(prompt)
    if fault == "missing_answers":
        del reply_data["choices"]
    good = json.dumps(reply_data).encode()
    reply = (fault and _generic_fault(fault, good, script)) or Reply(body=good)
    return _with_latency(reply, script.blind_latency_for(prompt) if blind else script.latency_for(prompt))


async def chat_completions_handler(request: Request, server: ModelServer) -> Reply:
    script = server.script
    try:
        body = request.json()
    except ValueError:
        server.schema_errors.append("chat: the request body is not JSON")
        return Reply.json({"error": {"message": "not JSON"}}, 400)
    messages = body.get("messages") if isinstance(body, dict) else None
    if not isinstance(body.get("model"), str) or not isinstance(messages, list) or not messages:
        server.schema_errors.append("chat: a request needs a model and messages")
        return Reply.json({"error": {"message": "model and messages are required"}}, 400)
    if body.get("stream"):
        return Reply.json({"error": {"message": "this fake route does not stream; register a streaming handler"}}, 400)
    prompt = next((m.get("content", "") for m in reversed(messages) if m.get("role") == "user"), "")
    prompt = prompt if isinstance(prompt, str) else json.dumps(prompt)
    if is_judge_request(body):
        return await judge_handler(body, prompt, server)
    blind = is_letter_request(body)
    document = document_in(prompt)
    known = None
    scripted = script._match(script.choice_texts, prompt) or script._match(script.choices, prompt)
    if blind and script.default_choice is None and scripted is None and isinstance(document, dict):
        known = await known_answer(server, str(document.get("question", "")))
    elif not blind:
        remember_marked(server, document)
    top = (
        _letter_logprobs(script, prompt, known)
        if blind
        else _top_logprobs(script, script.probability_for(prompt, prompt))
    )
    first = dict(top[0]) if top else {"token": "Yes", "logprob": 0.0, "bytes": list(b"Yes")}
    logprobs = {"content": [{**first, "top_logprobs": top}]} if body.get("logprobs") else None
    reply_data: dict[str, Any] = {
        "id": f"chatcmpl-fake-{len(server.requests)}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": script.served_model or body["model"],
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": first["token"]},
                "logprobs": logprobs,
                "finish_reason": "length",
            }
        ],
    }
    chat_usage = {"prompt_tokens": 50 + len(prompt) // 4, "completion_tokens": 1, "total_tokens": 51 + len(prompt) // 4}
    if script.report_usage:
        reply_data["usage"] = dict(script.usage_override) if script.usage_override is not None else chat_usage
        script.usage_sent.append(("blind" if blind else "check", reply_data["usage"]))
    fault = script.blind_fault_for(prompt) if blind else script.check_fault_for(prompt)
    first_top = logprobs["content"][0]["top_logprobs"][0] if logprobs and top else {}
    if fault == "no_logprobs":
        reply_data["choices"][0]["logprobs"] = None
    elif fault == "nan":
        first_top["logprob"] = math.nan
    elif fault == "out_of_range":
        first_top["logprob"] = 0.5
    elif fault == "not_a_number":
        first_top["logprob"] = "-0.1"
    elif fault == "missing_probability":
        first_top.pop("logprob", None)
    elif fault == "missing_answers":
        del reply_data["choices"]
    good = json.dumps(reply_data).encode()
    reply = (fault and _generic_fault(fault, good, script)) or Reply(body=good)
    return _with_latency(reply, script.blind_latency_for(prompt) if blind else script.latency_for(prompt))
