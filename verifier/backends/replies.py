"""Reading a model server's reply without trusting its encoding or its size.

Every client here asks for `Accept-Encoding: identity` and nothing is ever decompressed. A compressed reply is
refused from its headers, before a byte of its body is read: a decompression bomb then costs its compressed
size, and no decoding step can hold the event loop past a call's deadline. Bodies are counted as they come
off the socket and cut at a cap.

`guarded_http_client` applies this below the openai SDK (the `llm` gate backend and the writer), where the
SDK itself reads error bodies and Server-Sent Events; System One's own client reads raw bytes directly.
"""

from collections.abc import AsyncIterator, Mapping
from typing import Any

import httpx2
import openai

IDENTITY = "identity"
# An error reply's body is only read for its message: longer ones are cut there, encoded ones dropped.
ERROR_BODY_CAP = 64 * 1024


class ReplyRefused(Exception):
    """The reply cannot be read safely; `reason` is a short code (e.g. `encoded_body`, `body_too_large`)."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(f"{reason}: {message}")
        self.reason = reason
        self.message = message


def content_codings(headers: Any) -> list[str]:
    """The reply's content codings other than identity, as listed (httpx and httpx2 headers alike)."""
    values = headers.get_list("content-encoding", split_commas=True)
    codings = [value.strip().lower() for value in values]
    return [coding for coding in codings if coding and coding != IDENTITY]


def refuse_encoded(headers: Any) -> None:
    codings = content_codings(headers)
    if codings:
        raise ReplyRefused("encoded_body", f"Content-Encoding: {', '.join(codings)[:80]}; only identity is read")


def refuse_declared_over(headers: Mapping[str, str], *, cap: int) -> None:
    declared = headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > cap:
        raise ReplyRefused("body_too_large", f"declared {declared} bytes, cap {cap}")


class _CappedStream(httpx2.AsyncByteStream):
    """The raw body, ended at `cap` bytes: by a ReplyRefused, or (`truncate`) by stopping there."""

    def __init__(self, inner: httpx2.AsyncByteStream, *, cap: int, truncate: bool) -> None:
        self._inner = inner
        self._cap = cap
        self._truncate = truncate

    async def __aiter__(self) -> AsyncIterator[bytes]:
        seen = 0
        async for chunk in self._inner:
            seen += len(chunk)
            if seen > self._cap:
                if not self._truncate:
                    raise ReplyRefused("body_too_large", f"more than {self._cap} bytes")
                kept = len(chunk) - (seen - self._cap)
                if kept > 0:
                    yield chunk[:kept]
                return
            yield chunk

    async def aclose(self) -> None:
        await self._inner.aclose()


class _EmptyStream(httpx2.AsyncByteStream):
    async def __aiter__(self) -> AsyncIterator[bytes]:
        return
        yield b""


async def _ask_for_identity(request: httpx2.Request) -> None:
    request.headers["Accept-Encoding"] = IDENTITY


def _reply_guard(cap: int):
    async def guard(response: httpx2.Response) -> None:
        # Runs once the headers are in and before anything (the SDK included) reads the body.
        if response.is_success:
            refuse_encoded(response.headers)
            refuse_declared_over(response.headers, cap=cap)
            response.stream = _CappedStream(response.stream, cap=cap, truncate=False)
        elif content_codings(response.headers):
            await response.stream.aclose()
            del response.headers["content-encoding"]
            response.stream = _EmptyStream()
        else:
            response.stream = _CappedStream(response.stream, cap=ERROR_BODY_CAP, truncate=True)

    return guard


def guarded_http_client(
    *, cap: int, timeout: float, follow_redirects: bool, limits: httpx2.Limits | None = None
) -> httpx2.AsyncClient:
    """An openai SDK HTTP client whose replies are never decoded and never longer than `cap` bytes.

    A success reply that is encoded, or longer than `cap`, raises ReplyRefused (the SDK lets it through as
    it is); an error reply keeps its status, with at most ERROR_BODY_CAP bytes of its body.
    """
    options: dict[str, Any] = {"follow_redirects": follow_redirects, "timeout": timeout}
    if limits is not None:
        options["limits"] = limits
    return openai.DefaultAsyncHttpxClient(
        event_hooks={"request": [_ask_for_identity], "response": [_reply_guard(cap)]}, **options
    )
