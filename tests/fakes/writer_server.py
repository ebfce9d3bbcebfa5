"""A scripted OpenAI-compatible writer model on loopback, built on `ModelServer` (real HTTP, real sockets).

Streamed chat completions (`"stream": true`) are the writer's: they answer with Server-Sent Events, a few
characters per event, optionally slowly. Every other chat completion goes to the checker's handler, so one
server can play both the writer and an `llm` gate; `/v1/systemone` is there too.

A test scripts the writer through `server.writer`: a queue of `Turn`s (one per request), then `default`;
`server.writer.faults` maps a substring of the prompt to a hostile reply instead (see WRITER_FAULTS).
"""

import gzip
import itertools
import json
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from tests.fakes import bombs
from tests.fakes.model_server import ModelServer, Reply, Request, chat_completions_handler

__all__ = ["Turn", "WriterScript", "WriterServer", "good_question", "kind_question", "mixed", "writer_server"]

ASKED = re.compile(r"Write (\d+) quiz questions")


def good_question(request_number: int, index: int, *, grounded: bool = False) -> dict[str, Any]:
    item: dict[str, Any] = {
        "question": f"Request {request_number} question {index}: which option is right?",
        "options": [f"Right {index}", f"Wrong {index}", f"Other {index}", f"None {index}"],
        "correct_index": 0,
        "explanation": f"Right {index} is right.",
    }
    if grounded:
        item["support"] = f"Sentence {index} of the source says so."
    return item


def _kind_fields(kind: str, request_number: int, index: int) -> dict[str, Any]:
    tag = f"{request_number}.{index}"
    return {
        "single": lambda: {"options": [f"Right {tag}", f"Wrong {tag}", f"Other {tag}"], "correct_index": 0},
        "true_false": lambda: {"answer": index % 3 != 0},
        "multi": lambda: {
            "options": [f"Yes {tag}", f"No {tag}", f"Also {tag}", f"Never {tag}"],
            "correct_indexes": [0, 2],
        },
        "typed": lambda: {"answers": [f"Answer {tag}", f"The answer {tag}"]},
        "order": lambda: {"items": [f"First {tag}", f"Second {tag}", f"Third {tag}"]},
        "number": lambda: {"answer": 1969 + index, "tolerance": 1, "min": 1900, "max": 2100, "unit": "AD"},
        "poll": lambda: {"options": [f"Tea {tag}", f"Coffee {tag}"]},
        "open": lambda: {"max_answers": 2},
        "slide": lambda: {},
    }[kind]()


def kind_question(kind: str, request_number: int, index: int, *, grounded: bool = False) -> dict[str, Any]:
    """A good question of `kind` as a model following the schema writes it: its `kind`, its own fields."""
    item: dict[str, Any] = {
        "kind": kind,
        "question": f"Request {request_number} {kind} question {index}: what is right?",
        **_kind_fields(kind, request_number, index),
        "explanation": f"Question {index} explained.",
    }
    if grounded:
        item["support"] = f"Sentence {index} of the source says so."
    return item


def mixed(*kinds: str) -> Callable[..., dict[str, Any]]:
    """A `make_question` writing the kinds in turn: the first question of the first kind, and so on."""

    def make(request_number: int, index: int, *, grounded: bool = False) -> dict[str, Any]:
        return kind_question(kinds[(index - 1) % len(kinds)], request_number, index, grounded=grounded)

    return make


@dataclass
class Turn:
    """One reply. `content` is the exact text the model writes; `questions` is written as {"questions": [...]};
    with neither, good questions are written for the count the prompt asks for."""

    status: int = 200
    content: str | None = None
    questions: list[dict[str, Any]] | None = None
    error_message: str = "scripted error"
    retry_after: str | None = "0"
    token_delay: float | None = None
    # Seconds before the reply starts (a model thinking before its first token); None: the script's `latency`.
    latency: float | None = None


@dataclass
class WriterScript:
    turns: list[Turn] = field(default_factory=list)
    default: Turn = field(default_factory=Turn)
    # Any request carrying a JSON schema (response_format) is refused with 400, as some servers do.
    reject_schema: bool = False
    # A schema using any of these keywords is refused with 400 naming it, as OpenAI's strict mode refuses some.
    reject_schema_keywords: tuple[str, ...] = ()
    token_delay: float = 0.0
    latency: float = 0.0
    chars_per_token: int = 16
    # (request number, index, grounded) -> one question; replace to script which ones the gate drops.
    make_question: Callable[..., dict[str, Any]] = good_question
    # The model id the stream's chunks say wrote it; None echoes the one asked for (a local server answers any
    # name with its own id).
    served_model: str | None = None
    # A substring of the user prompt -> a hostile reply from WRITER_FAULTS (compressed, endless, ...).
    faults: dict[str, str] = field(default_factory=dict)
    # A request carrying `stream_options` is refused with 400 naming it, as some older servers do; otherwise a
    # stream that asks `include_usage` ends with a usage chunk, as OpenAI's does (prompt: characters / 4).
    reject_stream_options: bool = False
    # False: the stream never carries a usage chunk, asked or not (a server that ignores `include_usage`). Every
    # usage chunk sent is kept in `usage_sent`.
    report_usage: bool = True
    usage_sent: list[dict[str, int]] = field(default_factory=list)
    # Sent in place of the counted usage (nonsense counts, say).
    usage_override: dict[str, Any] | None = None

    def fault_for(self, prompt: str) -> str | None:
        return next((fault for needle, fault in self.faults.items() if needle in prompt), None)

    def next_turn(self) -> Turn:
        return self.turns.pop(0) if self.turns else self.default


class WriterServer(ModelServer):
    def __init__(self) -> None:
        super().__init__()
        self.writer = WriterScript()
        self.writer_bodies: list[dict[str, Any]] = []
        self.stream_started: list[float] = []
        self.route("POST", "/v1/chat/completions", writer_or_checker)

    def user_prompt(self, number: int) -> str:
        messages = self.writer_bodies[number]["messages"]
        return next(m["content"] for m in reversed(messages) if m["role"] == "user")

    def asked(self) -> list[int]:
        return [int(ASKED.search(self.user_prompt(n)).group(1)) for n in range(len(self.writer_bodies))]


def _error(status: int, message: str, headers: dict[str, str] | None = None) -> Reply:
    return Reply.json({"error": {"message": message, "type": "invalid_request_error"}}, status, headers=headers)


def _sse(data: dict[str, Any]) -> bytes:
    return f"data: {json.dumps(data)}\n\n".encode()


async def writer_or_checker(request: Request, server: ModelServer) -> Reply:
    try:
        body = request.json()
    except ValueError:
        return _error(400, "not JSON")
    if not isinstance(body, dict) or not body.get("stream"):
        return await chat_completions_handler(request, server)
    assert isinstance(server, WriterServer)
    return writer_handler(body, server)


def writer_handler(body: dict[str, Any], server: WriterServer) -> Reply:
    script = server.writer
    number = len(server.writer_bodies)
    server.writer_bodies.append(body)
    messages = body.get("messages") or []
    if not isinstance(body.get("model"), str) or not messages:
        return _error(400, "model and messages are required")
    response_format = body.get("response_format") or {}
    if script.reject_schema and response_format.get("type") in ("json_schema", "json_object"):
        return _error(400, "response_format json_schema is not supported by this server")
    refused = [keyword for keyword in script.reject_schema_keywords if f'"{keyword}"' in json.dumps(response_format)]
    if refused:
        return _error(400, f"Invalid schema for response_format 'quiz_round': '{refused[0]}' is not permitted.")
    if script.reject_stream_options and "stream_options" in body:
        return _error(400, "Unrecognized request argument supplied: stream_options")
    prompt = next((m["content"] for m in reversed(messages) if m.get("role") == "user"), "")
    fault = script.fault_for(prompt)
    if fault is not None:
        return writer_fault(fault, body, number)
    turn = script.next_turn()
    if turn.status != 200:
        headers = {"retry-after": turn.retry_after} if turn.status == 429 and turn.retry_after else {}
        return _error(turn.status, turn.error_message, headers)
    grounded = "<<<SOURCE" in prompt
    if turn.content is not None:
        content = turn.content
    else:
        questions = turn.questions
        if questions is None:
            match = ASKED.search(prompt)
            asked = int(match.group(1)) if match else 5
            questions = [script.make_question(number, index, grounded=grounded) for index in range(1, asked + 1)]
        content = json.dumps({"questions": questions}, indent=1)
    server.stream_started.append(time.monotonic())
    created = int(time.time())
    base = {"id": f"chatcmpl-writer-{number}", "object": "chat.completion.chunk", "created": created}
    base["model"] = script.served_model or body["model"]
    step = max(1, script.chars_per_token)
    pieces = [content[i : i + step] for i in range(0, len(content), step)]
    usage = None
    if script.report_usage and (body.get("stream_options") or {}).get("include_usage"):
        prompt_tokens = sum(len(str(m.get("content", ""))) for m in messages) // 4
        usage = {"prompt_tokens": prompt_tokens, "completion_tokens": len(pieces)}
        usage["total_tokens"] = prompt_tokens + len(pieces)
        usage = dict(script.usage_override) if script.usage_override is not None else usage
        script.usage_sent.append(usage)
    chunks = sse_events(base, pieces, usage=usage)
    delay = script.token_delay if turn.token_delay is None else turn.token_delay
    reply = Reply(chunks=chunks, chunk_delay=delay, content_type="text/event-stream")
    latency = script.latency if turn.latency is None else turn.latency
    if latency > 0:
        reply.headers["x-fake-latency"] = str(latency)
    return reply


def _delta(base: dict[str, Any], delta: dict[str, Any], finish: str | None = None) -> bytes:
    return _sse({**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})


def sse_events(base: dict[str, Any], pieces: list[str], *, usage: dict[str, int] | None = None) -> list[bytes]:
    """A whole streamed completion: the role, one event per piece of content, the stop, the usage when asked
    (a chunk with no choices), [DONE]."""
    events = [_delta(base, {"role": "assistant"})]
    events += [_delta(base, {"content": piece}) for piece in pieces]
    events.append(_delta(base, {}, "stop"))
    if usage is not None:
        events.append(_sse({**base, "choices": [], "usage": usage}))
    events.append(b"data: [DONE]\n\n")
    return events


WRITER_FAULTS = (
    "gzip_gzip_bomb",
    "gzip_bomb",
    "deflate_bomb",
    "gzip_sse",
    "endless",
    "endless_line",
    "gzip_bomb_500",
    "endless_500",
    "nested",
    "trickle",
)
NESTING = 5000  # far past Python's recursion limit
# What an endless reply writes first: the start of a round holding this many complete questions.
ENDLESS_COMPLETE = 2


def writer_fault(fault: str, body: dict[str, Any], number: int) -> Reply:
    base = {"id": f"chatcmpl-writer-{number}", "object": "chat.completion.chunk", "created": int(time.time())}
    base["model"] = body["model"]
    sse = "text/event-stream"
    if fault == "gzip_gzip_bomb":
        return Reply(body=bombs.gzip_bomb(layers=2), headers={"content-encoding": "gzip, gzip"}, content_type=sse)
    if fault == "gzip_bomb":
        return Reply(body=bombs.gzip_bomb(), headers={"content-encoding": "gzip"}, content_type=sse)
    if fault == "deflate_bomb":
        return Reply(body=bombs.deflate_bomb(), headers={"content-encoding": "deflate"}, content_type=sse)
    if fault == "gzip_sse":
        whole = b"".join(sse_events(base, [good_reply(3)]))
        return Reply(body=gzip.compress(whole), headers={"content-encoding": "gzip"}, content_type=sse)
    if fault == "endless":
        opening = '{"questions": [' + ", ".join(json.dumps(good_question(number, i)) for i in (1, 2)) + ", "
        filler = _delta(base, {"content": " " * 4000})
        events = itertools.chain([_delta(base, {"content": opening})], itertools.repeat(filler))
        return Reply(chunks=events, content_type=sse)
    if fault == "endless_line":
        return Reply(chunks=itertools.chain([b"data: "], itertools.repeat(b"x" * 65536)), content_type=sse)
    if fault == "gzip_bomb_500":
        return Reply(status=500, body=bombs.gzip_bomb(), headers={"content-encoding": "gzip"})
    if fault == "nested":
        # Two good questions, then one nested deeper than any parser's recursion limit, in one valid reply.
        complete = ", ".join(json.dumps(good_question(number, i)) for i in (1, 2))
        deep = '{"question": [' * NESTING + "0" + "]}" * NESTING
        content = '{"questions": [' + complete + ", " + deep + "]}"
        pieces = [content[i : i + 4096] for i in range(0, len(content), 4096)]
        return Reply(chunks=sse_events(base, pieces), content_type=sse)
    if fault == "trickle":
        # A good reply, one byte every 50 ms: each read is quick, only the job's deadline can stop it.
        return Reply(body=b"".join(sse_events(base, [good_reply(3)])), trickle_delay=0.05, content_type=sse)
    if fault == "endless_500":
        return Reply(status=500, chunks=itertools.repeat(b"x" * 65536), content_type="text/plain")
    raise ValueError(f"unknown writer fault {fault!r}")


def good_reply(count: int, *, start: int = 1) -> str:
    return json.dumps({"questions": [good_question(0, index) for index in range(start, start + count)]})


def iter_chunks(text: str, size: int) -> Iterator[str]:
    for index in range(0, len(text), size):
        yield text[index : index + size]


@pytest.fixture
def writer_server() -> Iterator[WriterServer]:
    server = WriterServer()
    server.start()
    try:
        yield server
    finally:
        server.stop()
    assert not server.schema_errors, "requests broke the published schema:\n" + "\n".join(server.schema_errors)
